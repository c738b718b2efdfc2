"""Pure statistics: no I/O, no plotting.

The observation is a rep (one process run): its value is the median of its
samples.  A case's headline is an estimate over the rep values: by default
(`low`) the Harrell-Davis estimate of the 20th percentile of the reps' times
(noise on a shared machine only ever adds time, and reps fall into fast and
slow stretches of the machine: the low quantile follows the fast stretch,
where the median jumps between the two); `median` is the median of the rep
values.  Levels of variation: runs (a stretch of the machine's time) above
reps above samples; see `side_estimate` for how runs enter.  Derived quantities (a
context switch = ring time - working-set time, null I/O = mean of read and
write) are computed per rep from the medians of their component cases in
that rep, so every statistic below works on a `Series`: a list of reps,
each a tuple of per-component sample arrays, plus a combine function.
"""
import functools
import math
import re
import zlib
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .defaults import (  # noqa: F401  (the model's names for them)
    ALPHA, DEFAULT_BOOT, DEFAULT_ESTIMATOR, DEFAULT_MIN_EFFECT, DEFAULT_MIN_REPS, ESTIMATORS, LEVEL, LOW_Q,
    PLAN_MAX_RUNS, POWER,
)

FASTER = "significantly faster"
SLOWER = "significantly slower"
SAME = "no significant change"
FEW = "too few reps"
INCONCLUSIVE = "inconclusive"          # not significant, and could not have seen min_effect
MACHINE = "not judged: machine shift"  # the controls moved: the change may be the machine's
MISSING = "missing"
UNDEFINED = "not comparable"
FAILED = "FAILED"                      # an invocation failed, timed out or crashed on a side


def lower_is_better(metric):
    return metric != "bandwidth"


def direction_text(metric):
    return "lower is better" if lower_is_better(metric) else "higher is better; MB/s = 10^6 B/s"


class Series:
    """Reps of one quantity.  reps: list of tuples of 1-D arrays (one per
    component); combine(list of per-component medians) -> rep value, applied
    element-wise (the medians may be arrays).  None = the single component."""

    def __init__(self, reps, combine=None, metric="latency", label="", units=None, estimator=None):
        units = list(units) if units is not None else [""] * len(reps)
        kept = [(tuple(np.asarray(a, dtype=float) for a in r), u) for r, u in zip(reps, units)]
        kept = [(r, u) for r, u in kept if all(len(a) for a in r)]
        self.reps = [r for r, _ in kept]
        self.units = [u for _, u in kept]   # the run of each rep
        self.combine = combine
        self.metric = metric
        self.label = label
        self.estimator = estimator or DEFAULT_ESTIMATOR

    @classmethod
    def single(cls, rep_arrays, metric="latency", label="", units=None, estimator=None):
        return cls([(a,) for a in rep_arrays], None, metric, label, units, estimator)

    @property
    def n_units(self):
        return len(set(self.units))

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
        """Each rep's value: the median of its samples (combined for a derived
        series).  Computed once: the reps never change after construction."""
        cached = getattr(self, "_rep_values", None)
        if cached is None:
            cached = self._rep_values = np.array([self._combine([_median(a) for a in r])
                                                  for r in self.reps], dtype=float)
        return cached.copy()

    def headline(self):
        """The case's value: the estimator over the rep values (ns or MB/s)."""
        y = self.log_times()
        if not len(y):
            return math.nan
        if np.any(np.isnan(y)) or self.estimator == "median":
            # (derived values that are not positive: the plain median too)
            return float(np.median(self.rep_values()))
        return from_log_time(estimate(y, self.estimator), self.metric)

    def log_times(self):
        """log of each rep's time per unit of work (ns/op; for bandwidth
        1/MB/s), so that lower is always faster; nan where not positive."""
        return to_log_time(self.rep_values(), self.metric)

    def all_samples(self):
        """Every sample of a plain series (derived ones have no samples of
        their own: returns the per-rep values)."""
        if self.combine is None:
            return np.concatenate([r[0] for r in self.reps]) if self.reps else np.array([])
        return self.rep_values()


def to_log_time(values, metric):
    v = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(v > 0, np.log(np.where(v > 0, v, 1.0)), math.nan)
    return y if lower_is_better(metric) else -y


def from_log_time(y, metric):
    return float(math.exp(y if lower_is_better(metric) else -y))


_HD_CACHE = {}


def _median(a):
    """np.median of a small array, without numpy's per-call overhead (a
    rep has a few samples; a report takes the median of 100 000 of them)."""
    v = sorted(a.tolist() if hasattr(a, "tolist") else a)
    n = len(v)
    if n == 0:
        return math.nan
    h = n // 2
    return float(v[h]) if n % 2 else (v[h - 1] + v[h]) / 2.0


def hd_weights(n, q):
    """Harrell-Davis weights of the sorted values for quantile q: a smooth
    weighted average of every order statistic (less jumpy than one order
    statistic with few reps)."""
    key = (n, q)
    w = _HD_CACHE.get(key)
    if w is None:
        a, b = q * (n + 1), (1 - q) * (n + 1)
        cdf = np.array([betainc(a, b, i / n) for i in range(n + 1)])
        w = _HD_CACHE[key] = np.diff(cdf)
    return w


def estimate(y, estimator=DEFAULT_ESTIMATOR, axis=-1):
    """The estimator over log times (last axis): 'low' or 'median'."""
    y = np.asarray(y, dtype=float)
    if estimator == "median":
        return np.median(y, axis=axis)
    if estimator != "low":
        raise ValueError(f"unknown estimator {estimator!r}")
    ys = np.sort(y, axis=axis)
    return ys @ hd_weights(ys.shape[axis], LOW_Q)


@functools.lru_cache(maxsize=4096)
def t_quantile(p_two_sided, df):
    """t such that a two-sided test with df degrees of freedom has p
    (memoised: the same levels and degrees of freedom recur).

    Newton's method on the two-sided p, whose slope is twice Student's
    density, kept inside a bracket that halves whenever a step would leave
    it: about 5 evaluations of the p instead of the 55 of halving alone."""
    if math.isinf(df) or df > 1e6:
        df = 1e6
    if math.isnan(p_two_sided) or math.isnan(df) or df <= 0:
        return math.nan
    lo, hi = 0.0, 1.0
    while t_two_sided_p(hi, df) > p_two_sided and hi < 1e6:
        lo, hi = hi, hi * 2.0
    log_norm = math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi)
    t = (lo + hi) / 2.0
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
        if not lo < nxt < hi:
            nxt = (lo + hi) / 2.0       # the step leaves the bracket: halve it instead
        if nxt == t or abs(nxt - t) <= 4.0 * math.ulp(t) or hi - lo <= 4.0 * math.ulp(hi):
            return nxt
        t = nxt
    return t


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


@dataclass
class SideEstimate:
    theta: float      # the estimator on log times
    se: float         # its standard error from the reps
    df: float         # degrees of freedom of se
    n: int            # reps
    runs: int
    run_p: float      # one-way test of the runs (nan: one run)
    run_unit: bool    # True: the runs disagree, so the run is the unit
    run_thetas: tuple = ()   # the estimator of each run (with 2 runs or more)


def boot_se(b):
    """Standard error from bootstrap estimates: the interquartile range /
    1.349 (the sd where the IQR is 0).  With bimodal reps (fast and slow
    stretches of the machine) the bootstrap distribution of a low quantile
    has a long tail from resamples short of fast reps, which the sd would
    count in full: the interval would be far wider than it needs to be."""
    b = b[np.isfinite(b)]
    if len(b) < 2:
        return math.nan
    q1, q3 = quartiles(b) if _NUMPY_LERP else np.percentile(b, [25, 75])
    iqr = float(q3 - q1) / 1.349
    return iqr if iqr > 0 else float(np.std(b, ddof=1))


# numpy computes percentiles this way ('linear', then its _lerp) since 1.22
_NUMPY_LERP = tuple(int(x) for x in re.findall(r"\d+", np.__version__)[:2]) >= (1, 22)


def quartiles(b):
    """np.percentile(b, [25, 75]) of 2 values or more without nan, the same
    numbers as numpy 1.22 on computes them, without its overhead (a third
    of a bootstrap of 5 reps): the order statistics on either side of
    (n - 1) q, and between them a + (b - a) t, or b - (b - a) (1 - t) when
    t >= 0.5."""
    n = len(b)
    pos = [(n - 1) * 0.25, (n - 1) * 0.75]
    low = [math.floor(v) for v in pos]
    part = np.partition(b, sorted({low[0], low[0] + 1, low[1], low[1] + 1}))
    out = []
    for v, i in zip(pos, low):
        x, y, t = float(part[i]), float(part[i + 1]), v - i
        d = y - x
        out.append(y - d * (1.0 - t) if t >= 0.5 else x + d * t)
    return out


def estimator_df(n, estimator):
    """Degrees of freedom of a side's standard error.  A quantile estimator
    rests on fewer reps than n: Kish's effective number of its weights,
    n_eff = 1 / sum(w^2), is 2.3 of 5 reps and 7.5 of 30 for the 20th
    percentile.  The geometric mean of n - 1 and n_eff - 1 kept the
    coverage of the 95% interval between 93% and 99% for 3 to 30 reps of
    normal, skewed and bimodal reps in simulation (n - 1 alone: 90%;
    n_eff - 1 alone: over 99%)."""
    if n < 2:
        return math.nan
    w = hd_weights(n, LOW_Q if estimator == "low" else 0.5)
    n_eff = 1.0 / float(np.sum(w * w))
    return math.sqrt((n - 1) * max(1.0, n_eff - 1.0))


# Resamples drawn and sorted at a time: 96 KB of values, so that no
# resample matrix is fresh memory (in a VM each new page costs ~10 us: the
# whole matrix at once, 800 KB for 50 reps, cost more than its sort; below
# 128 KB the allocator reuses freed memory), and 2000 resamples of up to 6
# reps are one block.
BOOT_BLOCK_BYTES = 96 << 10
_SCRATCH = {}           # (rows, n) -> the matrix the resamples are sorted in
_SCRATCH_MAX_BYTES = 16 << 20


def _scratch(rows, n):
    m = _SCRATCH.get((rows, n))
    if m is None:
        m = np.empty((rows, n))
        if m.nbytes <= _SCRATCH_MAX_BYTES:
            if len(_SCRATCH) >= 8:
                _SCRATCH.pop(next(iter(_SCRATCH)))
            _SCRATCH[(rows, n)] = m
    return m


# How a block of resamples is sorted (a row's order depends on the data,
# so np.sort mispredicts a branch every few values): up to NETWORK_MAX reps
# a sorting network, the same compare-exchanges on every row at once
# (columns of the block); above, by counting how often a row drew each rep
# (a few passes over the block).  Measured on 2000 resamples: 36 us for 5
# reps (np.sort 63), 180 for 16 (380), 0.77 ms for 50 (2.4).
NETWORK_MAX = 16
_NETWORKS = {}


def sorting_network(n):
    """Compare-exchange pairs (i, j), i < j, that sort n values in this
    order: Batcher's odd-even merge sort of the next power of two, without
    the pairs that reach past n (those would meet a +inf pad: no swap)."""
    net = _NETWORKS.get(n)
    if net is None:
        size = 1
        while size < n:
            size *= 2
        net = []
        p = 1
        while p < size:
            k = p
            while k >= 1:
                for j in range(k % p, size - k, 2 * k):
                    for i in range(min(k, size - j - k)):
                        if (i + j) // (2 * p) == (i + j + k) // (2 * p) and i + j + k < n:
                            net.append((i + j, i + j + k))
                k //= 2
            p *= 2
        net = _NETWORKS[n] = tuple(net)
    return net


def boot_estimates(y, n_boot, rng, estimator):
    """The estimator of n_boot resamples of y with replacement:
    estimate(y[rng.integers(0, n, size=(n_boot, n))], estimator), the same
    draws and the same arithmetic (the generator gives the same numbers in
    blocks of rows as all at once), a block of rows at a time into one
    reused matrix.  A resample's sorted values are the same numbers however
    they are sorted: y has no nan, and its zeros (a time of exactly 1) all
    carry one sign."""
    n = len(y)
    m = _scratch(n_boot, n)
    step = max(1, BOOT_BLOCK_BYTES // (8 * n))
    if n <= NETWORK_MAX:
        net = sorting_network(n)
        tmp = np.empty(min(step, n_boot))
    else:
        order = np.argsort(y, kind="stable")
        ys = y[order]
        rank = np.empty(n, dtype=np.intp)
        rank[order] = np.arange(n)
        rows = np.arange(min(step, n_boot))[:, None]
    for lo in range(0, n_boot, step):
        hi = min(n_boot, lo + step)
        k = hi - lo
        idx = rng.integers(0, n, size=(k, n))
        if n <= NETWORK_MAX:
            cols = np.take(y, idx.T, mode="wrap")       # (in range: no check) column c = value c of each row
            t = tmp[:k]
            for i, j in net:
                a, b = cols[i], cols[j]
                np.minimum(a, b, out=t)
                np.maximum(a, b, out=b)
                a[...] = t
            m[lo:hi] = cols.T
            continue
        # Per row: how often each rank was drawn; where the run of each rank
        # ends in the sorted row (a cumulative sum); how many runs end at
        # each position; their cumulative sum is each position's rank.
        ends = np.bincount((rank[idx] + rows[:k] * n).ravel(), minlength=k * n).reshape(k, n).cumsum(axis=1)
        ended = np.bincount((ends[:, :-1] + rows[:k] * (n + 1)).ravel(), minlength=k * (n + 1))
        np.take(ys, ended.reshape(k, n + 1)[:, :n].cumsum(axis=1), out=m[lo:hi], mode="wrap")
    if estimator == "low":
        return m @ hd_weights(n, LOW_Q)     # estimate(): the sorted rows times the weights
    return estimate(m, estimator)


def side_estimate(series, n_boot, rng, estimator=None):
    """The estimator of one side with its standard error from its reps
    (resampled with replacement), and what the runs say: with several
    runs, each run's own estimate and a one-way test of whether they
    disagree beyond their reps' noise (a drift of the machine between
    runs).  `compare` turns that into the run level of the model.  With one
    run, nothing in the data can show a drift between runs: the standard
    error holds the reps' noise only (the controls are there for that).
    """
    estimator = estimator or series.estimator
    y = series.log_times()
    units = list(series.units)
    keep = [i for i, v in enumerate(y) if not math.isnan(v)]
    y = y[keep]
    units = [units[i] for i in keep]
    n = len(y)
    if n == 0:
        return SideEstimate(math.nan, math.nan, math.nan, 0, 0, math.nan, False)
    theta = float(estimate(y, estimator))
    by = {}
    for v, u in zip(y, units):
        by.setdefault(u, []).append(v)
    runs = len(by)
    run_p = one_way_p(y, units) if runs > 1 else math.nan
    run_unit = runs > 1 and not math.isnan(run_p) and run_p < ALPHA
    run_thetas = tuple(float(estimate(np.asarray(g), estimator)) for g in by.values()) if runs > 1 else ()
    if n < 2:
        return SideEstimate(theta, math.nan, math.nan, n, runs, run_p, run_unit, run_thetas)
    b = boot_estimates(y, n_boot, rng, estimator)
    # The bootstrap's variance is (n-1)/n of the estimator's.
    se = boot_se(b) * math.sqrt(n / (n - 1))
    return SideEstimate(theta, se, estimator_df(n, estimator), n, runs, run_p, run_unit, run_thetas)


def run_level(a, b):
    """(se, df) of the difference of two sides' estimates with the run as
    the observation: the variance between runs, pooled over both sides'
    runs (each run's estimate around its side's mean), times 1/k_a + 1/k_b.
    A side with one run borrows the other's runs' variance.  None when no
    side has two runs."""
    dev, dof = 0.0, 0
    for e in (a, b):
        if len(e.run_thetas) > 1:
            m = float(np.mean(e.run_thetas))
            dev += sum((t - m) ** 2 for t in e.run_thetas)
            dof += len(e.run_thetas) - 1
    if dof == 0:
        return None
    var = dev / dof
    return math.sqrt(var * (1.0 / max(a.runs, 1) + 1.0 / max(b.runs, 1))), float(dof)


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


@dataclass
class RunSpread:
    """How much whole runs of one case disagree on one host: the pooled
    variance of the runs' estimates around their kernel's mean (ss / dof),
    and the mean of those runs' own squared standard errors (the part of
    that variance their reps explain)."""
    ss: float
    dof: int
    within: float

    @property
    def var(self):
        return self.ss / self.dof


MAX_PRIOR_DF = 1000.0
PRIOR_WEIGHT = 15.0   # what the built-in drift prior counts for against a host's own runs (degrees of freedom)


class RunNoise:
    """The run level of the model, measured on a host: how far one run's
    estimate of a case strays from another run's of the same kernel, beyond
    what the reps of each run account for.

    A run is one stretch of the machine's time; on a VM whose speed drifts
    for minutes, every rep of a run can sit in one regime, so the reps of
    one run cannot show that drift: only runs of one kernel that disagree
    can.  Per case, from every kernel with two runs or more (runs of the
    compared kernels, and earlier runs of other kernels on the host):
    s2 = the pooled variance of the run estimates (dof = sum of runs - 1),
    w = their mean squared standard error.  With a handful of runs s2 is a
    rough guess, so it is moderated across cases (empirical Bayes, as for
    gene-expression arrays: Smyth 2004): the prior of a case's s2 is k0 * w
    (k0 = how much runs typically exceed their reps' noise on this host),
    worth d0 runs, both estimated from the spread of log(s2 / w) over all
    cases.  The moderated m = (d0 k0 w + dof s2) / (d0 + dof); the run
    effect tau2 = max(0, m - w), with d0 + dof degrees of freedom.  A
    comparison adds tau2 (1/k_base + 1/k_other) to the variance of the
    difference of a side with k runs.
    """

    def __init__(self, spreads, runs=0, kernels=0, boots=None, prior=None):
        self.spreads = {k: v for k, v in spreads.items() if v.dof > 0 and v.within > 0 and v.ss >= 0}
        self.runs = runs
        self.kernels = kernels
        self.boots = boots      # boots those runs were made on; None: not recorded for all of them
        # drift.DriftPrior: the built-in drift of each case between runs,
        # measured elsewhere; the host's own spread is weighed against it
        self.prior = prior
        self.k0, self.d0 = self._prior()

    @property
    def measured(self):
        """The host's own runs measured a spread (else: the prior alone)."""
        return bool(self.spreads)

    def _prior(self):
        pts = [(max(v.var / v.within, 1e-9), v.dof) for v in self.spreads.values()]
        if not pts:
            return 1.0, 0.0
        # log(s2 / w) = log(k0) + log(chi2_d / d) - log(chi2_d0 / d0)
        centred = [math.log(r) - (digamma(d / 2.0) - math.log(d / 2.0)) for r, d in pts]
        mean = sum(centred) / len(centred)
        if len(pts) < 10:
            # too few cases to tell the prior's weight: each case on its own
            return math.exp(mean), 0.0
        logs = [math.log(r) for r, _ in pts]
        lm = sum(logs) / len(logs)
        var = sum((x - lm) ** 2 for x in logs) / (len(logs) - 1)
        extra = var - sum(trigamma(d / 2.0) for _, d in pts) / len(pts)
        d0 = MAX_PRIOR_DF if extra <= 0 else min(MAX_PRIOR_DF, 2.0 * _inverse_trigamma(extra))
        if d0 < MAX_PRIOR_DF:
            mean += digamma(d0 / 2.0) - math.log(d0 / 2.0)
        return math.exp(mean), d0

    def __bool__(self):
        return bool(self.spreads) or self.prior is not None

    def tau2(self, key, own_var=None):
        """(tau2, df) of a case: the variance one run's estimate adds on top
        of its reps' noise.

        With a built-in prior (drift.DriftPrior): the prior's tau2_p, worth
        df_p degrees of freedom, alone when the host has not measured the
        case; else weighed with the host's runs: the variance of a run is
        m = (wp (tau2_p + w) + ss) / (wp + dof) (wp = min(df_p,
        PRIOR_WEIGHT); w = those runs' own squared standard error, ss/dof
        their spread), tau2 = m - w, with max(df_p, wp + dof) degrees of
        freedom: with two runs of a kernel the prior dominates, with eight
        the host's own drift has a third of the say, with sixteen half.

        Without a prior: the host's spread moderated towards the host's
        typical one (k0 w worth d0); a case no kernel has two runs of gets
        (k0 - 1) times its own variance (own_var), with d0 degrees of
        freedom.  None without any measurement."""
        v = self.spreads.get(key)
        if self.prior is not None:
            tp, dp = self.prior.get(key)
            if v is None:
                return tp, dp
            # The prior measured another machine: against this host's own
            # runs it counts as at most PRIOR_WEIGHT degrees of freedom (a
            # kernel's 16 runs have half the say), whatever it was worth alone.
            wp = min(dp, PRIOR_WEIGHT)
            m = (wp * (tp + v.within) + v.ss) / (wp + v.dof)
            return max(0.0, m - v.within), max(dp, wp + v.dof)
        if not self.spreads:
            return None
        if v is None:
            if own_var is None or math.isnan(own_var) or self.d0 <= 0:
                return None
            return max(0.0, self.k0 - 1.0) * own_var, self.d0
        m = (self.d0 * self.k0 * v.within + v.ss) / (self.d0 + v.dof)
        return max(0.0, m - v.within), self.d0 + v.dof


def run_spreads(groups):
    """RunSpread per key from groups of per-run (theta, se) dicts: groups is
    a list (one per kernel) of lists (one per run) of {key: (theta, se)}."""
    acc = {}
    for runs in groups:
        if len(runs) < 2:
            continue
        for k in set().union(*runs):
            vals = [r[k] for r in runs if k in r and not (math.isnan(r[k][0]) or math.isnan(r[k][1]))]
            if len(vals) < 2:
                continue
            m = sum(t for t, _ in vals) / len(vals)
            ss, dof, wsum, n = acc.get(k, (0.0, 0, 0.0, 0))
            acc[k] = (ss + sum((t - m) ** 2 for t, _ in vals), dof + len(vals) - 1,
                      wsum + sum(se * se for _, se in vals), n + len(vals))
    out = {}
    for k, (ss, dof, wsum, n) in acc.items():
        out[k] = RunSpread(ss, dof, wsum / n)
    return out


def planned_mde(parts, k, level=LEVEL):
    """The mde of a comparison if each side were k runs like these, pooled.
    parts = (va, dfa, ka, vb, dfb, kb, tau2, dfr): each side's squared se
    (log units), its degrees of freedom and runs, and the host's run effect
    (`RunNoise.tau2`).  One run's rep variance on a side is its se^2 times
    its runs, so k runs give that over k; the run effect adds tau2 (2 / k).
    The reps' degrees of freedom grow with k, the run effect's (measured
    on the host) do not.  nan without parts (no run level to plan with)."""
    if not parts or k < 1:
        return math.nan
    va, dfa, ka, vb, dfb, kb, tau2, dfr = parts
    pa, pb, pr = va * ka / k, vb * kb / k, 2.0 * tau2 / k
    total = pa + pb + pr
    if math.isnan(total):
        return math.nan
    if total <= 0:
        return 0.0
    den = sum(v * v / d for v, d in ((pa, dfa * k / ka), (pb, dfb * k / kb), (pr, dfr)) if v > 0 and d > 0)
    df = total * total / den if den > 0 else math.inf
    # A plan, not a verdict: its degrees of freedom to 3 significant digits
    # (the t quantiles move less than 0.1%), so that the quantiles of the
    # many cases and run counts a page plans for are mostly memoised.
    if math.isfinite(df) and df > 0:
        df = float(f"{df:.3g}")
    return detectable_change(math.sqrt(total), df, level)


def planned_medians(parts_list, ks, level=LEVEL):
    """[(k, the median over parts_list of the planned mde with k runs a
    side)] for each k with any value: what more runs buy over many cases."""
    out = []
    for k in ks:
        v = sorted(x for x in (planned_mde(p, k, level) for p in parts_list) if not math.isnan(x))
        if v:
            out.append((k, v[len(v) // 2]))
    return out


def runs_for(parts, target, cap=PLAN_MAX_RUNS, level=LEVEL):
    """The fewest runs a side whose planned mde is at most target; None when
    even cap runs would not do, or without parts."""
    if not parts:
        return None
    for k in range(1, cap + 1):
        m = planned_mde(parts, k, level)
        if not math.isnan(m) and m <= target:
            return k
    return None


def detectable_change(se, df, level=LEVEL, power=POWER):
    """The smallest relative change (a ratio - 1 > 0) that a difference
    with this standard error would detect at `level` with `power`."""
    if math.isnan(se) or math.isnan(df) or df <= 0:
        return math.nan
    k = t_quantile(1.0 - level, df) + t_quantile(2.0 * (1.0 - power), df)
    return math.expm1(k * se)


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
    median: float = math.nan   # median of the rep medians
    mde: float = math.nan      # smallest change a comparison with a run like this could detect
    runs: int = 0
    run_p: float = math.nan    # the runs disagree (one-way test); nan: one run
    parts: tuple = ()          # `planned_mde`'s parts against runs like these; () without a run level


def summarize(series, n_boot=DEFAULT_BOOT, seed=1, run_noise=None):
    """Per-case summary of a plain (single-component) series.  run_noise:
    the case's (tau2, df) on its host (`RunNoise.tau2`): the mde against
    another set of runs like these then includes the drift between runs."""
    rv = series.rep_values()
    if not len(rv):
        return Summary(series.metric, 0, 0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    est = side_estimate(series, n_boot, seeded_rng(seed, "summary", series.label))
    mde = detectable_change(est.se * math.sqrt(2.0), est.df) if est.n >= 2 else math.nan
    parts = ()
    if run_noise is not None and est.n >= 2 and not math.isnan(est.se):
        k = max(est.runs, 1)
        parts = (est.se ** 2, est.df, k, est.se ** 2, est.df, k, run_noise[0], run_noise[1])
    if run_noise is not None and est.n >= 2 and run_noise[0] > 0:
        vs, vr = 2.0 * est.se ** 2, 2.0 * run_noise[0] / max(est.runs, 1)
        den = (vs * vs / est.df if vs > 0 else 0.0) + vr * vr / run_noise[1]
        mde = detectable_change(math.sqrt(vs + vr), (vs + vr) ** 2 / den)
    elif est.run_unit:
        # Against another set of runs like these: the runs' variance rules.
        var = float(np.var(est.run_thetas, ddof=1))
        mde = max(mde, detectable_change(math.sqrt(2.0 * var / est.runs), est.runs - 1.0))
    samples = series.all_samples()
    best = float(np.min(samples)) if lower_is_better(series.metric) else float(np.max(samples))
    within = [cv_percent(r[0]) for r in series.reps if len(r[0]) >= 2]
    within = [w for w in within if not math.isnan(w)]
    return Summary(
        metric=series.metric,
        n_reps=series.n_reps,
        n_samples=series.n_samples,
        headline=series.headline(),
        best=best,
        rep_min=float(np.min(rv)),
        rep_max=float(np.max(rv)),
        between_cv=cv_percent(rv),
        within_cv=float(np.median(within)) if within else math.nan,
        median=float(np.median(rv)),
        mde=mde,
        runs=est.runs,
        run_p=est.run_p,
        parts=parts,
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
    lo: float             # confidence interval of the ratio (same model as p)
    hi: float
    p: float              # t-test of the difference of the estimators (log scale)
    p_rank: float         # Mann-Whitney on rep values (shown, not decisive)
    base_reps: int
    other_reps: int
    base_samples: int
    other_samples: int
    verdict: str
    change: float         # % faster (>0) or slower (<0); nan if undefined
    q: float = math.nan   # p adjusted for the number of cases compared
    unresolved: bool = False  # p < alpha and the change is large enough, but not
                              # significant after the adjustment: more reps needed
    mde: float = math.nan     # smallest change (ratio - 1) this comparison could detect
    estimator: str = DEFAULT_ESTIMATOR
    df: float = math.nan
    base_run_p: float = math.nan   # runs of a side disagree (one-way test), nan: one run
    other_run_p: float = math.nan
    base_runs: int = 0
    other_runs: int = 0
    run_level: bool = False        # the runs disagreed: the run is the observation
    failure: str = ""              # FAILED: "on SIDE: status (reason)"
    run_sd: float = math.nan       # the host's run-to-run sd of this case (log units; nan: not measured)
    # (va, dfa, ka, vb, dfb, kb, tau2, dfr): the variance parts of the
    # difference (each side's squared se, its df and runs; the host's run
    # effect) when the host's run level was given; () otherwise
    parts: tuple = ()
    family: str = ""               # the adjustment's family (PRIMARY, SECONDARY; "" = one family)
    alone: bool = False            # significant, but it moved alone (decide's groups): INCONCLUSIVE

    @property
    def significant(self):
        return self.verdict in (FASTER, SLOWER)

    def runs_for(self, target, cap=PLAN_MAX_RUNS, level=LEVEL):
        return runs_for(self.parts, target, cap, level)

    @property
    def flagged(self):
        """What a reader must see: a significant change, or a failure."""
        return self.significant or self.verdict == FAILED

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

    @property
    def mde_text(self):
        return mde_text(self.mde)


def mde_text(mde):
    if mde is None or math.isnan(mde):
        return "-"
    if mde > 9.99:
        return ">999%"
    return f"{mde * 100:.1f}%"


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


def welch_df(va, dfa, vb, dfb):
    num = (va + vb) ** 2
    den = (va * va / dfa if va > 0 else 0.0) + (vb * vb / dfb if vb > 0 else 0.0)
    return num / den if den > 0 else math.inf


def compare(base, other, *, n_boot=DEFAULT_BOOT, seed=1, level=LEVEL, min_reps=DEFAULT_MIN_REPS,
            base_est=None, other_est=None, base_id="base", other_id="other", estimator=None,
            run_noise=None):
    """Compare two Series (base = baseline, other = the one judged), without
    a final verdict for comparable cases: see `decide`.

    One model gives the ratio, its interval and p: the difference d of the
    two sides' estimators on log times, with a standard error from each
    side's bootstrap (`side_estimate`) and Welch's degrees of freedom;
    interval = d +- t * se, p from t = d / se.  So the interval excludes 1
    exactly when p < 1 - level.  `mde` is the smallest change this
    comparison could have detected at that level with 80% power.

    run_noise: (tau2, df) of the case on this host (`RunNoise.tau2`): the
    variance a whole run adds to its estimate.  The difference then has
    variance se_a^2 + se_b^2 + tau2 (1/k_a + 1/k_b) for sides of k runs,
    with Welch-Satterthwaite degrees of freedom over the three parts.
    Without it, a side whose runs disagree (one-way test) makes the run the
    observation (`run_level`); with one run a side, nothing in the data can
    show a drift between runs.
    """
    metric = base.metric if base is not None else (other.metric if other is not None else "latency")
    nan = math.nan
    nb = base.n_reps if base is not None else 0
    no = other.n_reps if other is not None else 0
    counts = (nb, no, base.n_samples if nb else 0, other.n_samples if no else 0)
    est_name = estimator or (base.estimator if base is not None else DEFAULT_ESTIMATOR)
    if nb and estimator:
        base.estimator = estimator
    if no and estimator:
        other.estimator = estimator
    a = base.headline() if nb else nan
    b = other.headline() if no else nan
    if nb == 0 or no == 0:
        return Comparison(metric, a, b, nan, nan, nan, nan, nan, *counts, MISSING, nan, estimator=est_name)
    if math.isnan(a) or math.isnan(b) or not (a > 0 and b > 0):
        return Comparison(metric, a, b, nan, nan, nan, nan, nan, *counts, UNDEFINED, nan, estimator=est_name)
    ratio = b / a
    change = speed_change(ratio, metric)
    if nb < min_reps or no < min_reps:
        return Comparison(metric, a, b, ratio, nan, nan, nan, nan, *counts, FEW, change, estimator=est_name)
    if base_est is None:
        base_est = side_estimate(base, n_boot, seeded_rng(seed, base_id, base.label), est_name)
    if other_est is None:
        other_est = side_estimate(other, n_boot, seeded_rng(seed, other_id, other.label), est_name)
    d = other_est.theta - base_est.theta
    va, vb = base_est.se ** 2, other_est.se ** 2
    se = math.sqrt(va + vb) if not (math.isnan(va) or math.isnan(vb)) else nan
    df = welch_df(va, base_est.df, vb, other_est.df) if not math.isnan(se) else nan
    run_mode = base_est.run_unit or other_est.run_unit
    tau = nan
    parts = ()
    if run_noise is not None and not math.isnan(se):
        tau2, dfr = run_noise
        tau = math.sqrt(tau2)
        parts = (va, base_est.df, max(base_est.runs, 1), vb, other_est.df, max(other_est.runs, 1), tau2, dfr)
        vr = tau2 * (1.0 / max(base_est.runs, 1) + 1.0 / max(other_est.runs, 1))
        run_mode = vr > 0
        if vr > 0:
            total = va + vb + vr
            den = sum(v * v / d for v, d in ((va, base_est.df), (vb, other_est.df), (vr, dfr)) if v > 0)
            se, df = math.sqrt(total), (total * total / den if den > 0 else math.inf)
    elif run_mode and not math.isnan(se):
        rl = run_level(base_est, other_est)
        if rl is not None and rl[0] > se:
            se, df = rl
    if math.isnan(se):
        lo = hi = p = mde = nan
    elif se == 0:
        lo = hi = ratio
        p = 1.0 if d == 0 else 0.0
        mde = 0.0
    else:
        t = t_quantile(1.0 - level, df)
        lo_d, hi_d = d - t * se, d + t * se
        if lower_is_better(metric):
            lo, hi = math.exp(lo_d), math.exp(hi_d)
        else:
            lo, hi = math.exp(-hi_d), math.exp(-lo_d)
        p = t_two_sided_p(d / se, df)
        mde = detectable_change(se, df, level)
    _, p_rank = mann_whitney(other.rep_values(), base.rep_values())
    return Comparison(metric, a, b, ratio, lo, hi, p, p_rank, *counts, SAME, change, mde=mde,
                      estimator=est_name, df=df, base_run_p=base_est.run_p, other_run_p=other_est.run_p,
                      base_runs=base_est.runs, other_runs=other_est.runs, run_level=run_mode, run_sd=tau,
                      parts=parts)


PRIMARY = "primary"      # the cases behind the summary tables: one family of the adjustment
SECONDARY = "secondary"  # every other case: another family


def decide(comparisons, *, min_effect=DEFAULT_MIN_EFFECT, level=LEVEL, adjust=True, machine_shift=False,
           families=None, groups=None):
    """Give each comparable Comparison its verdict, in place.

    Significant = p, adjusted (Benjamini-Hochberg) for the number of cases
    compared together, is below 1 - level.  families: a label per
    comparison (PRIMARY, SECONDARY); each family is adjusted on its own, so
    the few cases behind the summary tables are not diluted by the hundreds
    of others (None: one family).  Faster or slower also needs
    |ratio - 1| >= min_effect.  Otherwise: *inconclusive* when the
    comparison could not have detected min_effect (its mde is larger) or
    when the change is large and p < 1 - level before the adjustment but not
    after it (marked unresolved: "(?)"), else *no significant change*.
    machine_shift: True, or one bool per comparison (the controls of its
    domain moved between the sides): such a case is never called faster or
    slower, it gets MACHINE.  Adjusting keeps an A/A comparison of a few
    hundred cases free of false alarms; adjust=False judges each case on
    its own.

    groups: None, or a label per comparison (the binary of its case: its
    cases share a path into the kernel).  Then a case outside the primary
    families that is significant with one run on a side, and whose group
    has no other case significant the same way, moved alone: it is
    INCONCLUSIVE, marked `alone`.  A case of one run can jump 30-60% for
    the whole run, one case at a time (A/A runs of a 2-vCPU VM: about one
    run in nine), which no prior of the drift between runs made from a few
    runs covers; a kernel change that moves a path moves its binary's
    other cases too, and the primary cases keep the power to see one
    headline number move alone.
    """
    comparisons = list(comparisons)
    shifts = machine_shift if isinstance(machine_shift, (list, tuple)) else [machine_shift] * len(comparisons)
    fams = list(families) if families is not None else [""] * len(comparisons)
    if len(shifts) != len(comparisons) or len(fams) != len(comparisons):
        raise ValueError("decide: machine_shift and families need one entry per comparison")
    if groups is not None and len(groups) != len(comparisons):
        raise ValueError("decide: groups needs one entry per comparison")
    for c in comparisons:
        c.alone = False
    for c, f in zip(comparisons, fams):
        c.family = f
    live = [(c, s, f) for c, s, f in zip(comparisons, shifts, fams) if c.verdict not in (MISSING, UNDEFINED, FEW)]
    qs = {}
    for fam in dict.fromkeys(f for _, _, f in live):
        members = [c for c, _, f in live if f == fam]
        ps = [c.p for c in members]
        got = bh_adjust(ps) if adjust else np.asarray(ps, dtype=float)
        qs.update({id(c): float(q) for c, q in zip(members, got)})
    alpha = 1.0 - level
    for c, shifted, _ in live:
        q = qs[id(c)]
        c.q = q
        significant = not math.isnan(q) and q < alpha
        big = abs(c.ratio - 1.0) >= min_effect
        c.unresolved = False
        if significant and big:
            c.verdict = MACHINE if shifted else (FASTER if c.change > 0 else SLOWER)
        else:
            weak = math.isnan(c.mde) or c.mde > min_effect
            c.unresolved = (not math.isnan(c.p)) and c.p < alpha and big and not significant
            # p < alpha before the adjustment and a change large enough: never
            # "no significant change" (it read as "no significant change (?)")
            c.verdict = INCONCLUSIVE if weak or c.unresolved else SAME
    if groups is not None:
        moved = {}
        for c, g in zip(comparisons, groups):
            if c.verdict in (FASTER, SLOWER):
                moved.setdefault((g, c.verdict), []).append(c)
        for c, g, f in zip(comparisons, groups, fams):
            if (c.verdict in (FASTER, SLOWER) and not f.startswith(PRIMARY) and min(c.base_runs, c.other_runs) == 1
                    and len(moved[(g, c.verdict)]) == 1):
                c.verdict = INCONCLUSIVE
                c.alone = True
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
