"""Case-by-case comparison of two sides (kernels).

A side is a set of runs whose reps are pooled per case: usually every run
of one (host, kernel).  Comparing `other` against `base` gives, per case,
the ratio of headline values, its confidence interval and p from one model,
the smallest change it could have detected, and a verdict (see
stats.compare).  The control cases (which no kernel can change) are
compared first: if they moved, the machine changed between the sides and
no case is called faster or slower.
"""
import dataclasses
import functools
import math
from dataclasses import dataclass, field
from functools import cached_property

from . import decl, defaults, drift, groups as groups_mod, guards, load, speed, stats, tables as tables_mod
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
    shift_threshold: float = defaults.SHIFT_THRESHOLD  # a control moving this much (and significantly) = a machine shift
    run_noise: object = None        # {host: stats.RunNoise}: the run level measured on each host
    prior: object = None            # drift.DriftPrior: the drift between runs before a host has measured it
    families: str = defaults.DEFAULT_FAMILIES       # the adjustment's families: tables (each summary table's cases one family,
                                    # the other cases another), two (all the tables' cases, the others), one
    host_scale: bool = True         # scale the prior by the host's own drift, fitted over its cases
                                    # (drift.host_scales; --no-host-scale turns it off)
    alone: bool = True              # a non-primary case that moved alone with one run on a side: inconclusive
                                    # (stats.decide's groups; --flag-alone turns it off)
    relative: bool = True           # CPU-bound cases judged relative to each run's CPU speed (speed.py;
                                    # --as-measured turns it off)
    speed_step: float = defaults.SPEED_STEP  # judged relative: a CPU control moving this much = a machine shift


class Side:
    """A labelled set of runs with their cases pooled, and a cache of
    bootstrap distributions so that comparing several kernels with one
    baseline resamples the baseline once."""

    def __init__(self, label, runs, warn=None, cases=None):
        self.label = label
        self.runs = list(runs)
        # cases: already pooled (a group's); one run's own are its pool, not copied
        self.cases = cases if cases is not None else \
            self.runs[0].cases if len(self.runs) == 1 else pool_cases(self.runs, warn)
        # Seeds the side's bootstrap stream: the label too, so that two sides
        # built from copies of one run (same run ids) still resample
        # independently instead of in lockstep.
        self.id = label + "|" + ",".join(sorted(r.run_id for r in self.runs))
        self._boot = {}
        self._speeds = {}

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

    def estimate(self, key, series, opts, tag=None):
        """The side's estimate of a series (bootstrap standard error), cached
        by key, so that comparing several kernels with one baseline
        resamples the baseline once.  A memory-bound case of several runs
        claims no less error than its runs' own (bootstrap.runs_floor_se);
        not a control, which is judged on its reps' noise alone, so that
        any regime its reps can see puts the memory-bound cases out of
        judgement (compare_controls).  tag: what was done to the series
        (a CPU-bound case put at a speed: ("speed", ref)), part of the
        cache's key but not of the bootstrap's seed."""
        k = (key, opts.n_boot, opts.seed, opts.estimator, tag)
        e = self._boot.get(k)
        if e is None:
            e = stats.side_estimate(series, opts.n_boot, stats.seeded_rng(opts.seed, self.id, key),
                                    opts.estimator, runs_floor=_floored(self.cases.get(key)))
            self._boot[k] = e
        return e

    def control_names(self):
        return sorted(n for n, c in self.cases.items() if c.control)

    def speeds(self, names, estimator):
        """{run id: the run's CPU speed over the controls `names`}
        (speed.run_speed), cached."""
        k = (tuple(names), estimator)
        got = self._speeds.get(k)
        if got is None:
            got = self._speeds[k] = {r.run_id: speed.run_speed(r, names, estimator) for r in self.runs}
        return got

    def mean_speed(self, names, estimator):
        """The mean of the runs' speeds (each run counts once, as in a
        side's estimate); nan when a run has none."""
        v = list(self.speeds(names, estimator).values())
        return sum(v) / len(v) if v else math.nan


def compare_series(base_side, other_side, key, base_series, other_series, opts, shift=None, domain=None):
    """Compare two series of the two sides (either may be None).  With
    the sides' MachineShift and the series' domain: a CPU-bound series is
    compared relative to each run's CPU speed when the shift says so
    (MachineShift.relative): every run's reps put at the baseline side's
    mean speed (speed.rescaled)."""
    kw = dict(n_boot=opts.n_boot, seed=opts.seed, level=opts.level, min_reps=opts.min_reps,
              estimator=opts.estimator)
    tag = None
    if shift is not None and shift.relative and domain == "cpu":
        tag = ("speed", shift.base_speed)
        if base_series is not None:
            base_series = speed.rescaled(base_series, base_side.speeds(shift.speed_names, opts.estimator),
                                         shift.base_speed)
        if other_series is not None:
            other_series = speed.rescaled(other_series, other_side.speeds(shift.speed_names, opts.estimator),
                                          shift.base_speed)
    if base_series is not None and other_series is not None and base_series.n_reps and other_series.n_reps:
        base_series.estimator = other_series.estimator = opts.estimator
        kw["base_est"] = a = base_side.estimate(key, base_series, opts, tag)
        kw["other_est"] = b = other_side.estimate(key, other_series, opts, tag)
        noise = noise_of(base_side, other_side, opts)
        if noise:
            kw["run_noise"] = noise.tau2(key, (a.se ** 2 + b.se ** 2) / 2.0)
    return stats.compare(base_series, other_series, **kw)


class NoiseMap(dict):
    """{host: stats.RunNoise} of the hosts whose runs measured their drift;
    get() of any other host gives the built-in prior alone (a RunNoise
    with no spreads), or None without a prior."""

    def __init__(self, items=(), prior=None):
        super().__init__(items)
        self.prior = prior

    def get(self, host, default=None):
        v = super().get(host)
        if v is None and self.prior is not None:
            return stats.RunNoise({}, prior=self.prior)
        return default if v is None else v


def noise_of(base_side, other_side, opts):
    """The RunNoise that applies to a comparison of two sides: the one of
    their host, when both sides ran on one host and it was measured; else
    the built-in prior alone (opts.prior), or None without one."""
    hosts = {r.host for r in base_side.runs} | {r.host for r in other_side.runs}
    if opts.run_noise is not None and len(hosts) == 1:
        got = opts.run_noise.get(hosts.pop())
        if got is not None:
            return got
    return stats.RunNoise({}, prior=opts.prior) if opts.prior is not None else None


def run_estimates(run, opts):
    """{case: (theta, se)} of one run alone, with the comparison's estimator;
    also {cell key: (theta, se)} of the summary-table cells that are more
    than one case (a mean of cases, a difference, a time per event), under
    the key compare_tables gives them, so that the run level measures their
    own drift between runs too.  With opts.relative, a CPU-bound case's
    (and an all-CPU-bound cell's) log time is less the run's CPU speed
    (speed.run_speed), as a comparison judges it: the drift between runs
    is then measured the way the verdicts use it."""
    side = Side(f"{run.host}/{run.kernel}#{run.run_id}", [run])
    sp = speed.run_speed(run, speed.cpu_control_names([run]), opts.estimator) if opts.relative else math.nan
    unit = 0.0 if math.isnan(sp) else sp
    out = {}
    for name, c in side.cases.items():
        ser = side.series(name)
        if ser is None or ser.n_reps < 2:
            continue
        e = side.estimate(name, ser, opts)
        out[name] = (e.theta - (unit if not c.control and domain_of(c) == "cpu" else 0.0), e.se)
    groups = groups_mod.group_runs([run], lambda m: None)
    if len(groups) == 1:
        g = groups[0]
        for t in tables_mod.build_tables(groups):
            for col in t.columns:
                cell = col.cells.get(g.key)
                if cell is None or (cell.combine is None and not cell.per):
                    continue          # one case: its own estimate above
                ser = cell.series()
                if ser is None or ser.n_reps < 2:
                    continue
                key = f"cell:{t.title}:{col.label}"
                e = side.estimate(key, ser, opts)
                out[key] = (e.theta - (unit if cases_domain(cell.cases) == "cpu" else 0.0), e.se)
    return out


def measure_run_noise(run_lists, opts):
    """{host: RunNoise} from lists of runs, each list the replicate runs of
    one kernel under one condition (a compared side, or a kernel's runs
    found elsewhere).  The callers group: two sides of one comparison are
    never one list, even of one kernel (an A/A pair, a run under a known
    slowdown), or their difference would count as drift.  A list with one
    run says nothing; a run in two lists counts in the first only; quick
    runs are left out (their schedule differs); a list spanning hosts is
    split by host, and one spanning versions of the suite by version (a
    benchmark whose operation changed between versions would count its
    change as drift)."""
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
            if len(rs) >= 2:
                by_host.setdefault(host, []).append(rs)
    out = NoiseMap(prior=opts.prior)
    for host, kernels in by_host.items():
        groups = [[run_estimates(r, opts) for r in rs] for rs in kernels]
        boot_ids = [(r.meta or {}).get("boot_id") for rs in kernels for r in rs]
        boots = len(set(boot_ids)) if all(boot_ids) else None
        spreads = stats.run_spreads(groups)
        domains = {name: drift.scale_group(domain_of(c), c)
                   for rs in kernels for r in rs for name, c in r.cases.items()}
        domain_by_key = functools.partial(_domain_of, domains)
        scales, across = host_scales(kernels, groups, domain_by_key, opts) if opts.host_scale else ({}, ())
        out[host] = stats.RunNoise(spreads, runs=sum(len(rs) for rs in kernels),
                                   kernels=len(kernels), boots=boots, prior=opts.prior,
                                   scales=scales, domain_of=domain_by_key, prior_across=across,
                                   kernel_runs=[(rs[0].kernel, len(rs)) for rs in kernels])
    return out


def host_scales(kernels, groups, domain_of, opts):
    """({domain: drift.HostScale}, the domains that keep the prior because
    their only runs cross a machine shift) of one host: its kernels' runs (lists of
    runs) and their per-run estimates (`groups`, in the same order).  A
    comparison never judges a domain across a machine shift that puts it
    out of judgement (the controls, as a comparison of two runs would judge
    them), so the drift its verdicts rest on is the drift between runs
    without one: per domain, a kernel keeps its largest set of runs with no
    such shift between any two (drift.shift_free).  A domain where no
    kernel keeps two runs is fitted across the shifts: a shift adds to the
    runs' spread, so that fit bounds the drift without one from above, and
    it is kept where it is below the prior (a shift never widens it); at or
    above it the domain keeps the prior, and is named apart.  The
    cases across CPUs (drift.scale_group) take the CPU-bound cases'
    factor, or their own where it is larger."""
    if opts.prior is None:
        return {}, ()
    keep = {g: [] for g in drift.SCALE_GROUPS}
    for rs, g in zip(kernels, groups):
        sides = [Side(f"{r.host}/{r.kernel}#{r.run_id}", [r]) for r in rs]
        shifts = {(i, j): compare_controls(sides[i], sides[j], opts)
                  for i in range(len(sides)) for j in range(i + 1, len(sides))}
        for dom, gs in keep.items():
            free = drift.shift_free(len(rs), [p for p, sh in shifts.items()
                                              if sh is not None and sh.judged_out(drift.SCALE_GROUPS[dom])])
            if len(free) >= 2:
                gs.append([g[i] for i in free])
    out, across = {}, []
    for dom, gs in keep.items():
        # the CPU-bound scale is fitted over every CPU-bound case, those across CPUs too
        group = (lambda k: drift.SCALE_GROUPS.get(domain_of(k), "cpu")) if dom == "cpu" else domain_of
        spreads = {k: v for k, v in stats.run_spreads(gs or groups).items() if group(k) == dom}
        for d, s in drift.host_scales(spreads, opts.prior, group, sum(len(x) - 1 for x in gs or groups)).items():
            if gs or s.factor < 1:
                out[d] = dataclasses.replace(s, across=not gs)
            else:
                across += [d, "cross"] if d == "cpu" else [d]    # the cases across CPUs would take the CPU's
    return drift.cross_one_sided(out), tuple(across)


def _domain_of(domains, key):
    """A case's drift-scale group (drift.scale_group) as its binary
    declared its domain; cpu for a case no run declared."""
    return domains.get(key, "cpu")


@dataclass
class Row:
    case: str
    category: str
    metric: str
    cmp: stats.Comparison


@dataclass
class MachineShift:
    """The control cases compared between the sides, per domain: the CPU
    controls (core, L1/L2) speak for every case; the memory control (a
    large read its binary declares memory-bound) for the memory-bound cases only, whose speed follows
    the memory system's regime while the CPU-bound work does not move."""
    rows: list            # Row per control present on both sides
    shifted: bool         # a CPU control moved significantly and by >= the threshold (judged relative:
                          # by >= the speed step): nothing is judged
    ratio: float          # geometric mean of the CPU controls' ratios (time: >1 = slower)
    threshold: float
    # a memory control moved by the threshold (significant or not): memory-bound cases are not judged
    memory_shifted: bool = False
    memory_ratio: float = math.nan  # geometric mean of the memory controls' ratios (time: >1 = slower)
    memory_rows: list = field(default_factory=list)
    # judged relative to the runs' CPU speed (speed.py): the CPU controls behind each run's speed, the
    # baseline side's mean speed (the one every CPU-bound case is put at), the other side's
    relative: bool = False
    speed_names: tuple = ()
    base_speed: float = math.nan
    other_speed: float = math.nan
    step: float = math.nan          # judged relative: the CPU controls' move that is a machine shift
    cpu_moved: bool = False         # a CPU control moved significantly by >= the threshold (as measured,
                                    # the machine shift; judged relative, the file-system- and
                                    # memory-bound cases are not judged, the CPU-bound ones are)

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
        ratio (>1 = slower): what every CPU-bound case is divided by."""
        return math.exp(self.other_speed - self.base_speed) if self.relative else math.nan

    @property
    def speed_change_text(self):
        return stats.change_text(stats.speed_change(self.speed_ratio, "latency"))

    def judged_out(self, domain):
        """True when a case of this domain may not be called faster or slower."""
        return self.shifted or (domain != "cpu" and self.cpu_moved) or (domain == "memory" and self.memory_shifted)


def _floored(case):
    """A memory-bound case that is not a control (Side.estimate)."""
    return case is not None and not case.control and domain_of(case) == "memory"


def domain_of(case):
    """cpu, memory or fs: what the case's binary declared (decl)."""
    return (case.decl.get("domain") or "cpu") if case is not None else "cpu"


def cases_domain(cases):
    """The domain of a quantity made of these cases (a summary cell):
    memory if any case is memory-bound, else fs if any is file-system-bound,
    else cpu."""
    ds = {domain_of(c) for c in cases}
    return "memory" if "memory" in ds else ("fs" if "fs" in ds else "cpu")


def compare_controls(base, other, opts=None):
    """Compare the control cases present on both sides; None if there are none."""
    opts = opts or Options()
    names = [n for n in base.control_names() if n in other.cases and other.cases[n].control]
    if not names:
        return None
    rows = []
    # The memory control is judged on its reps' noise alone: memory regimes
    # switch between runs often (20-30% in two of three A/A pairs), so any
    # regime difference its reps can see puts the memory-bound cases out of
    # judgement, rather than trusting their drift prior to cover it.
    reps_only = dataclasses.replace(opts, run_noise=None, prior=None)
    mem = {n for n in names if domain_of(base.cases[n]) == "memory"}
    for n in names:
        cmp = compare_series(base, other, n, base.series(n), other.series(n), reps_only if n in mem else opts)
        rows.append(Row(n, "controls", base.cases[n].metric, cmp))
    live = [r for r in rows if r.cmp.comparable]
    qs = stats.bh_adjust([r.cmp.p for r in live])
    for r, q in zip(live, qs):
        c = r.cmp
        c.q = float(q)
        moved = abs(math.log(c.ratio)) >= math.log1p(opts.shift_threshold)
        if q < 1 - opts.level and moved:
            c.verdict = stats.SLOWER if c.change < 0 else stats.FASTER
        elif moved and r.case in mem:
            # A memory control is a guard: a move of the threshold or more
            # puts the memory-bound cases out of judgement even when its
            # reps cannot make it significant.  Its interval is widest when
            # a side's runs disagree, which is when the memory system drifted
            # between runs; the memory-bound cases follow the drift, and at
            # several runs a side their intervals are narrow enough to flag
            # it (tests/validation/README.md, "Host drift scale").
            c.verdict = stats.MOVED
        else:
            c.verdict = stats.SAME

    def time_ratio(rs):
        # time ratios (>1 = slower) of the comparable controls: a bandwidth's is 1/ratio
        got = [r.cmp.ratio if r.metric != "bandwidth" else 1.0 / r.cmp.ratio
               for r in rs if r.cmp.comparable and r.cmp.ratio > 0]
        return math.exp(sum(math.log(x) for x in got) / len(got)) if got else math.nan
    cpu_rows = [r for r in rows if r.case not in mem]
    mem_rows = [r for r in rows if r.case in mem]
    moved = any(r.cmp.significant for r in cpu_rows)
    sh = MachineShift(cpu_rows, moved, time_ratio(cpu_rows), opts.shift_threshold,
                      any(control_moved(r.cmp) for r in mem_rows), time_ratio(mem_rows), mem_rows,
                      cpu_moved=moved)
    if opts.relative:
        names = tuple(speed.cpu_control_names(base.runs + other.runs))
        a, b = base.mean_speed(names, opts.estimator), other.mean_speed(names, opts.estimator)
        if names and not (math.isnan(a) or math.isnan(b)):
            step = math.log1p(opts.speed_step)
            sh.relative, sh.speed_names, sh.base_speed, sh.other_speed = True, names, a, b
            sh.step = opts.speed_step
            sh.shifted = any(r.cmp.significant and abs(math.log(r.cmp.ratio)) >= step for r in cpu_rows)
    return sh


def primary_names(base, other):
    """{case name: summary table title} of the cases behind the summary
    tables on either side (every case a summary-table cell is made of):
    the primary families of a comparison, each adjusted on its own, so that
    a change of one headline number is not diluted by the few hundred
    other cases."""
    groups = []
    for i, side in enumerate((base, other)):
        if not side.runs:
            continue
        g = load.Group(side.runs[0].host, f"side{i}", list(side.runs))
        g.cases = side.cases
        groups.append(g)
    names = {}
    for t in tables_mod.build_tables(groups):
        for col in t.columns:
            for cell in col.cells.values():
                if cell is not None:
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


def compare_sides(base, other, opts=None, extra=None, shift=None, extra_cases=None, pending=None):
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
    """
    opts = opts or Options()
    if shift is None:
        shift = compare_controls(base, other, opts)
    names = {n for n, c in base.cases.items() if not c.control} | \
        {n for n, c in other.cases.items() if not c.control}
    cases = [base.cases.get(n) or other.cases.get(n) for n in names]
    cases.sort(key=case_sort_key)
    rows = []
    domains = []
    for c in cases:
        bs = base.series(c.name)
        os_ = other.series(c.name)
        if bs is not None and os_ is not None and bs.metric != os_.metric:
            cmp = stats.compare(None, None)
            cmp.verdict = stats.UNDEFINED  # one side latency, the other bandwidth
        else:
            cmp = compare_series(base, other, c.name, bs, os_, opts, shift, domain_of(c))
        rows.append(Row(c.name, category_of(c), c.metric, cmp))
        domains.append(domain_of(c))
    with_extra = extra is not None
    extra = extra or []
    extra_domains = [cases_domain([base.cases.get(n) or other.cases.get(n) for n in (extra_cases or {}).get(key, ())])
                     for key, _, _ in extra]
    extra_cmps = [compare_series(base, other, key, bs, os_, opts, shift, d)
                  for (key, bs, os_), d in zip(extra, extra_domains)]
    domains += extra_domains
    families = None
    if opts.families in ("two", "tables"):
        primary = primary_names(base, other)
        families = [family_of(r.case, primary, opts.families) for r in rows] + \
            [family_of(key, primary, opts.families) for key, _, _ in extra]
    judged = [r.cmp for r in rows] + extra_cmps
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
                     machine_shift=shifted, families=families, groups=groups)
        mark_failures(rows, base, other)
    if not with_extra:
        return rows
    return rows, extra_cmps


def decide_pending(pending, opts):
    """The verdicts of comparisons made with `pending`: one stats.decide
    over all of them, each family (a summary table's cases, the other
    cases) adjusted for its cases in every comparison together, then the
    failures marked.  A series of N kernels makes N - 1 comparisons: so
    many more chances of a false step, which the adjustment counts."""
    cmps, shifted, families, groups = [], [], [], []
    for step, (judged, sh, fams, grps, _) in enumerate(pending):
        cmps += judged
        shifted += sh
        families += fams if fams is not None else [""] * len(judged)
        # moved alone: within its own comparison (step)
        groups += [(step, g) for g in grps] if grps is not None else [(step, id(c)) for c in judged]
    stats.decide(cmps, min_effect=opts.min_effect, level=opts.level, adjust=opts.adjust, machine_shift=shifted,
                 families=families, groups=groups if opts.alone else None)
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


def compare_tables(base, other, tables, base_key, other_key, opts=None, shift=None, pending=None):
    """Compare two kernels' cases and summary-table cells together.

    Returns (rows, {(table index, column index): Comparison}).  A cell that
    is one case gets that case's comparison, so the tables and the case
    list always agree.  Cells that resolve to different cases on the two
    kernels (each kernel's largest size, each machine's cache levels) are
    "not comparable", never coloured against each other.
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
            key = f"cell:{t.title}:{col.label}"
            extra.append((key, a.series() if a is not None else None, b.series() if b is not None else None))
            extra_cases[key] = [c.name for cell in (a, b) if cell is not None for c in cell.cases]
            where.append((ti, ci, ("extra", len(extra) - 1)))
    rows, extra_cmps = compare_sides(base, other, opts, extra, shift, extra_cases, pending)
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

    @cached_property
    def waiting(self):
        """`waiting_shares` of this comparison, once for the text, CSV and JSON."""
        return waiting_shares(self)


def run_compare(base, other, opts=None):
    shift = compare_controls(base, other, opts)
    return Report(base, other, compare_sides(base, other, opts, shift=shift),
                  meta_differences(base.meta, other.meta), shift, how_cases_ran(base, other), opts,
                  kernel=meta_differences(base.meta, other.meta, KERNEL_IDENTITY))


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
