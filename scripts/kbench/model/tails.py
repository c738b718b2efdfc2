"""The tails of the run level: the t distribution every test of the
run-level model (runmodel) takes a difference against."""
import math
from typing import NamedTuple

import numpy as np

from .pvalues import t_quantile

# The tails of the run level, and the prior's weight.  A run now and then
# jumps (a burst of the machine, a new mix of two modes, a regime of the
# memory), so the difference of an unchanged case is not normal: measured on
# the kept A/A series, differences at one run a side scaled by the bulk of
# their cases follow t with 4-6 degrees of freedom (tests/validation/README.md,
# "The run-level model").  Every test of the model takes a difference whose
# variance is v as t with D0 degrees of freedom scaled to that variance
# (tailed), and so do the fits of the scale to the bulk (fit_t, bulk_widen).
# With normal tails the runs' spread, which holds their jumps, widened every
# interval for them: A/A splits came out at p < .05 in 2-3% of cases while
# the far tail held more than its share.  D0 is also how far one case's
# variance strays from its prior's (Smyth's prior degrees of freedom).
D0 = 4.0

Z05 = t_quantile(0.05, math.inf)


def tailed(var, rdf):
    """(scale^2, df) of the t a difference with variance var is tested
    against, the estimated parts of var known to rdf degrees of freedom
    (known_to): t with D0 degrees of freedom whose variance is var (the
    run level's tails), widened as t(rdf) widens a normal at its 5% point
    (the reps' noise is itself an estimate: without this, runs of five
    normal reps came out at p < .05 in 9% of the cases of a drawn A/A).
    With rdf at most D0, t(rdf) of the variance itself (the old test; the
    two meet there)."""
    var = np.asarray(var, dtype=float)
    rdf = np.broadcast_to(np.asarray(rdf, dtype=float), var.shape)
    # not known: the tails alone; else to 3 significant digits (the t quantiles of a comparison's few
    # hundred cases are then mostly memoised, and move by less than 0.1%)
    rdf = np.array([float(f"{r:.3g}") if math.isfinite(r) and r > 0 else math.inf
                    for r in rdf.flat]).reshape(var.shape)
    few = ~(rdf > D0)
    widen = np.array([1.0 if f else (t_quantile(0.05, r) / Z05) ** 2
                      for f, r in zip(few.flat, rdf.flat)]).reshape(var.shape)
    scale2 = np.where(few, var, var * ((D0 - 2.0) / D0) * widen)
    return scale2, np.where(few, rdf, D0)


def known_to(wdf, mom, ws=1.0):
    """The degrees of freedom the estimated parts of a variance are known
    to, as its test takes them (tailed), Satterthwaite's way: a part that
    is a share s of the variance and rests on n degrees of freedom adds
    s^2 / n to 1 / df.  The reps' noise (share ws) rests on theirs (wdf,
    summed over the runs compared); a drift scale fitted on mom run
    differences counts whole (every case of its group shares that fit:
    its error moves their intervals together); the prior's drift itself
    strays as the tails say.  The runs' own spread adds its degrees of
    freedom (dof) to these."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ws = np.asarray(ws, dtype=float)
        inv = np.where(np.isfinite(wdf) & (wdf > 0), ws * ws / wdf, 0.0) + np.where(mom > 0, 1.0 / mom, 0.0)
        return np.where(inv > 0, 1.0 / inv, math.inf)


def reps_share(sig2, bw, d0, dof):
    """rw per key: the reps' part b w of one run's variance sig2 = (d0 s0 +
    ss) / (d0 + dof), s0 = a tau^2 + b w, as a share of it (the test
    counts the reps' degrees of freedom as far as their noise is the
    variance: known_to)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        rw = np.clip(np.where(sig2 > 0, d0 / (d0 + dof) * bw / sig2, 0.0), 0.0, 1.0)
    return np.where(np.isfinite(rw), rw, 1.0)


def per_run(d, rows, wdf):
    """A typical run's reps' degrees of freedom: wdf (summed over the runs
    rows) over the runs that have them."""
    if d.wdf is None:
        return np.full(len(d.keys), math.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        n = np.sum(np.isfinite(d.wdf[list(rows)]), axis=0)
        return np.where(n > 0, wdf / np.maximum(n, 1), math.inf)


class Plan(NamedTuple):
    """What a plan of more runs rests on for one case (planned): one run's
    total variance (log units) and a typical run's reps' degrees of
    freedom; a comparison's own parts add what the controls' move and the
    sessions added to its variance, and what its test rests on."""
    sig2: float
    rdf: float
    vcov: float = 0.0      # the covariates' uncertainty, as at one run a side
    vsess: float = 0.0     # the session term
    mom: float = math.inf  # the run differences the drift's scale was fitted on
    hdf: float = 0.0       # the degrees of freedom of the host's other runs' spread
    rw: float = 1.0        # the reps' share of sig2 (reps_share)


def planned(sig2, rdf, k, vcov=0.0, vsess=0.0, mom=math.inf, hdf=0.0, rw=1.0):
    """(scale, df) of the t a comparison of k runs a side like these is
    tested against: one run's total variance sig2 over k on each side, of
    2 k runs whose reps have rdf degrees of freedom each (tailed).  vcov:
    what the covariates' uncertainty added to a comparison of one run a
    side (the controls' move between the sides, a mean over k runs,
    shrinks with k as the runs' own variance does); vsess: the session
    term, which more runs of the same sessions do not shrink; mom: the
    run differences the scale was fitted on; hdf: the degrees of freedom
    of the host's other runs' spread (the plan's sides add 2 (k - 1));
    rw: the reps' share of sig2 (reps_share)."""
    var = (2.0 * sig2 + vcov) / k + vsess
    run = 2.0 * sig2 / k / var if var > 0 else 1.0      # the runs' own part of the variance
    return _tested(var, 2.0 * k * rdf, mom, hdf + 2.0 * (k - 1), rw * run)


def one_kernel(sig2, rdf, k, mom=math.inf, dof=0.0, rw=1.0):
    """(scale, df) of the t of one kernel's mean of k runs like these (a
    series' interval): one run's total variance sig2 over k, the reps of
    k runs, the scale's run differences and the runs' own spread (dof);
    rw: the reps' share of sig2."""
    return _tested(sig2 / k, k * rdf, mom, dof, rw)


def _tested(var, wdf, mom, dof, ws=1.0):
    """(scale, df) of the t one variance var is tested against: reps of
    wdf degrees of freedom (their noise a share ws of var), a scale fitted
    on mom run differences and the runs' own dof (known_to, tailed)."""
    scale2, df = tailed(var, float(known_to(np.array(wdf), np.array(mom), ws)) + dof)
    return math.sqrt(float(scale2)), float(df)
