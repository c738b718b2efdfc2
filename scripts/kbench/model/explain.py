"""Why a case changed: its kernel profiles and event counts, side by side.

`kbench-run --profile` leaves one line per case in a run's profiles.jsonl:
the share of perf samples per function (kernel and user apart) and the
kernel's event counts per operation (src/REFERENCE.md, Profiles).  For a
case compared between two kernels this module ranks the functions whose
share changed most, attributes time to them (share x the case's headline
time per operation, on each side) and lists the event counts per
operation that changed.  `scripts/compare --explain` prints it; the page
shows it under each changed case.

Everything here is arithmetic on the files: no perf, no numpy.
"""
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import stats
from .load import iter_jsonl

PROFILES = "profiles.jsonl"
# Functions shown per case, by change of share (self), and by change of
# inclusive share (the function and what it calls).
TOP_SELF = 10
TOP_INCLUSIVE = 5
# Event counts shown per case: those that moved by at least this factor,
# and were at least this many per operation on one side.
EVENT_FACTOR = 1.25
EVENT_FLOOR = 0.01
TOP_EVENTS = 10

# Compiler clones of one function keep its name with a suffix that may
# differ between two builds of a kernel: foo.isra.0, foo.constprop.3, foo.cold.
_CLONE = re.compile(r"(\.(isra|constprop|part|cold|llvm|lto_priv)(\.\d+)?)+$")


def function_key(space, symbol, dso=""):
    """The name a function is matched by across kernels: its symbol without
    clone suffixes; user functions with their object file."""
    base = _CLONE.sub("", symbol)
    return (space, base) if space == "kernel" else (space, base, dso)


@dataclass
class Profile:
    """One case's profile on one side (pooled over its runs)."""
    case: str
    samples: int = 0
    kernel_share: float = math.nan
    event: str = ""
    self_share: dict = field(default_factory=dict)       # function_key -> share of all samples
    inclusive_share: dict = field(default_factory=dict)  # function_key -> share of samples with it on the stack
    names: dict = field(default_factory=dict)            # function_key -> shown name
    events: dict = field(default_factory=dict)           # "group name" -> per op
    ns_per_op: float = math.nan                          # the profiled invocation's own time per op
    runs: int = 0
    missing: str = ""                                    # why a side has no profile


def read_profiles(run_dir, warn=None):
    """{case: profiles.jsonl line} of one run directory ({} when it has none)."""
    path = Path(run_dir) / PROFILES
    if not path.is_file():
        return {}
    out = {}
    for _lineno, obj, _bad in iter_jsonl(path, warn or (lambda m: None)):
        if isinstance(obj, dict) and isinstance(obj.get("case"), str):
            out[obj["case"]] = obj
    return out


def _num(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _event_items(events):
    """("group name", per op) of a profiles.jsonl "events" object."""
    if not isinstance(events, dict):
        return
    for group in ("vmstat", "softirqs", "interrupts", "slab_active_objs"):
        d = events.get(group)
        if not isinstance(d, dict):
            continue
        label = "slab" if group == "slab_active_objs" else group
        for k, v in d.items():
            x = _num(v)
            if x is not None:
                yield f"{label} {k}", x


def pool(case, lines):
    """One side's Profile from the profiles.jsonl lines of its runs: shares
    weighted by each run's samples, event counts and times averaged."""
    p = Profile(case)
    got = [ln for ln in lines if isinstance(ln.get("profile"), dict)]
    why = [ln.get("profile_missing") or ln.get("reason") or ln.get("status") for ln in lines
           if not isinstance(ln.get("profile"), dict)]
    if not got:
        p.missing = next((w for w in why if isinstance(w, str) and w), "no profile recorded")
    weights = []
    for ln in got:
        prof = ln["profile"]
        n = prof.get("samples") if isinstance(prof.get("samples"), int) else 0
        weights.append(max(n, 0))
    total = sum(weights)
    ks = []
    for ln, w in zip(got, weights):
        prof = ln["profile"]
        p.event = p.event or str(prof.get("event") or "")
        if _num(prof.get("kernel_share")) is not None:
            ks.append((_num(prof.get("kernel_share")), w))
        for space in ("kernel", "user"):
            for s in prof.get(f"{space}_symbols") or []:
                if not isinstance(s, dict) or not isinstance(s.get("symbol"), str):
                    continue
                key = function_key(space, s["symbol"], str(s.get("dso", "")))
                p.names.setdefault(key, _CLONE.sub("", s["symbol"]) if space == "kernel"
                                   else f"{_CLONE.sub('', s['symbol'])} ({s.get('dso', '')})")
                frac = w / total if total else 1.0 / len(got)
                p.self_share[key] = p.self_share.get(key, 0.0) + (_num(s.get("share")) or 0.0) * frac
                p.inclusive_share[key] = (p.inclusive_share.get(key, 0.0)
                                          + (_num(s.get("inclusive_share")) or 0.0) * frac)
    p.samples = total
    p.runs = len(got)
    if ks:
        wsum = sum(w for _, w in ks)
        p.kernel_share = (sum(x * w for x, w in ks) / wsum) if wsum else sum(x for x, _ in ks) / len(ks)
    ev_lines = [ln for ln in lines if isinstance(ln.get("events"), dict)]
    sums = {}
    for ln in ev_lines:
        for k, v in _event_items(ln["events"]):
            sums[k] = sums.get(k, 0.0) + v
    # A counter absent from a run's object did not change in it: 0.
    p.events = {k: v / len(ev_lines) for k, v in sums.items()}
    times = [_num(ln.get("ns_per_op")) for ln in lines if _num(ln.get("ns_per_op"))]
    if times:
        p.ns_per_op = sum(times) / len(times)
    return p


def side_profiles(side, warn=None):
    """{case: Profile} of a compare.Side (its runs pooled)."""
    lines = {}
    for run in side.runs:
        for case, ln in read_profiles(run.path, warn).items():
            lines.setdefault(case, []).append(ln)
    return {case: pool(case, ls) for case, ls in lines.items()}


@dataclass
class FunctionRow:
    name: str
    space: str
    base: float            # share of all samples (nan: not among the listed functions)
    other: float
    base_ns: float         # share x time per operation
    other_ns: float

    @property
    def points(self):
        """Change of share in percentage points (absent = 0)."""
        return 100.0 * ((0.0 if math.isnan(self.other) else self.other) - (0.0 if math.isnan(self.base) else self.base))

    @property
    def delta_ns(self):
        b = 0.0 if math.isnan(self.base_ns) else self.base_ns
        o = 0.0 if math.isnan(self.other_ns) else self.other_ns
        return o - b


@dataclass
class EventRow:
    name: str
    base: float
    other: float

    @property
    def factor(self):
        if self.base == 0 or self.other == 0:
            return math.inf
        return self.other / self.base


@dataclass
class Explanation:
    case: str
    verdict: str
    change_text: str
    metric: str
    base_label: str
    other_label: str
    base_ns: float          # the time per operation shares are multiplied by, per side
    other_ns: float
    time_source: str        # "headline" or "profiled run"
    base: Profile = None
    other: Profile = None
    functions: list = field(default_factory=list)     # FunctionRow, by |change of share|
    inclusive: list = field(default_factory=list)     # FunctionRow of inclusive shares
    events: list = field(default_factory=list)        # EventRow

    @property
    def complete(self):
        return bool(self.base and self.other and not self.base.missing and not self.other.missing)


def rank_functions(base, other, base_ns, other_ns, inclusive=False, top=TOP_SELF):
    """FunctionRows of the functions whose share changed most (percentage
    points, either sign), with the time per operation attributed to them on
    each side; a function listed on one side only has share 0 (below the
    listed ones) on the other."""
    a = base.inclusive_share if inclusive else base.self_share
    b = other.inclusive_share if inclusive else other.self_share
    rows = []
    for key in set(a) | set(b):
        sa, sb = a.get(key, math.nan), b.get(key, math.nan)
        name = base.names.get(key) or other.names.get(key) or key[1]
        rows.append(FunctionRow(name, key[0], sa, sb, sa * base_ns if not math.isnan(sa) else math.nan,
                                sb * other_ns if not math.isnan(sb) else math.nan))
    rows.sort(key=lambda r: (-abs(r.points), -abs(r.delta_ns), r.name))
    return rows[:top]


def rank_events(base, other, top=TOP_EVENTS):
    """EventRows of the counts per operation that moved by EVENT_FACTOR or
    more (or appeared), at least EVENT_FLOOR per op on one side; largest
    moves first."""
    rows = []
    for k in set(base.events) | set(other.events):
        a, b = base.events.get(k, 0.0), other.events.get(k, 0.0)
        if max(abs(a), abs(b)) < EVENT_FLOOR:
            continue
        r = EventRow(k, a, b)
        f = r.factor
        if not math.isinf(f) and f > 0 and 1 / EVENT_FACTOR < f < EVENT_FACTOR:
            continue
        rows.append(r)
    rows.sort(key=lambda r: (-(math.inf if math.isinf(r.factor) or r.factor <= 0 else abs(math.log(r.factor))),
                             -abs(r.other - r.base), r.name))
    return rows[:top]


def explain_case(case, verdict, change_text, metric, base_value, other_value, base, other,
                 base_label="base", other_label="other"):
    """The Explanation of one case from its two Profiles (either may be
    None).  base_value/other_value: the headline values of the comparison
    (ns per op for latency; for bandwidth the profiled invocations' own
    time per op is used, the headline being MB/s)."""
    if metric == "latency" and _num(base_value) and _num(other_value):
        bns, ons, src = float(base_value), float(other_value), "headline"
    else:
        bns = base.ns_per_op if base else math.nan
        ons = other.ns_per_op if other else math.nan
        src = "profiled run"
    e = Explanation(case, verdict, change_text, metric, base_label, other_label, bns, ons, src, base, other)
    if e.complete:
        e.functions = rank_functions(base, other, bns, ons)
        e.inclusive = rank_functions(base, other, bns, ons, inclusive=True, top=TOP_INCLUSIVE)
    if base and other:
        e.events = rank_events(base, other)
    return e


def explain_rows(rows, base, other, everything=True, profiles=None):
    """Explanations of comparison rows (compare.Row) between two sides
    (anything with .runs and .label: a compare.Side, a load.Group): every
    case flagged (faster, slower, failed), then (everything) every other
    case with a profile on both sides.  `profiles`: (base {case: Profile},
    other {case: Profile}) if already read."""
    bp, op = profiles or (side_profiles(base), side_profiles(other))
    out = []
    flagged = [r for r in rows if r.cmp.flagged]
    rest = [r for r in rows if not r.cmp.flagged and everything and r.case in bp and r.case in op
            and not bp[r.case].missing and not op[r.case].missing]
    for r in flagged + rest:
        c = r.cmp
        change = c.failure if c.verdict == stats.FAILED else (stats.change_text(c.change)
                                                                if not math.isnan(c.change) else "")
        out.append(explain_case(r.case, c.verdict, change, r.metric, c.base, c.other, bp.get(r.case),
                                op.get(r.case), base.label, other.label))
    return out


def explain_report(rep, everything=True):
    """Explanations of a compare.Report (see explain_rows)."""
    return explain_rows(rep.rows, rep.base, rep.other, everything)
