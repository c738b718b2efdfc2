"""Pure statistics: no I/O, no plotting.

The independent observation is a rep (one process run).  A case's headline
is the median over reps of each rep's median.  Derived quantities (a
context switch = ring time - working-set time, null I/O = mean of read and
write) are computed per rep from the medians of their component cases in
that rep, so every statistic below works on a `Series`: a list of reps,
each a tuple of per-component sample arrays, plus a combine function.
"""
import math
import zlib
from dataclasses import dataclass
from itertools import combinations

import numpy as np

LEVEL = 0.95
ALPHA = 0.05
DEFAULT_BOOT = 2000
DEFAULT_MIN_EFFECT = 0.03
DEFAULT_MIN_REPS = 3

FASTER = "significantly faster"
SLOWER = "significantly slower"
SAME = "no significant change"
FEW = "too few reps"
MISSING = "missing"
UNDEFINED = "not comparable"


def lower_is_better(metric):
    return metric != "bandwidth"


def direction_text(metric):
    return "lower is better" if lower_is_better(metric) else "higher is better"


class Series:
    """Reps of one quantity.  reps: list of tuples of 1-D arrays (one per
    component); combine(list of per-component medians) -> rep value, applied
    element-wise (the medians may be arrays).  None = the single component."""

    def __init__(self, reps, combine=None, metric="latency", label=""):
        self.reps = [tuple(np.asarray(a, dtype=float) for a in r) for r in reps]
        self.reps = [r for r in self.reps if all(len(a) for a in r)]
        self.combine = combine
        self.metric = metric
        self.label = label

    @classmethod
    def single(cls, rep_arrays, metric="latency", label=""):
        return cls([(a,) for a in rep_arrays], None, metric, label)

    @property
    def n_reps(self):
        return len(self.reps)

    @property
    def n_samples(self):
        """Samples of the first component (for a plain case: all samples)."""
        return int(sum(len(r[0]) for r in self.reps))

    def _combine(self, medians):
        if self.combine is None:
            return medians[0]
        return self.combine(medians)

    def rep_values(self):
        return np.array([self._combine([np.median(a) for a in r]) for r in self.reps], dtype=float)

    def headline(self):
        v = self.rep_values()
        return float(np.median(v)) if len(v) else math.nan

    def all_samples(self):
        """Every sample of a plain series (derived ones have no samples of
        their own: returns the per-rep values)."""
        if self.combine is None:
            return np.concatenate([r[0] for r in self.reps]) if self.reps else np.array([])
        return self.rep_values()

    def boot_rep_matrix(self, n_boot, rng):
        """(n_reps, n_boot): each rep's value recomputed from samples drawn
        with replacement within that rep."""
        out = np.empty((self.n_reps, n_boot))
        for i, r in enumerate(self.reps):
            meds = []
            for a in r:
                idx = rng.integers(0, len(a), size=(n_boot, len(a)))
                meds.append(np.median(a[idx], axis=1))
            out[i] = self._combine(meds)
        return out

    def boot_headlines(self, n_boot, rng):
        """Hierarchical bootstrap of the headline: draw reps with
        replacement, then samples within each drawn rep."""
        n = self.n_reps
        m = self.boot_rep_matrix(n_boot, rng)
        ri = rng.integers(0, n, size=(n_boot, n))
        ci = rng.integers(0, n_boot, size=(n_boot, n))
        return np.median(m[ri, ci], axis=1)


def cv_percent(x):
    """Coefficient of variation in % (sample std / mean); nan below 2 values."""
    x = np.asarray(x, dtype=float)
    if len(x) < 2:
        return math.nan
    mean = float(np.mean(x))
    if mean == 0:
        return math.nan
    return float(np.std(x, ddof=1) / abs(mean) * 100.0)


@dataclass
class Summary:
    metric: str
    n_reps: int
    n_samples: int
    headline: float
    best: float          # lowest latency / highest bandwidth of all samples
    rep_min: float       # smallest rep median
    rep_max: float       # largest rep median
    between_cv: float    # CV% of the rep medians
    within_cv: float     # median over reps of each rep's CV%


def summarize(series):
    """Per-case summary of a plain (single-component) series."""
    rv = series.rep_values()
    if not len(rv):
        return Summary(series.metric, 0, 0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    samples = series.all_samples()
    best = float(np.min(samples)) if lower_is_better(series.metric) else float(np.max(samples))
    within = [cv_percent(r[0]) for r in series.reps if len(r[0]) >= 2]
    within = [w for w in within if not math.isnan(w)]
    return Summary(
        metric=series.metric,
        n_reps=series.n_reps,
        n_samples=series.n_samples,
        headline=float(np.median(rv)),
        best=best,
        rep_min=float(np.min(rv)),
        rep_max=float(np.max(rv)),
        between_cv=cv_percent(rv),
        within_cv=float(np.median(within)) if within else math.nan,
    )


# ------------------------------------------------------------ rank test


def mann_whitney(x, y):
    """Two-sided Mann-Whitney U test.  Returns (U of x, p).

    Exact (permutation distribution of U) for small samples, the normal
    approximation with tie and continuity corrections otherwise.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        return math.nan, math.nan
    u = float(np.sum(x[:, None] > y[None, :]) + 0.5 * np.sum(x[:, None] == y[None, :]))
    mean_u = n1 * n2 / 2.0
    allv = np.concatenate([x, y])
    ties = len(np.unique(allv)) < len(allv)
    if not ties and n1 + n2 <= 60:
        dist = _u_distribution(n1, n2)
        total = dist.sum()
        k = int(round(u))
        lower = dist[: k + 1].sum() / total
        upper = dist[k:].sum() / total
        return u, float(min(1.0, 2.0 * min(lower, upper)))
    if ties and math.comb(n1 + n2, n1) <= 20000:
        return u, _exact_p_with_ties(allv, n1, u, mean_u)
    # Normal approximation.
    n = n1 + n2
    _, counts = np.unique(allv, return_counts=True)
    tie_term = float(np.sum(counts ** 3 - counts)) / (n * (n - 1))
    var = n1 * n2 / 12.0 * ((n + 1) - tie_term)
    if var <= 0:
        return u, 1.0
    z = (abs(u - mean_u) - 0.5) / math.sqrt(var)
    z = max(z, 0.0)
    return u, float(min(1.0, math.erfc(z / math.sqrt(2.0))))


def _u_distribution(n1, n2):
    """Counts of the arrangements of n1 x's and n2 y's for each U (no ties).

    Recurrence on the largest value: it is an x (adds n2 to U) or a y.
    """
    # table[j] = distribution for (i, j) as i grows; start with i = 0.
    prev = [np.ones(1, dtype=float) for _ in range(n2 + 1)]  # i = 0: U = 0
    for i in range(1, n1 + 1):
        cur = [None] * (n2 + 1)
        cur[0] = np.ones(1, dtype=float)  # j = 0: U = 0
        for j in range(1, n2 + 1):
            size = i * j + 1
            d = np.zeros(size)
            a = prev[j]            # largest is an x: U += j
            d[j: j + len(a)] += a
            b = cur[j - 1]         # largest is a y
            d[: len(b)] += b
            cur[j] = d
        prev = cur
    return prev[n2]


def _exact_p_with_ties(allv, n1, u, mean_u):
    """Exact permutation p-value of U with mid-ranks (small samples)."""
    n = len(allv)
    order = np.argsort(allv, kind="mergesort")
    ranks = np.empty(n)
    sorted_v = allv[order]
    i = 0
    while i < n:
        j = i
        while j + 1 < n and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        ranks[order[i: j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    offset = n1 * (n1 + 1) / 2.0
    observed = abs(u - mean_u)
    hits = 0
    total = 0
    for idx in combinations(range(n), n1):
        uu = ranks[list(idx)].sum() - offset
        total += 1
        if abs(uu - mean_u) >= observed - 1e-9:
            hits += 1
    return hits / total


def min_rank_p(n1, n2):
    """The smallest two-sided p the rank test can give with n1 and n2 reps."""
    if n1 <= 0 or n2 <= 0:
        return 1.0
    return min(1.0, 2.0 / math.comb(n1 + n2, n1))


def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t, df):
    """Two-sided p of Student's t with df degrees of freedom."""
    if math.isnan(t) or math.isnan(df) or df <= 0:
        return math.nan
    if math.isinf(t):
        return 0.0
    return min(1.0, max(0.0, betainc(df / 2.0, 0.5, df / (df + t * t))))


def welch_t(x, y):
    """Welch's t-test of mean(y) vs mean(x).  Returns (t, df, p)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n1, n2 = len(x), len(y)
    if n1 < 2 or n2 < 2:
        return math.nan, math.nan, math.nan
    v1 = float(np.var(x, ddof=1)) / n1
    v2 = float(np.var(y, ddof=1)) / n2
    diff = float(np.mean(y) - np.mean(x))
    se2 = v1 + v2
    if se2 <= 0:
        return (0.0, math.inf, 1.0) if diff == 0 else (math.copysign(math.inf, diff), math.inf, 0.0)
    t = diff / math.sqrt(se2)
    df = se2 * se2 / ((v1 * v1 / (n1 - 1) if v1 else 0.0) + (v2 * v2 / (n2 - 1) if v2 else 0.0))
    return t, df, t_two_sided_p(t, df)


def log_welch_p(base_values, other_values):
    """Welch's t-test on log rep values (a test of the ratio); raw values if
    any is not positive (derived quantities may be)."""
    a = np.asarray(base_values, dtype=float)
    b = np.asarray(other_values, dtype=float)
    if len(a) and len(b) and np.all(a > 0) and np.all(b > 0):
        a, b = np.log(a), np.log(b)
    return welch_t(a, b)[2]


def bh_adjust(pvalues):
    """Benjamini-Hochberg adjusted p-values (nan stays nan and is not
    counted)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(len(p), math.nan)
    idx = np.where(~np.isnan(p))[0]
    m = len(idx)
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="mergesort")]
    q = p[order] * m / np.arange(1, m + 1)
    q = np.minimum.accumulate(q[::-1])[::-1]
    out[order] = np.minimum(q, 1.0)
    return out


# ------------------------------------------------------------ comparison


@dataclass
class Comparison:
    metric: str
    base: float
    other: float
    ratio: float          # other / base (time for latency, MB/s for bandwidth)
    lo: float             # bootstrap confidence interval of the ratio
    hi: float
    p: float              # Welch t-test on log rep values
    p_rank: float         # Mann-Whitney on rep values (shown, not decisive)
    base_reps: int
    other_reps: int
    base_samples: int
    other_samples: int
    verdict: str
    change: float         # % faster (>0) or slower (<0); nan if undefined
    q: float = math.nan   # p adjusted for the number of cases compared
    unresolved: bool = False  # looks like a change (CI excludes 1, big enough) but
                              # not significant after the adjustment: more reps needed

    @property
    def significant(self):
        return self.verdict in (FASTER, SLOWER)

    @property
    def comparable(self):
        return self.verdict not in (MISSING, UNDEFINED, FEW)

    @property
    def change_text(self):
        return change_text(self.change)

    @property
    def ci_text(self):
        if math.isnan(self.lo) or math.isnan(self.hi):
            return "-"
        return f"{self.lo:.3f}..{self.hi:.3f}"


def speed_change(ratio, metric):
    """% by which 'other' is faster (positive) or slower (negative)."""
    if ratio is None or math.isnan(ratio) or ratio <= 0:
        return math.nan
    if lower_is_better(metric):
        return (1.0 - ratio) * 100.0 if ratio <= 1.0 else -(ratio - 1.0) * 100.0
    return (ratio - 1.0) * 100.0


def change_text(change):
    """'12.3% faster', '4.0% slower', 'same', or '-'."""
    if change is None or math.isnan(change):
        return "-"
    if abs(change) < 0.05:
        return "same"
    word = "faster" if change > 0 else "slower"
    return f"{abs(change):.1f}% {word}"


def seeded_rng(seed, *parts):
    """A generator seeded from `seed` and strings, so that every case of
    every side gets its own reproducible stream."""
    h = zlib.crc32("\x1f".join(str(p) for p in parts).encode("utf-8", "replace"))
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, h])


def compare(base, other, *, n_boot=DEFAULT_BOOT, seed=1, level=LEVEL, min_reps=DEFAULT_MIN_REPS,
            base_boot=None, other_boot=None, base_id="base", other_id="other"):
    """Compare two Series (base = baseline, other = the one judged), without
    a final verdict for comparable cases: see `decide`.

    The ratio is other/base of the headlines; its interval comes from a
    hierarchical bootstrap of both sides (precomputed bootstrap headlines
    may be passed in).  p is Welch's t-test on the log rep values, p_rank
    the Mann-Whitney test on the rep values.
    """
    metric = base.metric if base is not None else (other.metric if other is not None else "latency")
    nan = math.nan
    nb = base.n_reps if base is not None else 0
    no = other.n_reps if other is not None else 0
    counts = (nb, no, base.n_samples if nb else 0, other.n_samples if no else 0)
    a = base.headline() if nb else nan
    b = other.headline() if no else nan
    if nb == 0 or no == 0:
        return Comparison(metric, a, b, nan, nan, nan, nan, nan, *counts, MISSING, nan)
    if math.isnan(a) or math.isnan(b) or not (a > 0 and b > 0):
        return Comparison(metric, a, b, nan, nan, nan, nan, nan, *counts, UNDEFINED, nan)
    ratio = b / a
    change = speed_change(ratio, metric)
    if nb < min_reps or no < min_reps:
        return Comparison(metric, a, b, ratio, nan, nan, nan, nan, *counts, FEW, change)
    if base_boot is None:
        base_boot = base.boot_headlines(n_boot, seeded_rng(seed, base_id, base.label))
    if other_boot is None:
        other_boot = other.boot_headlines(n_boot, seeded_rng(seed, other_id, other.label))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = other_boot / base_boot
    ratios = ratios[np.isfinite(ratios)]
    tail = (1.0 - level) / 2.0 * 100.0
    if len(ratios):
        lo, hi = (float(v) for v in np.percentile(ratios, [tail, 100.0 - tail]))
    else:
        lo = hi = nan
    bv, ov = base.rep_values(), other.rep_values()
    p = log_welch_p(bv, ov)
    _, p_rank = mann_whitney(ov, bv)
    c = Comparison(metric, a, b, ratio, lo, hi, p, p_rank, *counts, SAME, change)
    return c


def decide(comparisons, *, min_effect=DEFAULT_MIN_EFFECT, level=LEVEL, adjust=True):
    """Give each comparable Comparison its verdict, in place.

    Significant = the bootstrap interval of the ratio excludes 1 and the
    t-test's p, adjusted (Benjamini-Hochberg) for the number of cases
    compared together, is below 1 - level.  A verdict of faster or slower
    also needs |ratio - 1| >= min_effect.  Adjusting keeps an A/A
    comparison of a few hundred cases free of false alarms; adjust=False
    judges each case on its own.
    """
    comparisons = list(comparisons)
    live = [c for c in comparisons if c.verdict not in (MISSING, UNDEFINED, FEW)]
    ps = [c.p for c in live]
    qs = bh_adjust(ps) if adjust else np.asarray(ps, dtype=float)
    alpha = 1.0 - level
    for c, q in zip(live, qs):
        c.q = float(q)
        ci_excludes = not math.isnan(c.lo) and (c.lo > 1.0 or c.hi < 1.0)
        significant = ci_excludes and not math.isnan(q) and q < alpha
        big = abs(c.ratio - 1.0) >= min_effect
        c.unresolved = False
        if significant and big:
            c.verdict = FASTER if c.change > 0 else SLOWER
        else:
            c.verdict = SAME
            c.unresolved = ci_excludes and big
    return comparisons


# ------------------------------------------------------------ units


def latency_unit(ns):
    """('ns'|'µs'|'ms', divisor) suited to a latency in ns."""
    if ns is None or math.isnan(ns) or abs(ns) < 1e4:
        return "ns", 1.0
    if abs(ns) < 1e7:
        return "µs", 1e3
    return "ms", 1e6


def unit_for(metric, value):
    if metric == "bandwidth":
        return "MB/s", 1.0
    return latency_unit(value)


def fmt_num(v):
    """A number with about 3-4 significant digits, no exponent."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}".replace(",", "")
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    if a == 0:
        return "0"
    return f"{v:.3f}"


def fmt_pct(v, digits=1):
    if v is None or math.isnan(v):
        return "-"
    return f"{v:.{digits}f}%"
