"""A series of kernels: each compared with the one before it, and where
each case changed.

The kernels are put in release order (`version_key`: 6.1 < 6.1.5 <
6.6-rc1 < 6.6-rc7 < 6.6 < 6.12, the label after the version) or in the
order the user gives.  Each kernel is compared with the one before it
with compare's own statistics (the run level with its drift prior, the
control cases' machine check, the adjustment's families); a series of N
kernels makes N - 1 such steps, N - 1 times the chances of a false step,
so every family is adjusted over all the steps together (one
Benjamini-Hochberg pass over a table's cases at every step: `compare.
decide_pending`).

A change is a step judged faster, slower or FAILED.  Whether it stayed is
read from the kernel after it against the kernel before it (two steps
apart, that case alone compared like a step, outside the series'
adjustment: a second look at a step already found, not a search): judged
the same way,
it stayed; otherwise, when the next step went back, the two steps are one
change that went back; otherwise, when the control cases moved between
those two kernels (a machine shift: that look judges nothing), it cannot
be told; otherwise it did not stay.  A change at the last kernel has no
kernel after it to tell.
"""
import math
import re
from dataclasses import dataclass, field

from . import compare, guards, judge, stats, tables as tables_mod, tails
from .decl import natural_key

_VERSION = re.compile(r"(\d+(?:\.\d+)*)")
_RC = re.compile(r"[-.~_]?rc(\d+)")


def version_key(kernel):
    """Sort key of a kernel's release in release order: the dotted version
    (6.6 = 6.6.0), a release candidate before its release (6.6-rc1 <
    6.6-rc7 < 6.6), then the rest of the name (a label, a Debian ABI
    number) in natural order; names without a version after every
    versioned one."""
    text = str(kernel)
    m = _VERSION.match(text)
    if not m:
        return (1, (), (1, 0), natural_key(text))
    nums = tuple(int(x) for x in m.group(1).split("."))
    nums += (0,) * max(0, 3 - len(nums))
    rest = text[m.end():]
    rc = _RC.match(rest)
    if rc:
        return (0, nums, (0, int(rc.group(1))), natural_key(rest[rc.end():]))
    return (0, nums, (1, 0), natural_key(rest))


class OrderError(Exception):
    """--order names a kernel that is not there, or several."""


def order_groups(groups, order=None):
    """(the groups of the series in order, the groups left out): by release
    (`version_key`, then host), or the kernels `order` names, in its order
    (each name a label HOST/KERNEL, a kernel, or the unique label ending in
    /NAME or kernel starting with NAME); the others are left out."""
    if not order:
        return sorted(groups, key=lambda g: (version_key(g.kernel), natural_key(g.host))), []
    chosen = []
    for name in order:
        hits = [g for g in groups if name in (g.label, g.kernel) or name.strip("/") == g.label]
        if not hits:
            hits = [g for g in groups if g.label.endswith("/" + name) or g.kernel.startswith(name)]
        if len(hits) != 1:
            raise OrderError(f"--order {name!r} matches " + (
                "several kernels: " + ", ".join(g.label for g in hits) if hits else
                "no kernel found; there are: " + ", ".join(g.label for g in groups)))
        if hits[0] in chosen:
            raise OrderError(f"--order names {hits[0].label} twice")
        chosen.append(hits[0])
    return chosen, [g for g in groups if g not in chosen]


def parse_order(text):
    return [t.strip() for t in (text or "").split(",") if t.strip()]


@dataclass
class Step:
    """One kernel against the one before it."""
    base: object          # load.Group
    other: object
    rows: list            # compare.Row per case
    cells: dict           # (table index, column index) -> stats.Comparison
    shift: object         # compare.MachineShift or None


@dataclass
class Change:
    """A case that changed at one step of the series."""
    case: str
    category: str
    metric: str
    index: int            # the kernel where it changed (its index in the series)
    cmp: object           # the step's stats.Comparison
    stayed: str           # "yes", "no", "back" (the next step went back), "unknown" (the last kernel),
    #                       "unjudged" (a machine shift between the kernel before and the kernel after)
    stay_cmp: object = None   # the kernel after against the kernel before (None at the last kernel)
    back: object = None       # the step that went back (stats.Comparison), with stayed "back"
    stay_shift: object = None  # compare.MachineShift of that look, with stayed "unjudged"

    @property
    def size(self):
        r = self.cmp.ratio
        return abs(math.log(r)) if r and r > 0 and not math.isnan(r) else math.inf


@dataclass
class Result:
    groups: list          # load.Group in series order
    sides: list           # compare.Side per group
    tables: list          # tables.Table
    steps: list           # Step per kernel after the first
    changes: list         # Change, largest first
    left_out: list = field(default_factory=list)
    opts: object = None

    def label(self, i):
        return self.groups[i].label


def analyse(groups, opts, sides=None, tabs=None, warn=None):
    """The series of these groups (already in order): every step compared
    and judged together, the changes found, each with whether it stayed.
    sides/tabs: the compare.Side per group and the summary tables when the
    caller has them (the page: one bootstrap of each side for both)."""
    if sides is None:
        sides = [compare.Side.from_group(g, warn) for g in groups]
    if tabs is None:
        tabs = tables_mod.build_tables(groups)
    pending = []
    steps = []
    for i in range(1, len(groups)):
        a, b = sides[i - 1], sides[i]
        shift = compare.compare_controls(a, b, opts)
        rows, cells = compare.compare_tables(a, b, tabs, groups[i - 1].key, groups[i].key, opts, shift=shift,
                                             pending=pending)
        steps.append(Step(groups[i - 1], groups[i], rows, cells, shift))
    if pending:
        compare.decide_pending(pending, opts)
    shifts = {}

    def stay(i, case):
        # kernel i + 1 against kernel i - 1, for this one case: a second look at a step already found
        # (the search was adjusted over the series), judged on its own, with the controls of those two
        if i not in shifts:
            shifts[i] = compare.compare_controls(sides[i - 1], sides[i + 1], opts)
        a, b = sides[i - 1], sides[i + 1]
        c = a.cases.get(case) or b.cases.get(case)
        sh = shifts[i]
        cmp = compare.compare_series(a, b, case, a.series(case), b.series(case), opts, sh, compare.domain_of(c))
        stats.decide([cmp], min_effect=opts.min_effect, level=opts.level, adjust=opts.adjust,
                     machine_shift=guards.reason(sh, compare.domain_of(c)) if c is not None else "")
        compare.mark_failures([compare.Row(case, "", cmp.metric, cmp)], a, b)
        return cmp

    changes = []
    taken = set()
    for si, st in enumerate(steps):
        i = si + 1
        for r in st.rows:
            if (r.case, i) in taken or not r.cmp.flagged:
                continue
            ch = Change(r.case, r.category, r.metric, i, r.cmp, "unknown")
            if i + 1 < len(groups):
                ch.stay_cmp = stay(i, r.case)
                nxt = next((x.cmp for x in steps[si + 1].rows if x.case == r.case), None)
                if _same_way(ch.stay_cmp, r.cmp):
                    ch.stayed = "yes"
                elif nxt is not None and _went_back(r.cmp, nxt):
                    ch.stayed, ch.back = "back", nxt
                    taken.add((r.case, i + 1))
                elif ch.stay_cmp.verdict == stats.NOT_JUDGED:
                    # the control cases moved between the kernel before and the kernel after: the look
                    # that would tell judged nothing, which is no evidence that the change went away
                    ch.stayed, ch.stay_shift = "unjudged", shifts[i]
                else:
                    ch.stayed = "no"
            changes.append(ch)
    changes.sort(key=lambda c: (c.cmp.verdict != stats.FAILED, -c.size, c.index, c.case))
    return Result(list(groups), list(sides), tabs, steps, changes, opts=opts)


def _direction(cmp):
    if cmp is None:
        return 0
    if cmp.verdict == stats.FAILED:
        return -2
    if cmp.verdict == stats.SLOWER:
        return -1
    if cmp.verdict == stats.FASTER:
        return 1
    return 0


def _same_way(stay_cmp, cmp):
    d = _direction(stay_cmp)
    return d != 0 and (d == _direction(cmp) or (cmp.verdict == stats.FAILED and stay_cmp.verdict == stats.FAILED))


def _went_back(cmp, nxt):
    """The next step undid this one: judged the other way (a failure that
    works again is FAILED on the next step's base)."""
    if cmp.verdict == stats.FAILED:
        return False
    d = _direction(nxt)
    return d in (-1, 1) and d == -_direction(cmp)


# ------------------------------------------------------------ values per kernel (the trend charts)


def kernel_value(side, key, series, opts):
    """(value, low, high) of one kernel's quantity: its estimate and an
    interval that holds its reps' noise and, with a run level, the drift of
    a run (the prior's or the host's, for the side's number of runs), as a
    comparison's does; nan where it cannot be told."""
    nan = math.nan
    if series is None or not series.n_reps:
        return nan, nan, nan
    series.estimator = opts.estimator
    v = series.headline()
    if series.n_reps < 2:
        return v, nan, nan
    e = side.estimate(key, series, opts)
    if math.isnan(e.se):
        return v, nan, nan
    var, df = e.se ** 2, e.df
    noise = compare.noise_of(side, side, opts)
    if noise:
        c = side.cases.get(key)
        p = judge.plan(side.runs, noise, [key], [compare.domain_of(c) if c is not None else "cpu"], opts,
                       compare.run_cells)[key]
        if math.isfinite(p.sig2) and p.sig2 / max(e.runs, 1) > var:
            se, df = tails.one_kernel(p.sig2, p.rdf, max(e.runs, 1), p.mom, p.hdf, p.rw)
            var = se * se
    t = stats.t_quantile(1.0 - opts.level, df)
    lo = stats.from_log_time(e.theta - t * math.sqrt(var), series.metric)
    hi = stats.from_log_time(e.theta + t * math.sqrt(var), series.metric)
    return v, min(lo, hi), max(lo, hi)
