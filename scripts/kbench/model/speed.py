"""The machine's CPU speed in each run, and CPU-bound cases judged relative to it.

On a shared VM the whole machine speeds up and slows down between runs by
more than the kernel changes people look for, and every CPU-bound case
moves with it.  The CPU control cases (user-space work no kernel can
change, declared by their binary in the cpu domain) measure that speed in
every run: a run's speed is the mean log time of its CPU controls, each
the run's own point estimate over its reps.  A comparison then judges a
CPU-bound case relative to that speed: each run's reps of the case are
rescaled to the baseline side's mean speed (a time by exp(base - run), a
bandwidth by the inverse), so a side's runs agree as far as the machine
explains them and the two sides are compared at one speed.  The
memory-bound cases follow the memory system (their own controls guard
them), the file-system-bound cases move on their own: both stay as
measured.

A step of the speed below defaults.SPEED_STEP stops no verdict of a
CPU-bound case (the controls moving significantly by that much put every
case out of judgement); the file-system- and memory-bound cases keep the
machine-shift threshold.  A kernel that slowed the user-space
controls themselves would bias every relative verdict by as much: the
guard shows such a move, and --as-measured judges every case as measured.
"""
import math

import numpy as np

from . import bootstrap, stats


def cpu_control_names(runs):
    """The CPU control cases present in every run (sorted), or [] if any
    run lacks them all: the speed of runs compared with one another must be
    the mean over the same controls."""
    names = None
    for r in runs:
        got = {n for n, c in r.cases.items() if c.control and (c.decl.get("domain") or "cpu") == "cpu"
               and c.reps}
        names = got if names is None else names & got
    return sorted(names or ())


def run_speed(run, names, estimator=stats.DEFAULT_ESTIMATOR):
    """A run's CPU speed: the mean over `names` of each control's log time
    (the estimator over the run's reps, no bootstrap); nan when a control
    has no usable rep."""
    if not names:
        return math.nan
    logs = []
    for n in names:
        c = run.cases.get(n)
        if c is None or not c.reps:
            return math.nan
        y = stats.Series.single(c.rep_arrays(), c.metric, n).log_times()
        y = y[~np.isnan(y)]
        if not len(y):
            return math.nan
        logs.append(float(bootstrap.estimate(y, estimator)))
    return sum(logs) / len(logs)


def factors(series, speeds, ref):
    """The per-rep factors that put a series at speed `ref`: a time is
    multiplied by exp(ref - run speed), a bandwidth divided by it; keyed by
    the run of each rep (series.units).  None when a rep's run has no
    speed."""
    out = []
    for u in series.units:
        s = speeds.get(u)
        if s is None or math.isnan(s):
            return None
        f = math.exp(ref - s)
        out.append(f if stats.lower_is_better(series.metric) else 1.0 / f)
    return out


def rescaled(series, speeds, ref):
    """A copy of a Series with every rep's samples (every component) put at
    speed `ref` (factors); the series itself when any rep's run has no
    speed."""
    fs = factors(series, speeds, ref)
    if fs is None:
        return series
    reps = [tuple(a * f for a in r) for r, f in zip(series.reps, fs)]
    return stats.Series(reps, series.combine, series.metric, series.label, series.units, series.estimator)
