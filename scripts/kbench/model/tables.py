"""The summary tables: one row per kernel, one column per quantity, one
table per category.

Every column is declared by the benchmark binaries (the `summary` of a
case's declaration, see decl): its label, note, position and how its value
is made.  A column maps, for each kernel (group), to a `Cell`: one case, or
a value derived per rep from several cases of the same rep ("mean": the
mean of the cases sharing the column, e.g. null I/O of read and write;
"minus": a case minus another variant with the same parameters, e.g. a
context switch = ring time - working-set time).  A column that a kernel's
runs do not have is missing, never zero.

Size-swept quantities ("pick") use one size for every kernel, chosen from
what the runs have and stated in the column header.  "cache_levels" picks,
per kernel, the sizes that sit inside each cache level according to
meta.cache (when a machine reports none, e.g. a VM, the plateaus of the
case's own latency curve: curve_levels); "largest" takes each kernel's
largest size.
"""
import math

import numpy as np
from dataclasses import dataclass, field

from . import stats
from .runs import parse_params


@dataclass
class Cell:
    """Where a table cell's value comes from."""
    cases: list                  # load.Case objects, in the order combine expects
    combine: object = None       # f(list of per-case medians) -> value; None = the one case
    desc: str = ""               # how the value is made, e.g. "(A + B) / 2"
    note: str = ""               # per-kernel remark (e.g. the size used)
    per: str = ""                # one case, its time per event of this sample key (e.g. minflt)
    from_curve: bool = False     # a cache level's size guessed from the latency curve (CURVE_NOTE)

    @property
    def key(self):
        if self.per and not self.desc:
            return f"{self.cases[0].name} per {self.per}"
        return self.desc or self.cases[0].name

    def series(self, estimator=None):
        """The cell's Series: its runs as units (the run level of the model),
        the headline by `estimator` (default: stats.DEFAULT_ESTIMATOR)."""
        if self.combine is None and self.per:
            c = self.cases[0]
            by_rep = c.per_event.get(self.per, {})
            keys = [k for k in c.rep_keys() if by_rep.get(k)]
            return stats.Series.single([np.asarray(by_rep[k], dtype=float) for k in keys], c.metric,
                                       f"{c.name} per {self.per}", units=[k[0] for k in keys],
                                       estimator=estimator)
        if self.combine is None:
            c = self.cases[0]
            return stats.Series.single(c.rep_arrays(), c.metric, c.name, units=c.rep_units(),
                                       estimator=estimator)
        common = set(self.cases[0].reps)
        for c in self.cases[1:]:
            common &= set(c.reps)
        keys = sorted(common, key=lambda k: (str(k[0]), k[1]))
        reps = [tuple(c.reps[k] for c in self.cases) for k in keys]
        s = stats.Series(reps, self.combine, self.cases[0].metric, self.key, units=[k[0] for k in keys],
                         estimator=estimator)
        s.case_names = tuple(c.name for c in self.cases)    # whose drift the cell's is (judge.cell_tau2)
        return s


@dataclass
class Column:
    label: str
    note: str
    cells: dict = field(default_factory=dict)   # group key -> Cell or None


@dataclass
class Table:
    title: str
    metric: str
    columns: list


def _matching_params(c, bench, variant, want, placement):
    """The parameters of case c if it is bench/variant with samples, the
    placement (when one is required) and every parameter of `want`; else
    None."""
    if c.bench != bench or c.variant != variant or not c.reps:
        return None
    if placement is not None and c.placement != placement:
        return None
    p = parse_params(c.params)
    if any(p.get(k) != v for k, v in want.items()):
        return None
    return p


def find_case(group, bench, variant, params=None, placement=None):
    """The case of `group` with this bench and variant whose params include
    `params` (a dict); placement: required placement or None for any.  The
    candidate with the fewest extra parameters wins."""
    want = {k: str(v) for k, v in (params or {}).items()}
    best = None
    for c in group.cases.values():
        p = _matching_params(c, bench, variant, want, placement)
        if p is None:
            continue
        extra = len(p) - len(want)
        if best is None or (extra, c.name) < best[0]:
            best = ((extra, c.name), c)
    return best[1] if best else None


def param_values(groups, bench, variant, key, params=None, placement=None):
    """Sorted numeric values of parameter `key` over the matching cases of
    all groups."""
    want = {k: str(v) for k, v in (params or {}).items()}
    out = set()
    for g in groups:
        for c in g.cases.values():
            p = _matching_params(c, bench, variant, want, placement)
            if p is None:
                continue
            try:
                out.add(int(p[key]))
            except (KeyError, ValueError):
                pass
    return sorted(out)


def size_text(kb):
    if kb is None:
        return "-"
    if kb >= 1024 and kb % 1024 == 0:
        return f"{kb // 1024} MB"
    return f"{kb} KB"


def _summary_cases(group, label, category, placement):
    """The cases of `group` that declare summary column `label` of
    `category` (with samples, the required placement if any)."""
    out = []
    for c in group.cases.values():
        d = c.decl
        s = d["summary"]
        if c.control or not c.reps or s is None or s["column"] != label or d["category"] != category:
            continue
        if s.get("placement") and c.placement != s["placement"]:
            continue
        out.append(c)
    return sorted(out, key=lambda c: (d_rank(c), c.name))


def d_rank(c):
    return c.decl["rank"]


def _size_of(c, key):
    try:
        return int(parse_params(c.params)[key])
    except (KeyError, ValueError, TypeError):
        return None


def _mean(meds):
    return sum(meds) / len(meds)


def _difference(meds):
    return meds[0] - meds[1]


def _resolve_one(spec):
    def resolve(group):
        cs = _summary_cases(group, spec["column"], spec["category"], spec.get("placement"))
        if not cs:
            return None
        per = spec.get("per") or ""
        if per and not cs[0].per_event.get(per):
            return None   # the samples do not count that event: missing, not per op
        return Cell([cs[0]], per=per)
    return resolve


def _resolve_mean(spec, n_declared):
    def resolve(group):
        cs = _summary_cases(group, spec["column"], spec["category"], spec.get("placement"))
        if not cs or len(cs) < n_declared:
            return None   # a part is missing: never a mean of fewer parts
        if len(cs) == 1:
            return Cell(cs)
        return Cell(cs, _mean, "(" + " + ".join(c.name for c in cs) + f") / {len(cs)}")
    return resolve


def _resolve_minus(spec):
    def resolve(group):
        cs = _summary_cases(group, spec["column"], spec["category"], spec.get("placement"))
        if not cs:
            return None
        c = cs[0]
        subtract = [o for o in group.cases.values()
                    if o.bench == c.bench and o.variant == spec["minus"] and o.params == c.params and o.reps]
        if not subtract:
            return None
        o = min(subtract, key=lambda x: (_index_placement(x.placement), x.name))
        return Cell([c, o], _difference, f"{c.name} - {o.name}")
    return resolve


def _index_placement(p):
    order = ["", "pinned", "same", "cross", "unpinned"]
    return order.index(p) if p in order else len(order)


def _sized_cases(group, spec):
    """The cases of `group` in the column `spec` that have its size parameter."""
    return [c for c in _summary_cases(group, spec["column"], spec["category"], spec.get("placement"))
            if _size_of(c, spec["size_param"]) is not None]


def _sized_cells(groups, spec, size):
    """Cells of the case of size `size` (or, size None, each group's largest)."""
    key = spec["size_param"]

    def resolve(group):
        cs = _sized_cases(group, spec)
        if not cs:
            return None
        if size is None:
            return Cell([max(cs, key=lambda c: _size_of(c, key))])
        hit = [c for c in cs if _size_of(c, key) == size]
        return Cell([hit[0]]) if hit else None
    return resolve


def _all_sizes(groups, spec):
    key = spec["size_param"]
    out = set()
    for g in groups:
        for c in _summary_cases(g, spec["column"], spec["category"], spec.get("placement")):
            v = _size_of(c, key)
            if v is not None:
                out.add(v)
    return sorted(out)


def _cache_sizes(group):
    """{level: size_kb} of the data/unified caches in meta.cache."""
    out = {}
    for c in group.cache_levels():
        t = str(c.get("type", "")).lower()
        lvl, size = c.get("level"), c.get("size_kb")
        if t.startswith("instr") or not isinstance(lvl, int) or not isinstance(size, (int, float)):
            continue
        if size > 0:
            out[lvl] = max(out.get(lvl, 0), size)
    return out


def pick_level_size(sizes, lo, hi):
    """A tested size well inside a cache level of `hi` KB whose next-smaller
    level is `lo` KB (0 for L1): at least 2*lo and at most hi/2 when one
    exists, nearest to the geometric middle; else any size in (lo, hi]."""
    inside = [s for s in sizes if s >= 2 * lo and s <= hi / 2]
    if not inside:
        inside = [s for s in sizes if lo < s <= hi]
    if not inside:
        return None
    if lo <= 0:
        return max(inside)
    mid = math.sqrt(lo * hi)
    return min(inside, key=lambda s: (abs(math.log(s / mid)), s))


# Without meta.cache (a VM whose kernel reports no cache sizes), the cache
# levels are guessed from the latency curve of the random chain itself.
STEP = 1.5   # a latency this many times its plateau's first is the next level's
CURVE_NOTE = ("meta.cache records no cache sizes for these runs (the machine reported none): L1, L2 and L3 are "
              "sizes on the first three plateaus of the random chain's own latency curve, a plateau being the "
              f"sizes whose latency stays below {STEP:g} times its first; the last plateau is left to main memory")


def curve_plateaus(points):
    """The plateaus of a latency curve [(size, latency)]: lists of sizes in
    increasing order, a new one starting at each size whose latency is at
    least STEP times the first of the current plateau (a step up: the data
    no longer fit a cache level)."""
    out = []
    for s, v in sorted(points):
        if not out or v >= STEP * out[-1][0][1]:
            out.append([])
        out[-1].append((s, v))
    return [[s for s, _ in p] for p in out]


def curve_levels(points):
    """{level: sizes of its plateau} for L1, L2, L3 from a latency curve
    [(size, latency)]: its first three plateaus, never its last one (the
    sweep reaches main memory, the "main mem" column): a curve of three
    plateaus gives L1 and L2 only."""
    plateaus = curve_plateaus([(s, v) for s, v in points if v > 0 and not math.isnan(v)])[:-1]
    return {i + 1: p for i, p in enumerate(plateaus[:3])}


def _middle(sizes):
    """The size nearest the geometric middle of a plateau (the smaller of two)."""
    mid = math.sqrt(sizes[0] * sizes[-1])
    return min(sizes, key=lambda s: (abs(math.log(s / mid)), s))


def _level_from_curve(cs, level):
    """The cell of cache `level` from the plateaus of the cases' latency
    curve ({size: case}), None without that many plateaus."""
    points = [(s, float(np.median([np.median(a) for a in c.rep_arrays()]))) for s, c in cs.items() if c.reps]
    plateau = curve_levels(points).get(level)
    if not plateau:
        return None
    s = _middle(plateau)
    span = size_text(plateau[0]) + (f"..{size_text(plateau[-1])}" if len(plateau) > 1 else "")
    return Cell([cs[s]], note=f"{size_text(s)} array; L{level} guessed from the latency curve (plateau {span}), "
                              "not meta.cache", from_curve=True)


def _resolve_level(spec, level):
    """The case inside cache `level` (1, 2, 3) of each group's machine (from
    the latency curve when meta.cache says nothing)."""
    key = spec["size_param"]

    def resolve(group):
        caches = _cache_sizes(group)
        cs = {_size_of(c, key): c for c in _summary_cases(group, spec["column"], spec["category"],
                                                          spec.get("placement"))}
        cs.pop(None, None)
        if not caches:
            return _level_from_curve(cs, level)
        if level not in caches:
            return None
        lo = caches.get(level - 1, 0) if level > 1 else 0
        s = pick_level_size(sorted(cs), lo, caches[level])
        if s is None:
            return None
        return Cell([cs[s]], note=f"{size_text(s)} array; L{level} is {size_text(int(caches[level]))}")
    return resolve


MAIN_MEMORY_FACTOR = 4   # an array this many times the last-level cache is main memory


def _resolve_largest(spec):
    """The largest size of each group, with a word when it is not well
    beyond the last-level cache."""
    key = spec["size_param"]

    def resolve(group):
        cs = _sized_cases(group, spec)
        if not cs:
            return None
        c = max(cs, key=lambda x: _size_of(x, key))
        s = _size_of(c, key)
        note = f"{size_text(s)} array"
        caches = _cache_sizes(group)
        if caches:
            llc = max(caches)
            if s < MAIN_MEMORY_FACTOR * caches[llc]:   # the binaries' rule (harness/memory.hpp)
                note += f" (not 4x the {size_text(int(caches[llc]))} L{llc}: partly cached)"
        return Cell([c], note=note)
    return resolve


def declared_columns(groups):
    """{category: (category rank, metric, {column label: spec})} from the
    summary columns the cases of these groups declare; spec = the declared
    summary plus its category and the number of cases declaring it."""
    out = {}
    for g in groups:
        for c in g.cases.values():
            d = c.decl
            s = d["summary"]
            if c.control or s is None:
                continue
            rank, metric, cols = out.setdefault(d["category"], [d["category_rank"], c.metric, {}])
            out[d["category"]][0] = min(rank, d["category_rank"])
            spec = cols.get(s["column"])
            if spec is None:
                spec = cols[s["column"]] = dict(s, category=d["category"], variants=set())
            spec["variants"].add((c.bench, c.variant, c.params))
    return out


def _columns_of(groups, spec):
    """[(order, label, note, resolver)] of one declared column."""
    combine = spec.get("combine") or "one"
    note, order, label = spec.get("note") or "", spec["order"], spec["column"]
    if combine == "mean":
        return [(order, label, note, _resolve_mean(spec, len(spec["variants"])))]
    if combine == "minus":
        return [(order, label, note, _resolve_minus(spec))]
    if combine == "pick":
        sizes = _all_sizes(groups, spec)
        # the largest size every kernel has: a host with an extra, larger size (past 256 MB) compares
        have = [s for s in ({_size_of(c, spec["size_param"]) for c in _sized_cases(g, spec)} for g in groups) if s]
        common = sorted(set.intersection(*have)) if have else []
        size = spec.get("prefer") if spec.get("prefer") in sizes else (common or sizes or [None])[-1]
        if size is None:
            return [(order, label, note, lambda g: None)]
        text = size_text(size) if not note else f"{note}, {size_text(size)}"
        return [(order, label, text, _sized_cells(groups, spec, size))]
    if combine == "largest":
        return [(order, label, note, _resolve_largest(spec))]
    if combine == "cache_levels":
        cols = [(order + i, f"L{lv}", note, _resolve_level(spec, lv)) for i, lv in enumerate((1, 2, 3))]
        main_note = f"{note}, largest" if note else "largest"
        main = _resolve_largest(spec)
        cached = any(c is not None and "partly cached" in c.note for c in map(main, groups))
        return cols + [(order + 3, "largest array" if cached else "main mem", main_note, main)]
    return [(order, label, note, _resolve_one(spec))]


def build_tables(groups):
    """The summary tables resolved for these groups: one per category that
    declares summary columns, in category order, columns in declared order."""
    tables = []
    declared = declared_columns(groups)
    for cat in sorted(declared, key=lambda k: (declared[k][0], k)):
        _, metric, specs = declared[cat]
        cols = []
        for spec in specs.values():
            cols += _columns_of(groups, spec)
        cols.sort(key=lambda x: (x[0], x[1]))
        tables.append(Table(cat, metric, [Column(label, note, {g.key: resolve(g) for g in groups})
                                          for _, label, note, resolve in cols]))
    return tables
