"""Case-by-case comparison of two sides (kernels).

A side is a set of runs whose reps are pooled per case: usually every run
of one (host, kernel).  Comparing `other` against `base` gives, per case,
the ratio of headline values, its bootstrap confidence interval, a rank
test and a verdict (see stats.compare).
"""
import csv
import math
from dataclasses import dataclass, field

from . import stats
from .counters import LABELS as COUNTER_LABELS, changes as counter_changes
from .counters import fmt as counter_fmt, fmt_change as counter_fmt_change
from .load import natural_key, pool_cases, meta_text

CATEGORIES = [
    "processor and processes",
    "context switching",
    "local communication latency",
    "file and VM latency",
    "local communication bandwidth",
    "memory latency",
    "other",
]

BENCH_CATEGORY = {
    "lat_syscall": "processor and processes",
    "lat_sig": "processor and processes",
    "lat_proc": "processor and processes",
    "lat_select": "processor and processes",
    "lat_ctx": "context switching",
    "lat_pipe": "local communication latency",
    "lat_unix": "local communication latency",
    "lat_udp": "local communication latency",
    "lat_tcp": "local communication latency",
    "lat_connect": "local communication latency",
    "lat_futex": "local communication latency",
    "lat_fs": "file and VM latency",
    "lat_pathwalk": "file and VM latency",
    "lat_mmap": "file and VM latency",
    "lat_pagefault": "file and VM latency",
    "bw_pipe": "local communication bandwidth",
    "bw_unix": "local communication bandwidth",
    "bw_tcp": "local communication bandwidth",
    "bw_file_rd": "local communication bandwidth",
    "bw_mmap_rd": "local communication bandwidth",
    "bw_mem": "local communication bandwidth",
    "lat_mem_rd": "memory latency",
}

# meta keys that describe the run itself, not the conditions it ran under:
# never reported as a difference between the sides.
RUN_ONLY_KEYS = {
    "schema", "run_id", "kernel_release", "kernel_version", "seed", "started_utc", "ended_utc",
    "loadavg_before", "loadavg_after", "busy_processes", "swap_before", "swap_after", "warnings",
    "status",
}


def category_of(case):
    cat = BENCH_CATEGORY.get(case.bench, "other")
    if cat == "processor and processes" and case.bench == "lat_sig" and case.variant == "prot":
        return "file and VM latency"
    return cat


# Display order of benches and variants (lmbench's table order); others
# follow in natural order.
BENCH_ORDER = list(BENCH_CATEGORY)
VARIANT_ORDER = {
    "lat_syscall": ["null", "read", "write", "stat", "fstat", "open"],
    "lat_sig": ["install", "catch", "prot"],
    "lat_proc": ["fork", "exec", "shell"],
    "lat_select": ["select", "poll", "epoll"],
    "lat_ctx": ["ring", "work"],
    "lat_fs": ["create", "delete"],
    "bw_mem": ["rd", "wr", "rdwr", "cp", "bcopy", "bzero"],
    "lat_mem_rd": ["stride", "random"],
}
PLACEMENT_ORDER = ["", "pinned", "same", "cross", "unpinned"]


def _index(seq, item):
    try:
        return seq.index(item)
    except ValueError:
        return len(seq)


def case_sort_key(case):
    return (CATEGORIES.index(category_of(case)), _index(BENCH_ORDER, case.bench), natural_key(case.bench),
            _index(VARIANT_ORDER.get(case.bench, []), case.variant), natural_key(case.variant),
            natural_key(case.params), _index(PLACEMENT_ORDER, case.placement), case.name)


@dataclass
class Options:
    min_effect: float = stats.DEFAULT_MIN_EFFECT
    n_boot: int = stats.DEFAULT_BOOT
    seed: int = 1
    level: float = stats.LEVEL
    min_reps: int = stats.DEFAULT_MIN_REPS
    adjust: bool = True


class Side:
    """A labelled set of runs with their cases pooled, and a cache of
    bootstrap distributions so that comparing several kernels with one
    baseline resamples the baseline once."""

    def __init__(self, label, runs, warn=None):
        self.label = label
        self.runs = list(runs)
        self.cases = pool_cases(self.runs, warn)
        # Seeds the side's bootstrap stream: the label too, so that two sides
        # built from copies of one run (same run ids) still resample
        # independently instead of in lockstep.
        self.id = label + "|" + ",".join(sorted(r.run_id for r in self.runs))
        self._boot = {}

    @classmethod
    def from_group(cls, group, warn=None):
        s = cls(group.label, group.runs, warn)
        return s

    @property
    def meta(self):
        from .load import merged_meta
        return merged_meta([r.meta for r in self.runs])

    @property
    def n_reps(self):
        keys = set()
        for c in self.cases.values():
            keys.update(c.reps)
        return len(keys)

    def series(self, name):
        c = self.cases.get(name)
        if c is None or not c.reps:
            return None
        return stats.Series.single(c.rep_arrays(), c.metric, name)

    def boot(self, key, series, opts):
        """Bootstrap headlines of a series, cached by key."""
        k = (key, opts.n_boot, opts.seed)
        b = self._boot.get(k)
        if b is None:
            b = series.boot_headlines(opts.n_boot, stats.seeded_rng(opts.seed, self.id, key))
            self._boot[k] = b
        return b


def compare_series(base_side, other_side, key, base_series, other_series, opts):
    """Compare two series of the two sides (either may be None)."""
    kw = dict(n_boot=opts.n_boot, seed=opts.seed, level=opts.level, min_reps=opts.min_reps)
    if base_series is not None and other_series is not None and base_series.n_reps and other_series.n_reps:
        kw["base_boot"] = base_side.boot(key, base_series, opts)
        kw["other_boot"] = other_side.boot(key, other_series, opts)
    return stats.compare(base_series, other_series, **kw)


@dataclass
class Row:
    case: str
    category: str
    metric: str
    cmp: stats.Comparison


def compare_sides(base, other, opts=None, extra=None):
    """One Row per case present on either side, in category order.

    extra: optional [(key, base Series or None, other Series or None)]
    (derived table cells): compared too and judged in the same family as
    the cases; with extra, returns (rows, [Comparison per extra item]).
    """
    opts = opts or Options()
    names = set(base.cases) | set(other.cases)
    cases = [base.cases.get(n) or other.cases.get(n) for n in names]
    cases.sort(key=case_sort_key)
    rows = []
    for c in cases:
        bs = base.series(c.name)
        os_ = other.series(c.name)
        if bs is not None and os_ is not None and bs.metric != os_.metric:
            cmp = stats.compare(None, None)
            cmp.verdict = stats.UNDEFINED  # one side latency, the other bandwidth
        else:
            cmp = compare_series(base, other, c.name, bs, os_, opts)
        rows.append(Row(c.name, category_of(c), c.metric, cmp))
    extra_cmps = [compare_series(base, other, key, bs, os_, opts) for key, bs, os_ in (extra or [])]
    stats.decide([r.cmp for r in rows] + extra_cmps, min_effect=opts.min_effect, level=opts.level,
                 adjust=opts.adjust)
    if extra is None:
        return rows
    return rows, extra_cmps


def compare_tables(base, other, tables, base_key, other_key, opts=None):
    """Compare two kernels' cases and summary-table cells together.

    Returns (rows, {(table index, column index): Comparison}).  A cell that
    is one case gets that case's comparison, so the tables and the case
    list always agree.
    """
    extra = []
    where = []
    for ti, t in enumerate(tables):
        for ci, col in enumerate(t.columns):
            a, b = col.cells.get(base_key), col.cells.get(other_key)
            if a is not None and b is not None and a.combine is None and b.combine is None \
                    and a.cases[0].name == b.cases[0].name:
                where.append((ti, ci, ("case", a.cases[0].name)))
                continue
            extra.append((f"cell:{t.title}:{col.label}",
                          a.series() if a is not None else None,
                          b.series() if b is not None else None))
            where.append((ti, ci, ("extra", len(extra) - 1)))
    rows, extra_cmps = compare_sides(base, other, opts, extra)
    by_case = {r.case: r.cmp for r in rows}
    cells = {}
    for ti, ci, (kind, ref) in where:
        cells[(ti, ci)] = by_case[ref] if kind == "case" else extra_cmps[ref]
    return rows, cells


def flatten_meta(meta, skip=RUN_ONLY_KEYS):
    """meta dict -> {key or key.subkey: text}; nested objects one level;
    keys in `skip` (by default those that differ between any two runs) left
    out."""
    out = {}
    for k, v in meta.items():
        if k in skip:
            continue
        if isinstance(v, dict) and v:
            for sk, sv in v.items():
                out[f"{k}.{sk}"] = meta_text(sv)
        else:
            out[k] = meta_text(v)
    return out


def meta_differences(base_meta, other_meta):
    """[(key, base text, other text)] for every condition that differs
    between the sides, other than the kernel itself."""
    a = flatten_meta(base_meta)
    b = flatten_meta(other_meta)
    keys = list(a) + [k for k in b if k not in a]
    return [(k, a.get(k, "(absent)"), b.get(k, "(absent)")) for k in keys if a.get(k) != b.get(k)]


@dataclass
class Report:
    base: Side
    other: Side
    rows: list
    differences: list = field(default_factory=list)


def run_compare(base, other, opts=None):
    return Report(base, other, compare_sides(base, other, opts), meta_differences(base.meta, other.meta))


def value_text(v, unit, div):
    if v is None or math.isnan(v):
        return "-"
    return stats.fmt_num(v / div)


def row_cells(row):
    """Text cells of one comparison row (terminal and CSV share them)."""
    c = row.cmp
    ref = c.base if not math.isnan(c.base) else c.other
    unit, div = stats.unit_for(row.metric, ref)
    return {
        "case": row.case,
        "base": value_text(c.base, unit, div),
        "other": value_text(c.other, unit, div),
        "unit": unit,
        "change": c.change_text,
        "ratio": "-" if math.isnan(c.ratio) else f"{c.ratio:.3f}",
        "ci": c.ci_text,
        "p": _p_text(c.q if not math.isnan(c.q) else c.p),
        "reps": f"{c.base_reps}/{c.other_reps}",
        "verdict": c.verdict + (" (?)" if c.unresolved else ""),
    }


def _p_text(p):
    if p is None or math.isnan(p):
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def format_report(rep, changed_only=False, opts=None):
    """The terminal text of one comparison."""
    from .text import table
    opts = opts or Options()
    out = []
    out.append(f"Comparing {rep.other.label} ({len(rep.other.runs)} run(s), {rep.other.n_reps} reps) "
               f"against baseline {rep.base.label} ({len(rep.base.runs)} run(s), {rep.base.n_reps} reps)")
    n = sum(1 for r in rep.rows if not math.isnan(r.cmp.q))
    adj = f", adjusted for the {n} cases compared" if opts.adjust else ""
    out.append(f"ratio = other/base of the headlines (median of rep medians; time for latency, MB/s for "
               f"bandwidth); {opts.level * 100:.0f}% CI of the ratio by hierarchical bootstrap (reps, then "
               f"samples);")
    out.append(f"p = t-test on the log rep medians{adj}.  Significant = CI excludes 1 and "
               f"p < {1 - opts.level:.2g}; faster/slower also needs a change of at least "
               f"{opts.min_effect * 100:g}%.")
    if len(rep.base.runs) == 1 or len(rep.other.runs) == 1:
        out.append("note: a side with one run: the intervals hold the noise between its reps, not a drift of "
                   "the machine between the two runs (on a shared VM a case has moved 6% between two runs minutes "
                   "apart); pool two or more runs per kernel, interleaved, before trusting a small change.")
    if rep.differences:
        out.append("")
        out.append("WARNING: the two sides differ in more than the kernel:")
        for k, a, b in rep.differences:
            out.append(f"  {k}: {a}  ->  {b}")
    headers = ["case", "base", "other", "unit", "change", "ratio", f"{opts.level * 100:.0f}% CI", "p",
               "reps", "verdict"]
    keys = ["case", "base", "other", "unit", "change", "ratio", "ci", "p", "reps", "verdict"]
    counts = {}
    for cat in CATEGORIES:
        rows = [r for r in rep.rows if r.category == cat]
        for r in rows:
            counts[r.cmp.verdict] = counts.get(r.cmp.verdict, 0) + 1
        if changed_only:
            rows = [r for r in rows if r.cmp.significant]
        if not rows:
            continue
        lat = {r.metric for r in rows}
        direction = " / ".join(stats.direction_text(m) for m in sorted(lat, key=lambda m: m != "latency"))
        out.append("")
        out.append(f"== {cat} ({direction})")
        cells = [row_cells(r) for r in rows]
        out.append(table(headers, [[c[k] for k in keys] for c in cells], right={1, 2, 5, 8}))
    crows = []
    for r in rep.rows:
        if changed_only and not r.cmp.significant:
            continue
        for k, a, b, pct in counter_changes(rep.base.cases.get(r.case), rep.other.cases.get(r.case)):
            crows.append([r.case, COUNTER_LABELS[k], counter_fmt(a), counter_fmt(b), counter_fmt_change(pct)])
    if crows:
        out.append("")
        out.append("== counters per operation (median over reps; the time's verdict above is the one that "
                   "counts: counters explain it)")
        out.append(table(["case", "counter", "base", "other", "change"], crows, right={2, 3}))
    out.append("")
    order = [stats.FASTER, stats.SLOWER, stats.SAME, stats.FEW, stats.MISSING, stats.UNDEFINED]
    out.append("Summary: " + ", ".join(f"{counts[v]} {v}" for v in order if counts.get(v)))
    if changed_only and not any(r.cmp.significant for r in rep.rows):
        out.append("No case changed significantly.")
    n_unres = sum(r.cmp.unresolved for r in rep.rows)
    if n_unres:
        out.append(f"(?) {n_unres} case(s): the interval excludes 1 and the change is large enough, but "
                   f"the t-test is not significant after adjusting for the number of cases: more reps "
                   f"(pool several runs) or fewer cases (--only) would tell.")
        if changed_only:
            out += [f"    {r.case}: {r.cmp.change_text}, CI {r.cmp.ci_text}" for r in rep.rows if r.cmp.unresolved]
    return "\n".join(out)


CSV_FIELDS = ["base", "other", "category", "case", "metric", "base_value", "other_value", "unit",
              "ratio", "ci_low", "ci_high", "p_t", "p_adjusted", "p_rank", "change_pct", "change", "verdict",
              "unresolved", "base_reps",
              "other_reps", "base_samples", "other_samples"]


def csv_rows(rep):
    for r in rep.rows:
        c = r.cmp
        unit = "MB/s" if r.metric == "bandwidth" else "ns"
        yield {
            "base": rep.base.label, "other": rep.other.label, "category": r.category, "case": r.case,
            "metric": r.metric, "base_value": _num(c.base), "other_value": _num(c.other), "unit": unit,
            "ratio": _num(c.ratio), "ci_low": _num(c.lo), "ci_high": _num(c.hi), "p_t": _num(c.p),
            "p_adjusted": _num(c.q), "p_rank": _num(c.p_rank),
            "change_pct": _num(c.change), "change": c.change_text, "verdict": c.verdict,
            "unresolved": "yes" if c.unresolved else "",
            "base_reps": c.base_reps, "other_reps": c.other_reps, "base_samples": c.base_samples,
            "other_samples": c.other_samples,
        }


def _num(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{v:.6g}"


def write_csv(reports, f):
    w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
    w.writeheader()
    for rep in reports:
        for row in csv_rows(rep):
            w.writerow(row)
