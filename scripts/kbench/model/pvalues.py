"""Distributions and tests on plain numbers: Student's t, Welch's test,
the rank test, the one-way test between runs, Benjamini-Hochberg, and the
special functions they need.  No data structure of the package: stats.py
builds the comparisons on them and hands their names on."""
import functools
import math
from itertools import combinations
from statistics import NormalDist

import numpy as np


# The bracket's top: where the old search by doubling from 1 stopped (the
# first power of two past 1e6); a quantile beyond it is returned as it.
T_MAX = 2.0 ** 20


@functools.lru_cache(maxsize=4096)
def t_quantile(p_two_sided, df):
    """t such that a two-sided test with df degrees of freedom has p
    (memoised: the same levels and degrees of freedom recur).

    Newton's method on the two-sided p, whose slope is twice Student's
    density, from the Cornish-Fisher expansion of t in the normal quantile
    (good to 1e-4 from 5 degrees of freedom at p = .05), kept inside a
    bracket that halves whenever a step would leave it: 5-8 evaluations
    of the p at the levels a report asks for (from t = 1: 11-12; halving
    alone: 55)."""
    if math.isinf(df) or df > 1e6:
        df = 1e6
    if math.isnan(p_two_sided) or math.isnan(df) or df <= 0:
        return math.nan
    lo, hi = 0.0, T_MAX
    log_norm = math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi)
    t = _t_guess(p_two_sided, df)
    if not lo < t < hi:
        t = 1.0
    for _ in range(200):
        diff = t_two_sided_p(t, df) - p_two_sided
        if diff > 0:
            lo = t
        elif diff < 0:
            hi = t
        else:
            return t
        slope = 2.0 * math.exp(log_norm - (df + 1.0) / 2.0 * math.log1p(t * t / df))
        step = diff / slope if slope > 0 else math.inf
        nxt = t + step
        if abs(nxt - t) <= 4.0 * math.ulp(t):
            return nxt                  # (a step this small may land on the bracket's end it just set)
        if not lo < nxt < hi:
            nxt = (lo + hi) / 2.0       # the step leaves the bracket: halve it instead
        if hi - lo <= 4.0 * math.ulp(hi):
            return nxt
        t = nxt
    return t


def _t_guess(p_two_sided, df):
    """Student's t quantile by the Cornish-Fisher expansion in the normal
    quantile z (four terms in 1/df); nan where p is not in (0, 1)."""
    if not 0.0 < p_two_sided < 1.0:
        return math.nan
    z = NormalDist().inv_cdf(1.0 - p_two_sided / 2.0)
    z2 = z * z
    g = ((z2 + 1.0) * z / 4.0, ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0,
         (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0,
         ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0)
    return z + (g[0] + (g[1] + (g[2] + g[3] / df) / df) / df) / df


def cv_percent(x):
    """Coefficient of variation in % (sample std / mean); nan below 2 values
    or with a mean of 0."""
    got = cv_percents([np.asarray(x, dtype=float)])
    return got[0] if got else math.nan


def cv_percents(arrays):
    """cv_percent of each of arrays that has one, not nan, in no order: the
    arrays of one length at once, by rows (a summary takes it of every rep;
    numpy's cost per call was most of a summary of many runs)."""
    by_len = {}
    for a in arrays:
        if len(a) >= 2:
            by_len.setdefault(len(a), []).append(a)
    out = []
    for rows in by_len.values():
        m = np.array(rows, dtype=float)
        mean, sd = np.mean(m, axis=1), np.std(m, axis=1, ddof=1)
        out += [float(s / abs(float(mu)) * 100.0) for s, mu in zip(sd, mean) if mu != 0]
    return [v for v in out if not math.isnan(v)]


def one_way_p(y, units):
    """One-way ANOVA p of the log times between runs (nan with one run or
    no replication inside runs): do the runs disagree beyond their reps?"""
    groups = {}
    for v, u in zip(y, units):
        groups.setdefault(u, []).append(v)
    k = len(groups)
    n = sum(len(g) for g in groups.values())
    if k < 2 or n - k < 1:
        return math.nan
    grand = float(np.mean(y))
    ssb = sum(len(g) * (float(np.mean(g)) - grand) ** 2 for g in groups.values())
    ssw = sum(float(np.sum((np.asarray(g) - np.mean(g)) ** 2)) for g in groups.values())
    if ssw <= 0:
        return 0.0 if ssb > 0 else 1.0
    f = (ssb / (k - 1)) / (ssw / (n - k))
    d1, d2 = k - 1, n - k
    # F survival function through the incomplete beta.
    return float(betainc(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f)))


def digamma(x):
    """psi(x) for x > 0: the recurrence up to x >= 6, then the asymptotic series."""
    acc = 0.0
    while x < 6.0:
        acc -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    return acc + math.log(x) - 0.5 / x - f * (1 / 12.0 - f * (1 / 120.0 - f * (1 / 252.0 - f / 240.0)))


def trigamma(x):
    """psi'(x) for x > 0, the same way."""
    acc = 0.0
    while x < 6.0:
        acc += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    return acc + 1.0 / x + f / 2.0 + f / x * (1 / 6.0 - f * (1 / 30.0 - f * (1 / 42.0 - f / 30.0)))


def _inverse_trigamma(y):
    """x with trigamma(x) = y (y > 0): trigamma falls monotonically."""
    lo, hi = 1e-4, 1e7
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if trigamma(mid) > y:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


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


@functools.lru_cache(maxsize=256)
def _u_distribution(n1, n2):
    """Counts of the arrangements of n1 x's and n2 y's for each U (no ties),
    once per (n1, n2): the cases of a comparison mostly share their rep
    counts.  Read only (cached).

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


def welch_df(va, dfa, vb, dfb):
    num = (va + vb) ** 2
    den = (va * va / dfa if va > 0 else 0.0) + (vb * vb / dfb if vb > 0 else 0.0)
    return num / den if den > 0 else math.inf
