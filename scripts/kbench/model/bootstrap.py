"""A side's estimate of a series and its standard error: the estimators
(the Harrell-Davis low quantile, the median of rep medians) and the
hierarchical bootstrap over runs and reps.  stats.py hands the names on."""
import math
import re
from dataclasses import dataclass

import numpy as np

from .defaults import ALPHA, DEFAULT_ESTIMATOR, LOW_Q
from .pvalues import betainc, one_way_p


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


_SCRATCH = {}           # (use, rows, n) -> a matrix the resamples are sorted or summed in


_SCRATCH_MAX_BYTES = 16 << 20


def _scratch(rows, n, use="rows"):
    """A reused rows x n matrix; one per use, so that two matrices a
    function holds at once never share memory, whatever their shapes (a
    lone case's columns and its rows are both n x n when n_boot is n)."""
    m = _SCRATCH.get((use, rows, n))
    if m is None:
        m = np.empty((rows, n))
        if m.nbytes <= _SCRATCH_MAX_BYTES:
            if len(_SCRATCH) >= 8:
                _SCRATCH.pop(next(iter(_SCRATCH)))
            _SCRATCH[(use, rows, n)] = m
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
    blocks of rows as all at once): up to NETWORK_MAX reps sorted by a
    network (_by_network, as boot_many sorts many at once), above by
    counting, a block of rows at a time into one reused matrix.  A
    resample's sorted values are the same numbers however they are sorted:
    y has no nan, and its zeros (a time of exactly 1) all carry one sign."""
    n = len(y)
    if n <= NETWORK_MAX:
        return _by_network([y], n_boot, [rng], estimator)[0]
    m = _scratch(n_boot, n)
    step = max(1, BOOT_BLOCK_BYTES // (8 * n))
    order = np.argsort(y, kind="stable")
    ys = y[order]
    rank = np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n)
    rows = np.arange(min(step, n_boot))[:, None]
    for lo in range(0, n_boot, step):
        hi = min(n_boot, lo + step)
        k = hi - lo
        idx = rng.integers(0, n, size=(k, n))
        # Per row: how often each rank was drawn; where the run of each rank
        # ends in the sorted row (a cumulative sum); how many runs end at
        # each position; their cumulative sum is each position's rank.
        ends = np.bincount((rank[idx] + rows[:k] * n).ravel(), minlength=k * n).reshape(k, n).cumsum(axis=1)
        ended = np.bincount((ends[:, :-1] + rows[:k] * (n + 1)).ravel(), minlength=k * (n + 1))
        np.take(ys, ended.reshape(k, n + 1)[:, :n].cumsum(axis=1), out=m[lo:hi], mode="wrap")
    if estimator == "low":
        return m @ hd_weights(n, LOW_Q)     # estimate(): the sorted rows times the weights
    return estimate(m, estimator)


# Bootstraps of as many reps sorted together (boot_many): numpy's cost per
# call, most of a bootstrap of 10-16 reps, is paid once for this many cases;
# their resamples, 256 KB a column, stay in the cache.
BATCH_CASES = 16


def boot_many(ys, n_boot, rngs, estimator):
    """[boot_estimates(y, n_boot, rng, estimator) for y, rng in zip(ys,
    rngs)], the same numbers: those of up to NETWORK_MAX reps sorted by one
    network, up to BATCH_CASES of the ys with as many reps at once
    (_by_network).  Each generator draws in turn, in the order of its y
    among those of its number of reps: give each y a generator of its own."""
    out = [None] * len(ys)
    by_n = {}
    for i, y in enumerate(ys):
        if len(y) <= NETWORK_MAX:
            by_n.setdefault(len(y), []).append(i)
        else:
            out[i] = boot_estimates(y, n_boot, rngs[i], estimator)
    for idx in by_n.values():
        for lo in range(0, len(idx), BATCH_CASES):
            batch = idx[lo:lo + BATCH_CASES]
            for i, b in zip(batch, _by_network([ys[i] for i in batch], n_boot, [rngs[i] for i in batch], estimator)):
                out[i] = b
    return out


def _by_network(ys, n_boot, rngs, estimator):
    """boot_estimates of each of ys, all of as many reps (at most
    NETWORK_MAX) and at most BATCH_CASES of them: each generator's draws in
    blocks of rows, the same compare-exchanges on every resample of every
    case at once (a column of the matrix: value c of each resample), then
    each case's sorted resamples in one reused matrix, a row each, times
    the weights."""
    n, width = len(ys[0]), len(ys) * n_boot
    step = max(1, BOOT_BLOCK_BYTES // (8 * n))
    # one matrix for a case alone and one for a batch (no fresh memory), the batch's cases side by side
    full = (BATCH_CASES if len(ys) > 1 else 1) * n_boot
    cols, t = _scratch(n, full, "cols")[:, :width], _scratch(1, full, "swap")[0, :width]
    for k, (y, rng) in enumerate(zip(ys, rngs)):
        for lo in range(0, n_boot, step):
            hi = min(n_boot, lo + step)
            draws = rng.integers(0, n, size=(hi - lo, n))
            np.take(y, draws.T, out=cols[:, k * n_boot + lo:k * n_boot + hi], mode="wrap")   # (in range: no check)
    for i, j in sorting_network(n):
        a, b = cols[i], cols[j]
        np.minimum(a, b, out=t)
        np.maximum(a, b, out=b)
        a[...] = t
    # each case summed in the matrix of its own shape: a BLAS (OpenBLAS) sums a row in an order that
    # depends on the matrix's layout, rows and alignment
    m = _scratch(n_boot, n)
    out = []
    for k in range(len(ys)):
        m[...] = cols[:, k * n_boot:(k + 1) * n_boot].T
        out.append(m @ hd_weights(n, LOW_Q) if estimator == "low" else estimate(m, estimator))
    return out


def side_estimate(series, n_boot, rng, estimator=None):
    """The estimator of one side with its standard error from its reps
    (resampled with replacement), and what the runs say: with several
    runs, each run's own estimate and a one-way test of whether they
    disagree beyond their reps' noise (a drift of the machine between
    runs).  `compare` turns that into the run level of the model.  With one
    run, nothing in the data can show a drift between runs: the standard
    error holds the reps' noise only (the controls are there for that).
    A cell of several cases is the combination of each case's estimate
    (_combined_estimate).
    """
    return side_estimates([(series, rng)], n_boot, estimator)[0]


def side_estimates(items, n_boot, estimator=None):
    """[side_estimate(series, n_boot, rng, estimator) for series, rng in
    items], the same numbers, the bootstraps of the series of one case made
    together (boot_many): each series with a generator of its own."""
    out = [None] * len(items)
    todo = []           # (i, y, theta, the SideEstimate's fields after se and df)
    for i, (series, rng) in enumerate(items):
        est = estimator or series.estimator
        if est != "median" and getattr(series, "combined", lambda: False)():
            got = _combined_estimate(series, n_boot, rng, est)
            if got is not None:
                out[i] = got
                continue
        y, units, by, run_p, run_unit = _reps_by_run(series)
        n, runs = len(y), len(by)
        if n == 0:
            out[i] = SideEstimate(math.nan, math.nan, math.nan, 0, 0, math.nan, False)
            continue
        theta = float(estimate(y, est))
        run_thetas = tuple(float(estimate(np.asarray(g), est)) for g in by.values()) if runs > 1 else ()
        if n < 2:
            out[i] = SideEstimate(theta, math.nan, math.nan, n, runs, run_p, run_unit, run_thetas)
        else:
            todo.append((i, est, y, theta, (n, runs, run_p, run_unit, run_thetas)))
    for est in dict.fromkeys(t[1] for t in todo):
        these = [t for t in todo if t[1] == est]
        boots = boot_many([t[2] for t in these], n_boot, [items[t[0]][1] for t in these], est)
        for (i, _, y, theta, rest), b in zip(these, boots):
            n = len(y)
            # The bootstrap's variance is (n-1)/n of the estimator's.
            se = boot_se(b) * math.sqrt(n / (n - 1))
            out[i] = SideEstimate(theta, se, estimator_df(n, est), *rest)
    return out


def log_combined(combine, metric, thetas):
    """(theta, gradient): combine (a cell's f(values of its cases) -> value)
    of its cases' estimates thetas (log times, as Series.log_times), as a
    log time (nan where it is not positive), and its derivative in each of
    them (numerically)."""
    sign = 1.0 if metric != "bandwidth" else -1.0

    def at(t):
        v = float(combine([math.exp(sign * x) for x in t]))
        return sign * math.log(v) if v > 0 else math.nan
    theta = at(thetas)
    return theta, [(at(thetas[:i] + [thetas[i] + 1e-4] + thetas[i + 1:]) - theta) / 1e-4 for i in range(len(thetas))]


def _reps_by_run(series):
    """(y, units, {run: its log times}, run_p, run_unit) of a series' reps
    with a log time: the one-way test of its runs (nan with one run), and
    whether they disagree."""
    y = series.log_times()
    keep = [i for i, v in enumerate(y) if not math.isnan(v)]
    y, units = y[keep], [series.units[i] for i in keep]
    by = {}
    for v, u in zip(y, units):
        by.setdefault(u, []).append(v)
    run_p = one_way_p(y, units) if len(by) > 1 else math.nan
    return y, units, by, run_p, len(by) > 1 and not math.isnan(run_p) and run_p < ALPHA


def _combined_estimate(series, n_boot, rng, estimator):
    """The estimate of a cell made of several cases (a mean of cases, a
    difference): each case's own estimate and standard error, combined as
    the cell combines values (log_combined), the standard error by
    the delta method and its degrees of freedom Satterthwaite's way; the
    runs' test as for the cell's paired reps, each run's estimate the
    combination of the cases' over its reps.  The cases ran as processes
    of their own, so their errors are independent.  Pairing the cases'
    reps by their index and estimating over the pairs, as before, drew
    which reps meet anew in every run and put that draw in the estimate
    where no bootstrap of the pairs counts it.  None where the combination
    is not positive (the caller estimates over the pairs)."""
    cases = series.components()
    parts = [side_estimate(c, n_boot, rng, estimator) for c in cases]
    if any(math.isnan(p.theta) for p in parts):
        return None
    theta, grad = log_combined(series.combine, series.metric, [p.theta for p in parts])
    if math.isnan(theta):
        return None
    y, units, by, run_p, run_unit = _reps_by_run(series)
    run_thetas = ()
    if len(by) > 1:
        ys = [c.log_times() for c in cases]
        at = {r: [i for i, u in enumerate(series.units) if u == r] for r in by}     # each run's reps
        run_thetas = tuple(log_combined(series.combine, series.metric,
                                        [float(estimate(v[at[r]], estimator)) for v in ys])[0] for r in by)
    counts = (len(y), len(by), run_p, run_unit, run_thetas)
    if any(math.isnan(p.se) for p in parts):
        return SideEstimate(theta, math.nan, math.nan, *counts)
    var, inv = 0.0, 0.0
    for g, p in zip(grad, parts):
        part = g * g * p.se * p.se
        var += part
        inv += part * part / p.df if p.df > 0 else 0.0
    df = var * var / inv if inv > 0 else min(p.df for p in parts)
    return SideEstimate(theta, math.sqrt(var), df, *counts)
