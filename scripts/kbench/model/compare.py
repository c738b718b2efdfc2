"""Case-by-case comparison of two sides (kernels).

A side is a set of runs whose reps are pooled per case: usually every run
of one (host, kernel).  Comparing `other` against `base` gives, per case,
the ratio of headline values, its confidence interval and p from one model,
the smallest change it could have detected, and a verdict (see
stats.compare).  The control cases (which no kernel can change) are
compared first: if they moved, the machine changed between the sides and
no case is called faster or slower.
"""
import math
from dataclasses import dataclass, field
from functools import cached_property

from . import decl, defaults, groups as groups_mod, guards, judge, load, runmodel, stats, tables as tables_mod
from .conditions import (COMPARED_CONDITIONS, KERNEL_IDENTITY, RUN_ONLY_KEYS, flatten_meta,  # noqa: F401
                         how_cases_ran, meta_differences)
from .decl import case_sort_key, category_of
from .groups import pool_cases
from .guards import control_moved
from .load import failures
from .runs import merged_meta, most_waiting


@dataclass
class Options:
    min_effect: float = stats.DEFAULT_MIN_EFFECT
    n_boot: int = stats.DEFAULT_BOOT
    seed: int = defaults.DEFAULT_SEED
    level: float = stats.LEVEL
    min_reps: int = stats.DEFAULT_MIN_REPS
    adjust: bool = True
    estimator: str = stats.DEFAULT_ESTIMATOR
    run_noise: object = None        # judge.NoiseMap {host: judge.HostRuns}: the runs that measure each host's run level
    prior: object = None            # drift.DriftPrior: the drift between runs before a host has measured it
    families: str = defaults.DEFAULT_FAMILIES       # the adjustment's families: tables (each summary table's cases one family,
                                    # the other cases another), two (all the tables' cases, the others), one
    alone: bool = True              # a non-primary case that moved alone with one run on a side: inconclusive
                                    # (stats.decide's groups; --flag-alone turns it off)
    relative: bool = True           # cases judged relative to the runs' controls (runmodel's covariates;
                                    # --as-measured turns it off)


class Side:
    """A labelled set of runs with their cases pooled (the values, reps and
    counts a comparison shows); the model itself works on each run's own
    estimates (judge.run_estimates, once per run)."""

    def __init__(self, label, runs, warn=None, cases=None):
        self.label = label
        self.runs = list(runs)
        # cases: already pooled (a group's); one run's own are its pool, not copied
        self.cases = cases if cases is not None else \
            self.runs[0].cases if len(self.runs) == 1 else pool_cases(self.runs, warn)
        # Seeds the side's bootstrap stream (a kernel's own interval): the
        # label too, so that two sides built from copies of one run (same run
        # ids) still resample independently instead of in lockstep.
        self.id = label + "|" + ",".join(sorted(r.run_id for r in self.runs))
        self._boot = {}

    @classmethod
    def from_group(cls, group, warn=None):
        return cls(group.label, group.runs, warn, cases=group.cases or None)

    @property
    def quick(self):
        """Only quick runs (make quick): a check, not a measurement."""
        return bool(self.runs) and all(r.quick for r in self.runs)

    @property
    def meta(self):
        return merged_meta([r.meta for r in self.runs])

    @property
    def n_reps(self):
        keys = set()
        for c in self.cases.values():
            keys.update(c.reps)
        return len(keys)

    def series(self, name, estimator=None):
        c = self.cases.get(name)
        if c is None or not c.reps:
            return None
        return stats.Series.single(c.rep_arrays(), c.metric, name, units=c.rep_units(), estimator=estimator)

    def estimate(self, key, series, opts):
        """The side's estimate of a series over its reps pooled (bootstrap
        standard error), cached by key: a kernel's own value and interval
        (the trend charts), not a comparison's."""
        k = (key, opts.n_boot, opts.seed, opts.estimator)
        e = self._boot.get(k)
        if e is None:
            e = stats.side_estimate(series, opts.n_boot, stats.seeded_rng(opts.seed, self.id, key), opts.estimator)
            self._boot[k] = e
        return e

    def control_names(self):
        return sorted(n for n, c in self.cases.items() if c.control)


NoiseMap = judge.NoiseMap


def noise_of(base_side, other_side, opts):
    """The HostRuns that apply to a comparison of two sides: their host's,
    when both sides ran on one host; else the built-in prior alone (a
    HostRuns without runs), or None without one."""
    hosts = {r.host for r in base_side.runs} | {r.host for r in other_side.runs}
    if opts.run_noise is not None and len(hosts) == 1:
        got = opts.run_noise.get(hosts.pop())
        if got is not None:
            return got
    return judge.HostRuns([], opts.prior) if opts.prior is not None else None


def cell_key(title, label):
    """The key a summary-table cell of several cases is judged under (its
    family_of reads the table's title back from it)."""
    return f"cell:{title}:{label}"


def run_cells(run):
    """{cell key: Series} of the summary-table cells of one run that are
    more than one case (a mean of cases, a difference, a time per event),
    under the key compare_tables gives them, so that the model has each
    run's own estimate of them too.  Made once per run."""
    out = run.__dict__.get("_kbench_cells")
    if out is not None:
        return out
    out = run.__dict__["_kbench_cells"] = {}
    groups = groups_mod.group_runs([run], lambda m: None)
    if len(groups) != 1:
        return out
    g = groups[0]
    for t in tables_mod.build_tables(groups):
        for col in t.columns:
            cell = col.cells.get(g.key)
            if cell is None or (cell.combine is None and not cell.per):
                continue          # one case: its own estimate
            out[cell_key(t.title, col.label)] = cell.series()
    return out


def run_estimates(run, opts):
    """{key: (theta, se)} of one run alone (judge.run_estimates, with the
    summary-table cells): log times as measured."""
    return judge.run_estimates(run, opts, run_cells)


def estimate_runs(runs, opts, history=True):
    """run_estimates of runs and, with history, of their hosts' runs that
    measure the run level (opts.run_noise), at once by worker processes
    where there are CPUs for them (judge.estimate_runs)."""
    more = [r for h in (opts.run_noise or {}).values() for rs in h.lists if len(rs) >= 2 for r in rs] if history else []
    judge.estimate_runs(list({id(r): r for r in list(runs) + more}.values()), opts, run_cells)


def measure_run_noise(run_lists, opts):
    """{host: HostRuns} from lists of runs, each list the replicate runs of
    one kernel under one condition (a compared side, or a kernel's runs
    found elsewhere).  The callers group: two sides of one comparison are
    never one list, even of one kernel (an A/A pair, a run under a known
    slowdown), or their difference would count as drift.  A run in two
    lists counts in the first only; quick runs are left out (their schedule
    differs); a list spanning hosts is split by host, and one spanning
    versions of the suite by version (a benchmark whose operation changed
    between versions would count its change as drift)."""
    seen = set()
    by_host = {}
    for runs in run_lists:
        per_host = {}
        for r in runs:
            if r.quick or (r.host, r.run_id) in seen:
                continue
            seen.add((r.host, r.run_id))
            per_host.setdefault((r.host, (r.meta or {}).get("suite_version")), []).append(r)
        for (host, _), rs in per_host.items():
            by_host.setdefault(host, []).append(rs)
    out = NoiseMap(prior=opts.prior)
    for host, kernels in by_host.items():
        if not any(len(rs) >= 2 for rs in kernels):
            continue
        boot_ids = [(r.meta or {}).get("boot_id") for rs in kernels if len(rs) >= 2 for r in rs]
        out[host] = judge.HostRuns(kernels, opts.prior, len(set(boot_ids)) if all(boot_ids) else None)
    return out


@dataclass
class Row:
    case: str
    category: str
    metric: str
    cmp: stats.Comparison




@dataclass
class MachineShift:
    """The control cases compared between the sides, and what the model
    made of the machine's state: the CPU speed and the memory controls
    (the covariates every case is judged relative to), and the guard: a
    control that moved outside what the host's runs have seen puts the
    cases that follow it out of judgement.  The CPU controls speak for
    every case (a step of the whole machine that large is more than its
    speed), the memory controls for the memory-bound cases."""
    rows: list            # Row per CPU control present on both sides
    shifted: bool         # the CPU speed moved outside what the runs have seen: nothing is judged
    ratio: float          # geometric mean of the CPU controls' ratios (time: >1 = slower)
    memory_shifted: bool = False    # a memory control did: the memory-bound cases are not judged
    memory_ratio: float = math.nan  # geometric mean of the memory controls' ratios (time: >1 = slower)
    memory_rows: list = field(default_factory=list)
    relative: bool = False          # the cases were judged relative to the covariates
    speed_names: tuple = ()         # the CPU controls behind the speed
    memory_names: tuple = ()        # the memory controls behind the other covariates
    dx: tuple = ()                  # the covariates' move, other - base (log): the speed, then each memory control
    limit: tuple = ()               # the move each covariate may make before the guard (log)
    cpu_moved: bool = False         # kept for the views: the same as shifted

    @property
    def change_text(self):
        return stats.change_text(stats.speed_change(self.ratio, "latency"))

    @property
    def memory_change_text(self):
        return stats.change_text(stats.speed_change(self.memory_ratio, "latency"))

    @property
    def all_rows(self):
        return list(self.rows) + list(self.memory_rows)

    @property
    def speed_ratio(self):
        """The other side's CPU speed against the baseline's, as a time
        ratio (>1 = slower)."""
        return math.exp(self.dx[0]) if self.dx else math.nan

    @property
    def speed_change_text(self):
        return stats.change_text(stats.speed_change(self.speed_ratio, "latency"))

    def judged_out(self, domain):
        """True when a case of this domain may not be called faster or slower."""
        return self.shifted or (domain == "memory" and self.memory_shifted)

    def reason(self, domain):
        """Why a case of this domain was not judged, in words ('' when it
        was): the guard's name, a colon, the control that moved and how
        far (guards.reason)."""
        if self.shifted:
            return (f"machine shift: the CPU controls ran {self.speed_change_text}, beyond what the runs of this "
                    f"host have shown (up to {self.limit_text(0)})")
        if domain == "memory" and self.memory_shifted:
            i = next(i for i in range(1, len(self.dx)) if abs(self.dx[i]) > self.limit[i])
            name = self.memory_names[i - 1]
            ch = stats.change_text(stats.speed_change(math.exp(self.dx[i]), "latency"))
            return f"memory shift: {name} ran {ch} against the CPU speed, beyond what the runs of this host " \
                   f"have shown (up to {self.limit_text(i)})"
        return ""

    def why(self, domain):
        """reason() without the guard's name: the control and how far."""
        r = self.reason(domain)
        return r.split(": ", 1)[1] if r else ""

    def limit_text(self, i):
        return f"{math.expm1(self.limit[i]) * 100:.0f}%" if i < len(self.limit) else "-"


def domain_of(case):
    """cpu, memory or fs: what the case's binary declared (decl)."""
    return (case.decl.get("domain") or "cpu") if case is not None else "cpu"


# The benches whose cost is the memory manager's work (process creation,
# page faults, mappings): what the runs before them left (free memory's
# fragmentation, the page cache, the slabs) moves them together, by more
# from one session to the next than the other CPU-bound cases (on a kept
# boot fork and exec took about a fifth less time in its first session than
# in the four later ones, where the system calls moved with the CPU's speed:
# tests/validation/README.md, "A/A across sessions").
MM_STATE_BENCHES = ("lat_proc", "lat_pagefault", "lat_mmap")


def scale_group(case, control_kb=0):
    """The group a case's drift is scaled with (runmodel.fit): its domain,
    or for a CPU-bound case whose two parties run on two CPUs (@cross, or
    @unpinned: wherever the scheduler puts them) "cross", and on one CPU
    (@same) "same".  Those wait on a wakeup the hypervisor does (across
    CPUs) or on the vCPU's scheduling of two processes (on one), and drift
    in bursts of their own: on the kept A/A series a pipe's or a socket's
    round trip @same moved 17-29% between two runs where the system calls
    held within 2% (tests/validation/README.md, "The run-level model").
    A memory-bound case whose buffer (size_kb) is at least the memory
    control's (control_kb: memory_control_kb) is "dram": it lives where the
    control does, and moves with the memory's regime (runmodel.BULK_GROUPS).
    A CPU-bound case of MM_STATE_BENCHES is "state": what the runs before it
    left in the memory manager moves it, alike for its group."""
    d = domain_of(case)
    if d == "cpu" and case is not None and not case.control and " @" in case.name:
        if case.placement in ("cross", "unpinned"):
            return "cross"
        if case.name.split(" @", 1)[1].split()[0] == "same":
            return "same"
    if d == "cpu" and case is not None and not case.control and case.bench in MM_STATE_BENCHES:
        return "state"
    if d == "memory" and control_kb > 0 and case is not None and not case.control:
        size = case.param_dict.get("size_kb", "")
        if size.isdigit() and int(size) >= control_kb:
            return "dram"
    return d


def memory_control_kb(*sides):
    """The memory control's buffer (KB: its bytes per pass) as the sides'
    runs recorded it; 0 without one, or where they disagree."""
    sizes = {c.bytes_per_op // 1024 for s in sides for c in s.cases.values()
             if c.control and domain_of(c) == "memory" and c.bytes_per_op > 0}
    return sizes.pop() if len(sizes) == 1 else 0


def cases_domain(cases):
    """The domain of a quantity made of these cases (a summary cell):
    memory if any case is memory-bound, else fs if any is file-system-bound,
    else cpu."""
    ds = {domain_of(c) for c in cases}
    return "memory" if "memory" in ds else ("fs" if "fs" in ds else "cpu")


# scale_group's groups of two parties: their reps can fall into a fast and a
# slow mode, by the order of their wakeups (stats.decide reads their fastest
# rep; Comparison.modal)
TWO_PARTY = ("same", "cross")


def cases_group(cases, control_kb=0):
    """The group a summary cell's drift is scaled with (scale_group): its
    cases' one where one of them waits on what no control measures (a
    context switch, its ring on one CPU less its overhead, drifts as the
    ring does: "same"), else cases_domain."""
    groups = {scale_group(c, control_kb) for c in cases if c is not None}
    return next((g for g in runmodel.BULK_GROUPS if g in groups), cases_domain(cases))


def _fit(base, other, keys, domains, opts, extra=None):
    """judge.fit of these keys for two sides, with their host's runs."""
    return judge.fit(base.runs, other.runs, keys, domains, opts, noise_of(base, other, opts), extra, run_cells)


def compare_series(base_side, other_side, key, base_series, other_series, opts, shift=None, domain=None):
    """Compare one quantity of two sides on its own (a second look in a
    series, a scaling point): the run-level model with this key alone, so
    at the prior's scale (no bulk of cases to measure the moment's); a
    quantity no run's own estimates hold is estimated per run from the
    Series (judge.series_estimates)."""
    if base_series is None or other_series is None or not base_series.n_reps or not other_series.n_reps:
        return stats.compare(base_series, other_series, min_reps=opts.min_reps, estimator=opts.estimator)
    extra = None
    if key not in run_estimates(base_side.runs[0], opts):
        extra = {key: {**judge.series_estimates(base_series, opts, base_side.id),
                       **judge.series_estimates(other_series, opts, other_side.id)}}
    f, _ = _fit(base_side, other_side, [key], [domain or "cpu"], opts, extra)
    cmp = judge.comparison(f, 0, base_series, other_series, opts)
    case = base_side.cases.get(key) or other_side.cases.get(key)
    if case is not None:
        cmp.modal = scale_group(case) in TWO_PARTY
    return cmp


def compare_controls(base, other, opts=None):
    """Compare the control cases present on both sides (each on its own
    replicate spread and prior, no covariates), and say what the
    covariates did; None if there are none."""
    opts = opts or Options()
    names = [n for n in base.control_names() if n in other.cases and other.cases[n].control]
    if not names:
        return None
    f, (cpu, mem) = _fit(base, other, names, ["control"] * len(names), opts)
    rows = [Row(n, "controls", base.cases[n].metric, judge.comparison(f, i, base.series(n), other.series(n), opts))
            for i, n in enumerate(names)]
    stats.decide([r.cmp for r in rows], min_effect=opts.min_effect, level=opts.level, adjust=opts.adjust)
    for r in rows:
        # a control moved or did not: "inconclusive" would ask for more reps of work no kernel changes
        if r.cmp.verdict == stats.INCONCLUSIVE:
            r.cmp.verdict, r.cmp.unresolved = stats.SAME, False
    memory = {n for n in names if domain_of(base.cases[n]) == "memory"}

    def time_ratio(rs):
        # time ratios (>1 = slower) of the comparable controls: a bandwidth's is 1/ratio
        got = [r.cmp.ratio if r.metric != "bandwidth" else 1.0 / r.cmp.ratio
               for r in rs if r.cmp.comparable and r.cmp.ratio > 0]
        return math.exp(sum(math.log(x) for x in got) / len(got)) if got else math.nan
    cpu_rows = [r for r in rows if r.case not in memory]
    mem_rows = [r for r in rows if r.case in memory]
    sh = MachineShift(cpu_rows, False, time_ratio(cpu_rows), memory_ratio=time_ratio(mem_rows),
                      memory_rows=mem_rows, relative=opts.relative and bool(cpu), speed_names=tuple(cpu),
                      memory_names=tuple(mem))
    if cpu:
        g, _ = _fit(base, other, [], [], opts)
        sh.dx = tuple(float(v) for v in g.dx)
        sh.limit = tuple(float(v) for v in g.limit)
        if opts.relative:
            sh.shifted = sh.cpu_moved = 0 in g.guarded
            sh.memory_shifted = any(i > 0 for i in g.guarded)
    return sh


def side_groups(base, other):
    """The two sides as load.Groups (None for a side without runs): what
    the summary tables are built from."""
    return [load.Group(s.runs[0].host, f"side{i}", list(s.runs), s.cases) if s.runs else None
            for i, s in enumerate((base, other))]


def primary_names(base, other):
    """{case name: summary table title} of the cases behind the summary
    tables on either side (every case a summary-table cell is made of):
    the primary families of a comparison, each adjusted on its own, so that
    a change of one headline number is not diluted by the few hundred
    other cases.  A cell that is a case's time per event (the page fault
    per fault) is a quantity of its own, judged in its table's family
    under the cell's key; the case's time per operation, which it is made
    from, is not the table's number and is judged with the other cases
    (per page, lat_pagefault file moves with how many pages one fault maps,
    which the page cache's state sets from run to run)."""
    names = {}
    for t in tables_mod.build_tables([g for g in side_groups(base, other) if g is not None]):
        for col in t.columns:
            for cell in col.cells.values():
                if cell is not None and not (cell.per and cell.combine is None):
                    for c in cell.cases:
                        names.setdefault(c.name, t.title)
    return names


def family_of(name, primary, how):
    """The adjustment family of a case (or of a summary cell "cell:TITLE:LABEL")."""
    if how == "one":
        return ""
    title = primary.get(name)
    if title is None and name.startswith("cell:"):
        title = name.split(":", 2)[1]
    if title is None:
        return stats.SECONDARY
    return stats.PRIMARY if how == "two" else f"{stats.PRIMARY}: {title}"


def compare_sides(base, other, opts=None, extra=None, shift=None, extra_cases=None, pending=None, fits=None):
    """One Row per (non-control) case present on either side, in category
    order.

    extra: optional [(key, base Series or None, other Series or None)]
    (derived table cells): compared too and judged in the same family as
    the cases; with extra, returns (rows, [Comparison per extra item]).
    shift: the MachineShift of the sides (computed when None); when the
    CPU controls moved, nothing is called faster or slower; when the memory
    control moved, no memory-bound case is.  extra_cases: {key: [case
    names]} of the extra items (their domain).  opts.families: "tables",
    the cases behind each summary table (and its extra cells) are a family
    of their own, every other case another; "two", the cases behind all the
    tables one family, the others another; "one", all together.
    pending: a list: the verdicts are left to `decide_pending` over every
    comparison appended to it (a series adjusts all its steps together);
    what this comparison needs decided is appended instead.
    fits: a list: the model's fit (runmodel.Fit) is appended to it.
    """
    opts = opts or Options()
    if shift is None:
        shift = compare_controls(base, other, opts)
    names = {n for n, c in base.cases.items() if not c.control} | \
        {n for n, c in other.cases.items() if not c.control}
    cases = [base.cases.get(n) or other.cases.get(n) for n in names]
    cases.sort(key=case_sort_key)
    with_extra = extra is not None
    extra = extra or []
    domains = [domain_of(c) for c in cases]
    control_kb = memory_control_kb(base, other)
    extra_domains = [cases_group([base.cases.get(n) or other.cases.get(n) for n in (extra_cases or {}).get(key, ())],
                                 control_kb) for key, _, _ in extra]
    keys = [c.name for c in cases] + [key for key, _, _ in extra]
    groups = [scale_group(c, control_kb) for c in cases] + extra_domains
    f, _ = _fit(base, other, keys, groups, opts)
    if fits is not None:
        fits.append(f)
    rows = []
    for j, c in enumerate(cases):
        bs = base.series(c.name)
        os_ = other.series(c.name)
        if bs is not None and os_ is not None and bs.metric != os_.metric:
            cmp = stats.compare(None, None)
            cmp.verdict = stats.UNDEFINED  # one side latency, the other bandwidth
        else:
            cmp = judge.comparison(f, j, bs, os_, opts)
        rows.append(Row(c.name, category_of(c), c.metric, cmp))
    extra_cmps = [judge.comparison(f, len(cases) + i, bs, os_, opts) for i, (key, bs, os_) in enumerate(extra)]
    families = None
    if opts.families in ("two", "tables"):
        primary = primary_names(base, other)
        families = [family_of(r.case, primary, opts.families) for r in rows] + \
            [family_of(key, primary, opts.families) for key, _, _ in extra]
    domains += extra_domains
    judged = [r.cmp for r in rows] + extra_cmps
    for cmp, g in zip(judged, groups):
        cmp.modal = g in TWO_PARTY
    shifted = [guards.reason(shift, d) for d in domains]
    groups = None
    if opts.alone:
        # a case's group: its binary (the cases of one binary share a path
        # into the kernel); a derived cell's: itself
        groups = [(base.cases.get(r.case) or other.cases.get(r.case)).bench for r in rows] + \
            [key for key, _, _ in extra]
    if pending is not None:
        pending.append((judged, shifted, families, groups, lambda: mark_failures(rows, base, other)))
    else:
        stats.decide(judged, min_effect=opts.min_effect, level=opts.level, adjust=opts.adjust,
                     machine_shift=shifted, families=families, groups=groups, shared=getattr(opts.prior, "shared", ()))
        mark_failures(rows, base, other)
    if not with_extra:
        return rows
    return rows, extra_cmps


def decide_pending(pending, opts):
    """The verdicts of comparisons made with `pending`: one stats.decide over all of them,
    each family (a summary table's cases, the other cases) adjusted for its cases in every
    comparison together, then the failures marked.  A series of N kernels makes N - 1
    comparisons: so many more chances of a false step, which the adjustment counts."""
    cmps, shifted, families, groups = [], [], [], []
    for step, (judged, sh, fams, grps, _) in enumerate(pending):
        cmps += judged
        shifted += sh
        families += fams if fams is not None else [""] * len(judged)
        # moved alone: within its own comparison (step), the prior's shared binaries in each
        groups += [(step, g) for g in grps] if grps is not None else [(step, id(c)) for c in judged]
    stats.decide(cmps, min_effect=opts.min_effect, level=opts.level, adjust=opts.adjust, machine_shift=shifted,
                 families=families, groups=groups if opts.alone else None,
                 shared={(s, b) for s in range(len(pending)) for b in getattr(opts.prior, "shared", ())})
    for *_, after in pending:
        after()
    pending.clear()


def mark_failures(rows, base, other):
    """A case with an invocation that failed, timed out or crashed on one
    side (its samples are not used: load) gets the verdict FAILED, whatever
    its other reps say: a failure is the worst regression.  Failing on both
    sides is no difference between the kernels: missing, with the reason."""
    fails = [(side, failures(side.runs)) for side in (other, base)]
    names = {r.case for r in rows}
    for side, f in fails:
        for name in f:
            if name not in names and not _is_control(name, base, other):
                c = stats.compare(None, None)
                c.verdict = stats.MISSING
                rows.append(Row(name, _category_of_name(name, base, other), "latency", c))
                names.add(name)
    for r in rows:
        sides = [(side, f[r.case]) for side, f in fails if r.case in f]
        if len(sides) == 2:
            # failing on both kernels is no difference between them: missing,
            # with the reason (each kernel's summary lists it too)
            status, reason = sides[0][1]
            r.cmp.verdict = stats.MISSING
            r.cmp.failure = f"(failed on both sides: {status})"
        elif sides:
            (side, (status, reason)), = sides
            r.cmp.verdict = stats.FAILED
            r.cmp.failure = f"on {side.label}: {status}" + (f" ({reason})" if reason else "")


def _is_control(name, base, other):
    c = base.cases.get(name) or other.cases.get(name)
    return bool(c and c.control)


def _category_of_name(name, base, other):
    """The category of a case that has no samples on either side: its
    declaration in one of the sides' runs, else "Other"."""
    for side in (base, other):
        for run in side.runs:
            for c in run.cases.values():
                if c.bench == name.split()[0]:
                    return c.category
    return decl.OTHER


def compare_tables(base, other, tables, base_key, other_key, opts=None, shift=None, pending=None, fits=None,
                   extras=None):
    """Compare two kernels' cases and summary-table cells together.

    Returns (rows, {(table index, column index): Comparison}).  A cell that
    is one case gets that case's comparison, so the tables and the case
    list always agree.  Cells that resolve to different cases on the two
    kernels (each kernel's largest size, each machine's cache levels) are
    "not comparable", never coloured against each other.  fits: a list
    that gets the runmodel.Fit of the cases (compare_sides); extras: a
    dict that gets {cell key: (table index, column index)} of the cells
    judged as quantities of their own.
    """
    extra = []
    extra_cases = {}
    where = []
    for ti, t in enumerate(tables):
        for ci, col in enumerate(t.columns):
            a, b = col.cells.get(base_key), col.cells.get(other_key)
            if a is not None and b is not None and a.key != b.key:
                where.append((ti, ci, ("different", f"{a.key} against {b.key}")))
                continue
            if a is not None and b is not None and a.combine is None and b.combine is None and not a.per \
                    and a.cases[0].name == b.cases[0].name:
                where.append((ti, ci, ("case", a.cases[0].name)))
                continue
            key = cell_key(t.title, col.label)
            if extras is not None:
                extras[key] = (ti, ci)
            extra.append((key, a.series() if a is not None else None, b.series() if b is not None else None))
            extra_cases[key] = [c.name for cell in (a, b) if cell is not None for c in cell.cases]
            where.append((ti, ci, ("extra", len(extra) - 1)))
    rows, extra_cmps = compare_sides(base, other, opts, extra, shift, extra_cases, pending, fits)
    by_case = {r.case: r.cmp for r in rows}
    cells = {}
    for ti, ci, (kind, ref) in where:
        if kind == "different":
            c = stats.compare(None, None)
            c.verdict = stats.UNDEFINED
            c.failure = f"(different cases: {ref})"
            cells[(ti, ci)] = c
        else:
            cells[(ti, ci)] = by_case[ref] if kind == "case" else extra_cmps[ref]
    return rows, cells


@dataclass
class Report:
    base: Side
    other: Side
    rows: list
    differences: list = field(default_factory=list)
    shift: MachineShift = None
    ran_differently: list = field(default_factory=list)
    opts: object = None   # the Options it was made with (min effect, level)
    explanations: list = None   # explain.Explanation list when compare --explain made them
    kernel: list = field(default_factory=list)   # (key, base, other) of KERNEL_IDENTITY that differ
    scale: dict = field(default_factory=dict)    # runmodel.Fit.scale: the drift now, per domain
    bulk: dict = field(default_factory=dict)     # runmodel.Fit.bulk: groups widened by their own bulk
    follow: dict = field(default_factory=dict)   # runmodel.Fit.follow: the memory slopes' prior left, one run a side
    sessions: dict = field(default_factory=dict)  # runmodel.Fit.sessions: a session's share the host's runs measured
    cells: dict = field(default_factory=dict)    # "cell:TABLE:COLUMN" -> (Comparison, how it is made, its cases)

    @cached_property
    def waiting(self):
        """`waiting_shares` of this comparison, once for the text, CSV and JSON."""
        return waiting_shares(self)


def run_compare(base, other, opts=None):
    """Two sides compared as the report and the page compare them: the
    cases and the summary tables' cells judged together (compare_tables),
    so that a case gets the same verdict here as on the page.  The cells
    that are not one case (a mean of cases, a time per event): Report.cells."""
    opts = opts or Options()
    shift = compare_controls(base, other, opts)
    fits = []
    groups = side_groups(base, other)
    cells = {}
    if None in groups:
        rows = compare_sides(base, other, opts, shift=shift, fits=fits)
    else:
        tabs = tables_mod.build_tables(groups)
        extras = {}
        rows, by_index = compare_tables(base, other, tabs, groups[0].key, groups[1].key, opts, shift, fits=fits,
                                        extras=extras)
        for key, (ti, ci) in extras.items():
            a, b = (tabs[ti].columns[ci].cells.get(g.key) for g in groups)
            if a is not None and b is not None:      # (a cell of one side alone: nothing compared)
                cells[key] = (by_index[(ti, ci)], a.key, [c.name for c in a.cases])
    return Report(base, other, rows, meta_differences(base.meta, other.meta), shift, how_cases_ran(base, other),
                  opts, kernel=meta_differences(base.meta, other.meta, KERNEL_IDENTITY), scale=fits[0].scale,
                  bulk=fits[0].bulk, follow=fits[0].follow, sessions=fits[0].sessions, cells=cells)


def waiting_shares(rep):
    """{case: largest share of its time blocked} of the one-party cases that
    spent more than half their time blocked (I/O, a journal commit, a lock)
    on either side: their change is how long something made them wait, not
    the cost of their path (summarize says "waiting" for the same cases)."""
    out = {}
    for name in set(rep.base.cases) | set(rep.other.cases):
        w = most_waiting([rep.base.cases.get(name), rep.other.cases.get(name)])
        if w is not None:
            out[name] = w
    return out


def regressions(rep):
    """The rows a CI gate fails on: significantly slower, or FAILED on the
    other side (a failure on the baseline is not the other kernel's)."""
    return [r for r in rep.rows if r.cmp.verdict == stats.SLOWER
            or (r.cmp.verdict == stats.FAILED and r.cmp.failure.startswith(f"on {rep.other.label}:"))]
