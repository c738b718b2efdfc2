"""The run level of the model: one model for every comparison.

The observation is a run: its estimate of each case (the estimator over
the run's reps, log time) with the bootstrap's squared standard error w
(Kalibera & Jones, "Rigorous benchmarking in reasonable time", 2013).  For
case c and run r of kernel K,

    y_rc = mu_cK + beta_c . x_r + e_rc,    Var(e_rc) = sigma_c^2, tails t(D0)

- x_r, the covariates: the run's CPU speed (the mean log time of its CPU
  controls) and each memory control relative to it.  A CPU-bound case
  follows the CPU speed (beta about 1), a memory-bound case the CPU speed
  and the memory controls (beta about 0 for most, up to 1 for the large
  buffers), a file-system-bound case none (what the runs before it left in
  the file system moves it, not the machine's speed).  beta_c is the
  posterior of a normal prior per domain given the host's runs: every
  kernel with two runs or more, the compared sides' own included, centred
  on its own mean; its uncertainty enters the interval (Var(beta) dx^2), so
  a control that moved adds what is not known of how the case follows it.
- sigma_c^2, the total variance of one run's estimate, nothing subtracted:
  the runs' residual spread ss_c over dof_c (every kernel with two runs or
  more) moderated towards a prior s0_c^2 = a tau_c^2 + b w_c (tau_c: the
  built-in drift prior, w_c: a typical run's reps' noise) worth D0 degrees
  of freedom (Smyth 2004):  sigma_c^2 = (D0 s0_c^2 + ss_c) / (D0 + dof_c).
- (a, b) per group of cases (CPU-bound alone, across CPUs, on one CPU,
  memory-, file-system-bound, controls), measured now, by maximum
  likelihood under the model's own distribution: with two runs or more a
  side on the runs' residuals, the compared sides' included
  (s^2 / s0^2 ~ F(dof, D0)); with one run on a side on this comparison's
  differences, less the session term where the sides ran in sessions of
  their own (an empirical null, Efron 2004: the bulk of the cases did not
  change; a difference ~ t(D0) of its variance), never past the prior (a
  change that moves most of a group would read as drift).  How far the
  machine drifts varies from hour to hour by more than a factor of e (the
  kept series: tests/validation/README.md, "The run-level model"), so the
  scale is measured at the time of the comparison; the host's other runs
  say which cases drift more than others (ss_c) and how they follow the
  controls (beta_c).
- Each run weighed by its own reps' noise (random effects: its estimate
  strays by the drift sigma_c^2 - w_c plus its own w_rc), never above a
  typical run of the comparison (w_c: the median run's w).
- The comparison: delta_c = ybar_B - ybar_A - beta_c . (xbar_B - xbar_A),
  the means weighed, variance sigma_c^2 (1/U_A + 1/U_B + s_S) + dx' V_beta
  dx (U: a side's sum of weights; s_S: SESSION_SHARE, or what the host's runs across
  sessions measured where that is more (sessions.py), times session_weight),
  tested as t(D0) of that variance (tails).
  With one run a side and no history the same formula holds, the prior
  (scaled by this comparison's bulk) doing the work; the bulk also says
  how far its memory-bound cases followed the memory controls' move, whose
  slopes' prior is only a bound (c of it, fit_t).
- The two-party cases (across CPUs, on one CPU) share a factor no control
  measures (the other vCPU's wakeups, the vCPU's scheduling of two
  processes): each such group is checked against its own bulk in the
  comparison, and where the median case moved further than its variance
  holds, the group's variances are widened by that ratio, never past the
  prior's (bulk_widen: genomic control, Devlin and Roeder 1999).
- A guard: a control that moved more than GUARD_Z of its own run-to-run
  standard deviations (the host's runs' spread of it, moderated towards
  its drift prior) is outside what the runs have seen: the cases that
  follow it are not judged, and the comparison says so in words.

Pure functions on plain data (numpy arrays); compare.py builds the runs'
estimates and turns the result into verdicts.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from .pvalues import _inverse_trigamma, digamma, t_quantile, trigamma
from .sessions import SESSION_GAP_S, SESSION_SHARE, session_weight, sessions_of  # noqa: F401  (handed on)
from .sessions import measured, taken, within
from .tails import D0, Plan, known_to, per_run, planned, reps_share, tailed  # noqa: F401  (handed on: runmodel.planned, ...)

# The priors of beta: (mean, sd) per domain and covariate.  CPU-bound and
# memory-bound cases follow the CPU's speed with beta near 1 (the median case
# of the kept series: 1.0-2.1).  A memory-bound case follows a memory control
# (relative to the CPU's speed) as far as its buffer lives where the
# control's does: most not at all (the kept AMD series: median 0.03), the
# large buffers up to 1, and which ones depends on the machine (on the Intel
# VM the 64 MB buffers followed its 64 MB control 1:1, the 256 MB ones
# hardly).  So the prior's mean is 0 and its sd what the built-in drift prior
# allows: a case that drifted tau between runs where the control drifted
# tau_control cannot follow it by more than tau / tau_control (between
# BETA_MEMORY_SD and 1).
BETA_CPU = (1.0, 0.5)
BETA_MEMORY_SD = (0.05, 1.0)
# A control that moved more than this many of its own standard deviations
# between the sides is outside what the host's runs have seen.
GUARD_Z = 4.0
# Fewer cases than this in a domain or a group: no scale fitted on them (the
# prior's as it is), and no bulk check.
MIN_FIT = 8
# a beta held at its prior mean: its prior variance
FIXED = 1e-10
# The bounds of a scale's fit (s0 = a tau^2 + b w): b never below 1 (a run's
# total variance holds at least its own reps' noise: the drift adds to it),
# a and b never above e^4 (a fit that far out is the fit of a kernel's
# change, not of drift).
LOG_MAX = 4.0
# The drift is never taken below A_MIN times the built-in prior's (a seventh of its sd): a host's
# cases do not all calm down alike, and a domain's bulk measured calm (0.001-0.05 times the prior on
# the kept series) would leave its volatile cases (a 256 MB bzero switching between two modes 50%
# apart from run to run, whose prior is 41%) only their reps' noise.  On the kept A/A splits, a floor
# of 0, 0.02, 0.05 and 0.1 left 41, 25, 24 and 14 of 307 comparisons with false flags, at a median
# mde of 7.7, 8.3, 8.9 and 10.0% at two runs a side (tests/validation/README.md, "The run-level model").
A_MIN = 0.02
# The empirical null's fit comes down to the median case's where that is less than this share of
# it: a minority of changed cases far out (a tenth of a domain moved by 20 sds takes the fit to twice
# the drift), not the drift's own tails (t(D0): on the kept series the fit and the median case agree)
# nor the bulk's chance (about a fifth either way over a few hundred cases).
MEDIAN_SHARE = 0.5
# The groups whose cases share a factor no control measures: the two-party
# cases, which compare.scale_group makes groups of their own.  Across CPUs
# they wait on a wakeup of the other vCPU, which the hypervisor schedules;
# on one CPU on the vCPU's scheduling of two processes.  Their cases move
# together from run to run by what the rest of the machine was doing.  The
# runs' spread of each case holds that factor, but the cases' tests are not
# independent: where the sides drew its two ends, many cases are flagged at
# once.  Such a group is checked against its own bulk (bulk_widen).  On the
# kept hold series the cross-CPU cases' median moved by -15% to +13% from run
# to run, the CPU speed within 2.4% (validation README, "Two-party cases").
# So do the memory-bound cases whose buffer is at least the memory control's
# (compare.scale_group's "dram"): the memory's regime moves them together
# (the 64-256 MB buffers by 25-40% for minutes), and they follow the control
# by slopes three to seven runs do not pin down.  They are too few for a
# scale of their own at one run a side: scaled with the memory-bound cases
# (SCALE_AS), checked against their own bulk.  So are the file-system-bound
# cases, which the file system's state (its journal, its space) moves alike,
# and the memory manager's ("state"), which what the runs before left moves.
BULK_GROUPS = ("cross", "same", "dram", "fs", "state")
SCALE_AS = {"dram": "memory", "state": "cpu"}


@dataclass
class Design:
    """What the model needs of a set of runs: per run, each key's estimate
    (theta, log time) and its squared standard error w, and the covariates."""
    keys: list
    y: np.ndarray          # runs x keys, nan where a run lacks a key
    w: np.ndarray          # runs x keys
    x: np.ndarray          # runs x covariates (nan: the run lacks a control)
    wdf: np.ndarray = None  # runs x keys: the degrees of freedom of each w (its reps)


def design(estimates, covariates, keys):
    """A Design of runs given as {key: (theta, se, df)} dicts and their
    covariate rows."""
    n, k = len(estimates), len(keys)
    y = np.full((n, k), math.nan)
    w = np.full((n, k), math.nan)
    wdf = np.full((n, k), math.nan)
    idx = {key: j for j, key in enumerate(keys)}
    for i, est in enumerate(estimates):
        for key, v in est.items():
            j = idx.get(key)
            if j is not None and math.isfinite(v[0]) and math.isfinite(v[1]):
                y[i, j] = v[0]
                w[i, j] = v[1] * v[1]
                wdf[i, j] = v[2] if len(v) > 2 else math.inf
    x = np.array(covariates, dtype=float).reshape(n, -1)
    return Design(list(keys), y, w, x, wdf)


# The prior's weight as the host's own runs show it (Smyth 2004) is taken
# where at least this many keys have a spread of their own: it may lower D0
# (the built-in profile fits this host's cases worse than the kept series'),
# never raise it.
D0_MIN_KEYS = 30


def host_d0(rss, dof, s0):
    """How well the prior s0 predicts the keys' own spreads rss / dof, as
    degrees of freedom: from the variance of log(s^2 / s0) beyond what
    their own degrees of freedom explain (between 1 and D0); D0 with fewer
    than D0_MIN_KEYS keys with a spread."""
    ok = (dof > 0) & (rss > 0) & np.isfinite(s0) & (s0 > 0)
    if np.sum(ok) < D0_MIN_KEYS:
        return D0
    d = dof[ok]
    z = np.log(rss[ok] / d / s0[ok]) - np.array([digamma(v / 2.0) - math.log(v / 2.0) for v in d])
    extra = float(np.var(z, ddof=1)) - float(np.mean([trigamma(v / 2.0) for v in d]))
    if extra <= 0:
        return D0
    return min(max(2.0 * _inverse_trigamma(extra), 1.0), D0)


def _prior_df(s0, bw, wdf, moments, d0=D0):
    """The degrees of freedom of the prior variance s0 = a tau^2 + b w,
    Satterthwaite's way: its drift part a tau^2 strays from the truth as
    the prior does (D0), its reps' part b w as the reps' estimate of w
    (wdf degrees of freedom), and the whole as the fit of (a, b) does when
    it rests on other moments than the compared one (the runs' spread:
    `moments` independent run differences, which the cases share; the
    machine's drift varies from moment to moment by more than a factor of
    e on the kept series)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(s0 > 0, bw / s0, 0.0)
        drift = 1.0 - share
        inv = drift * drift / d0 + np.where(np.isfinite(wdf) & (wdf > 0), share * share / wdf, 0.0) \
            + np.where(np.isfinite(moments) & (moments > 0), 1.0 / moments, 0.0)
        return np.where(inv > 0, 1.0 / inv, 1e6)


@dataclass
class Fit:
    """The model's answer for every key of one comparison."""
    keys: list
    delta: np.ndarray       # other - base, log time, adjusted for the covariates
    var: np.ndarray         # the square of the scale of the t it is tested against (tailed)
    df: np.ndarray          # that t's degrees of freedom (at most D0)
    sig2: np.ndarray        # one run's total variance (the moderated sigma_c^2)
    dof: np.ndarray         # the runs' own degrees of freedom behind sig2
    shift: np.ndarray       # beta . dx: what the covariates moved each key by
    raw: np.ndarray         # the unadjusted difference of the sides' means
    base_mean: np.ndarray   # the base side's mean estimate (log time)
    dx: np.ndarray          # the covariates' difference (other - base)
    guarded: list = field(default_factory=list)    # covariate indices outside what the runs have seen
    limit: tuple = ()       # per covariate: the move (log) beyond which it is guarded
    scale: dict = field(default_factory=dict)      # {domain: (a, b, source)}
    k: tuple = (1, 1)
    vbeta: np.ndarray = None  # the part of var that is the covariates' uncertainty (fit() always sets it)
    vsess: np.ndarray = None  # the part of var that is the session term (fit() always sets it)
    bulk: dict = field(default_factory=dict)       # {group: factor its variance was widened by (bulk_widen)}
    own: np.ndarray = None  # per key the sides' own runs' part of dof (a side of two runs or more that all have it)
    rdf: np.ndarray = None  # per key the reps' degrees of freedom of a typical run (its w's)
    mom: np.ndarray = None  # per key the run differences its scale was fitted on (inf: none, or held at a bound)
    follow: dict = field(default_factory=dict)     # {group: c}: the memory slopes' prior the bulk left (one run a side)
    rw: np.ndarray = None   # per key the reps' share of sig2 (reps_share)
    sessions: dict = field(default_factory=dict)   # {share group: (measured share, session dof)} (the host's runs)

    def plan_df(self, j):
        """Key j's degrees of freedom for a plan of more runs: a typical
        run's reps' (a plan of k runs a side has 2 k runs' reps)."""
        return float(self.rdf[j])

    def host_df(self, j):
        """Key j's degrees of freedom of the runs' spread without the sides'
        own (a plan adds its sides' runs; a side whose runs do not all have
        the key, a case some runs did not run, gave it none to take out)."""
        return float(self.dof[j]) - float(self.own[j])


def beta_prior(domains, ncov, relative=True, tau2=None, x_tau2=None):
    """(means, variances): per key and covariate, the prior of beta. The
    first covariate is the CPU speed, the others the memory controls;
    tau2: per key the prior's drift, x_tau2: per covariate its control's
    (the sd of a memory-bound case's beta on a memory control is
    tau / tau_control within BETA_MEMORY_SD)."""
    k = len(domains)
    m = np.zeros((k, ncov))
    v = np.full((k, ncov), FIXED)
    if not relative or ncov == 0:
        return m, v
    lo, hi = BETA_MEMORY_SD
    for j, d in enumerate(domains):
        if d in ("cpu", "cross", "same", "memory"):
            m[j, 0], v[j, 0] = BETA_CPU[0], BETA_CPU[1] ** 2
        if d == "memory":
            for i in range(1, ncov):
                ratio = math.sqrt(tau2[j] / x_tau2[i]) if tau2 is not None and x_tau2 is not None \
                    and x_tau2[i] > 0 and math.isfinite(tau2[j]) else hi
                v[j, i] = min(max(ratio, lo), hi) ** 2
    return m, v


def _moments(d, groups, u=None):
    """Per key: X'X (keys x p x p), X'y (keys x p), y'y and dof of the
    groups of runs (lists of row indices), each centred on its own mean,
    each run weighed by u (runs x keys; None: alike); a group counts for a
    key only where all its runs have it."""
    k, p = d.y.shape[1], d.x.shape[1]
    xtx = np.zeros((k, p, p))
    xty = np.zeros((k, p))
    yty = np.zeros(k)
    dof = np.zeros(k)
    for rows in groups:
        if len(rows) < 2:
            continue
        y, x = d.y[rows], d.x[rows]
        if not np.all(np.isfinite(x)):
            continue
        ok = np.all(np.isfinite(y), axis=0)
        uu = np.ones(y.shape) if u is None else np.where(np.isfinite(u[rows]), u[rows], 1.0)
        sw = np.sum(uu, axis=0)
        y0 = np.where(ok, y, 0.0)
        yc = (y0 - np.sum(uu * y0, axis=0) / sw).T                        # keys x runs
        xc = x[None, :, :] - ((uu.T @ x) / sw[:, None])[:, None, :]        # keys x runs x p
        uk = uu.T * ok[:, None]
        xtx += np.einsum("kr,kri,krj->kij", uk, xc, xc)
        xty += np.einsum("kr,kr,kri->ki", uk, yc, xc)
        yty += np.sum(uk * yc * yc, axis=1)
        dof += ok * (len(rows) - 1)
    return xtx, xty, yty, dof


def weights(w, sig2, wbar):
    """Per run and key, the run's weight against a typical run of the
    comparison (whose reps' noise is wbar): a run's estimate strays by the
    drift (sig2 - wbar) plus its own reps' noise w, so a run whose reps
    scattered (a burst, a mode its reps split between) counts for less
    (random effects: DerSimonian and Laird, 1986).  Never more than a
    typical run: a run whose reps happened to agree is not trusted beyond
    one (on the kept A/A splits, weights up to 2 left 57 of 307 with a
    false flag, against 27).  1 where w is unknown."""
    with np.errstate(invalid="ignore", divide="ignore"):
        u = sig2 / np.maximum(sig2 - wbar + w, sig2)
    return np.where(np.isfinite(u) & (u > 0), u, 1.0)


def _wmean(y, u):
    """Per key the weighted mean of the rows of y (nan rows left out) and
    the sum of their weights."""
    ok = np.isfinite(y)
    uu = np.where(ok, u, 0.0)
    sw = np.sum(uu, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sw > 0, np.sum(uu * np.where(ok, y, 0.0), axis=0) / sw, math.nan), sw


def _posterior(xtx, xty, m0, v0, sig2):
    """beta's posterior mean and covariance per key (a normal prior m0, v0
    per covariate; the residual variance sig2)."""
    k, p = m0.shape
    if p == 0:
        return np.zeros((k, 0)), np.zeros((k, 0, 0))
    s = np.where(sig2 > 0, sig2, np.inf)
    prec0 = np.zeros((k, p, p))
    idx = np.arange(p)
    prec0[:, idx, idx] = 1.0 / v0
    prec = prec0 + xtx / s[:, None, None]
    cov = np.linalg.inv(prec)
    rhs = np.einsum("kij,kj->ki", prec0, m0) + xty / s[:, None]
    return np.einsum("kij,kj->ki", cov, rhs), cov


def _rss(xtx, xty, yty, beta):
    return yty - 2.0 * np.sum(beta * xty, axis=1) + np.einsum("ki,kij,kj->k", beta, xtx, beta)


def _minimise(nll, high=LOG_MAX, lo_b=0.0):
    """(a, b) minimising nll(log a, log b) within the bounds (A_MIN, b at
    least e^lo_b; e^high above): a grid, then halving steps."""
    lo_a = math.log(A_MIN) if A_MIN > 0 else -12.0

    def f(la, lb):
        v = nll(min(max(la, lo_a), high), min(max(lb, lo_b), high))
        return v if math.isfinite(v) else math.inf
    # with high at lo_b (b at 1, one run a side) a alone is searched
    b_free = high > lo_b
    best = None
    for la in np.linspace(lo_a, high, 17):
        for lb in np.linspace(lo_b, high, 7) if b_free else (lo_b,):
            v = f(la, lb)
            if best is None or v < best[0]:
                best = (v, la, lb)
    _, la, lb = best
    step = 0.5
    while step > 1e-3:
        moved = False
        for da, db in ((step, 0.0), (-step, 0.0)) + (((0.0, step), (0.0, -step)) if b_free else ()):
            na, nb = min(max(la + da, lo_a), high), min(max(lb + db, lo_b), high)
            v = f(na, nb)
            if v < best[0]:
                best, la, lb, moved = (v, na, nb), na, nb, True
        if not moved:
            step /= 2.0
    return math.exp(la), math.exp(lb)


def fit_t(d2, w, t2, vb=None, nu=D0):
    """(a, b, c) maximising the likelihood of differences d (d2 = d^2 over
    the sides' 1/k_A + 1/k_B) under d ~ t(nu) of variance a t2 + b w + c vb
    (vb: the memory slopes' part of the covariates' uncertainty, on the
    same scale; b held at 1; c at least A_MIN), none above 1: the compared
    cases' bulk may say the machine is calmer than the prior, or that its
    cases followed the memory controls' move less than their slopes' prior
    (a bound) allows, never that it drifts more (a change of the
    kernel that moves most of a domain, every system call slower, would
    read so); None with fewer than MIN_FIT usable keys."""
    vb = np.zeros_like(d2) if vb is None else np.where(np.isfinite(vb), vb, 0.0)
    ok = np.isfinite(d2) & np.isfinite(w) & np.isfinite(t2) & (w > 0) & (t2 >= 0)
    d2, w, t2, vb = d2[ok], w[ok], t2[ok], vb[ok]
    if len(d2) < MIN_FIT:
        return None

    d2 = d2 * nu / (nu - 2.0)                # over the t's scale, not its variance

    def nll(la, lc):
        v = math.exp(la) * t2 + w + math.exp(lc) * vb
        return float(np.sum(0.5 * np.log(v) + (nu + 1.0) / 2.0 * np.log1p(d2 / (v * nu))))
    with_vb = bool(np.any(vb > 0))
    a, c = _minimise(nll, high=0.0, lo_b=math.log(A_MIN) if with_vb else 0.0)
    b = 1.0
    # The likelihood takes a minority of changed cases for the tails of the
    # drift and widens every case for them; the median case did not change
    # (a kernel's change rarely moves half of a domain): where the median
    # difference is less than MEDIAN_SHARE of what the fit says, the drift's
    # part comes down to it (the median of a few hundred cases strays by a
    # fifth).  c does not: the cases that follow a memory control are a
    # minority by nature (on the kept check series the 4 and 16 MB bzero
    # followed a 46% move of the 64 MB read, the other cases did not).
    med = float(np.median(d2 / (a * t2 + b * w + c * vb)))
    m = med / t_quantile(0.5, nu) ** 2      # the median of t^2: the two-sided 50% point, squared
    if m < MEDIAN_SHARE:
        a = a * m
    return a, b, c


def fit_f(ss, dof, w, t2, nu=D0):
    """(a, b) maximising the likelihood of residual sums of squares ss on
    dof degrees of freedom under (ss / dof) / (a t2 + b w) ~ F(dof, nu);
    None with fewer than MIN_FIT usable keys."""
    dof = np.broadcast_to(np.asarray(dof, dtype=float), np.shape(ss))
    ok = np.isfinite(ss) & np.isfinite(w) & np.isfinite(t2) & (w > 0) & (t2 >= 0) & (dof > 0) & (ss > 0)
    ss, dof, w, t2 = ss[ok], dof[ok], w[ok], t2[ok]
    if len(ss) < MIN_FIT:
        return None
    s2 = ss / dof

    def nll(la, lb):
        v = math.exp(la) * t2 + math.exp(lb) * w
        q = s2 / v
        return float(-np.sum((dof / 2.0 - 1.0) * np.log(q) - (dof + nu) / 2.0 * np.log1p(dof * q / nu)
                             - np.log(v)))
    return _minimise(nll)


def _scale_groups(domains):
    """{group: key indices} of the domains a scale is fitted per."""
    out = {}
    for j, d in enumerate(domains):
        out.setdefault(d, []).append(j)
    return {g: np.array(ix) for g, ix in out.items()}


def _scales(scale_of, rss, dof, wbar, tau2, d2=None, vb=None):
    """(s0, b w, moments, c, {group: (a, b, what measured it)}): per key the
    prior s0 = a tau^2 + b w scaled per group of keys (scale_of), its
    reps' part, the independent moments behind the scale and the share c
    of the slopes' prior the comparison's bulk leaves.  With one run a side
    (d2: this comparison's squared differences over the sides' 1/k_A +
    1/k_B, vb: their covariates' uncertainty on that scale) the bulk of
    those differences, the moment itself; else, or with too few keys for
    it, every kernel with two runs or more, the sides' own included, around
    its own mean: other moments than the compared one, as many as their
    run differences; else the prior as it is."""
    k = len(rss)
    s0, bw, moments, cs = np.full(k, math.nan), np.full(k, math.nan), np.full(k, math.inf), np.ones(k)
    scale = {}
    for g, ix in scale_of.items():
        got = fit_t(d2[ix], wbar[ix], tau2[ix], None if vb is None else vb[ix]) if d2 is not None else None
        a, b, c, source, mom = got + ("comparison", math.inf) if got else (1.0, 1.0, 1.0, "prior", math.inf)
        if not got and np.any(dof[ix] > 0):
            got = fit_f(rss[ix], dof[ix], wbar[ix], tau2[ix])
            if got:
                a, b, source, mom = got + ("runs", float(np.max(dof[ix])))
        s0[ix] = a * tau2[ix] + b * wbar[ix]
        bw[ix] = b * wbar[ix]
        moments[ix] = mom
        cs[ix] = c
        scale[g] = (a, b, source)
    return s0, bw, moments, cs, scale


def fit(d, base_rows, other_rows, groups, domains, tau2, relative=True, x_tau2=None, sessions=None):
    """The model for every key of one comparison.

    d: the Design of every run involved; base_rows, other_rows: the sides'
    row indices; groups: lists of row indices, each the runs of one kernel
    (the host's history and the sides, with two runs or more) whose spread
    measures the run level; domains: per key cpu, memory, fs or control, or a
    group of BULK_GROUPS (SCALE_AS: the domain it is scaled with);
    tau2: per key the built-in prior's drift (0 without a prior); x_tau2:
    per covariate the prior's drift of its control (for the guard)."""
    k = len(d.keys)
    ka, kb = len(base_rows), len(other_rows)
    ncov = d.x.shape[1]
    ya, yb = d.y[base_rows], d.y[other_rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        # the reps' noise of a typical run of the two sides (one run's burst is its own, weighed below)
        wbar = _nanmedian(np.vstack([d.w[base_rows], d.w[other_rows]]))
        wdf = np.nansum(np.vstack([d.wdf[base_rows], d.wdf[other_rows]]), axis=0) if d.wdf is not None \
            else np.full(k, math.inf)
        rdf = per_run(d, list(base_rows) + list(other_rows), wdf)
    # the controls' move as the guard and the words see it: the sides' plain means
    dx = d.x[other_rows].mean(axis=0) - d.x[base_rows].mean(axis=0) if ncov else np.zeros(0)
    # the domains as the scale, the slopes' priors and the session term take them (a group that is
    # only checked against its own bulk is its domain there)
    scaled = [SCALE_AS.get(g, g) for g in domains]
    m0, v0 = beta_prior(scaled, ncov, relative, tau2, x_tau2)
    one_run = ka == 1 or kb == 1
    scale_of, bulk_of = _scale_groups(scaled), _scale_groups(domains)
    # per key the session term in units of one run's variance (none where the sides share their sessions)
    sw = session_weight(sessions, base_rows, other_rows) if sessions is not None else 0.0
    # one run's spread within a session (a kernel measured on two occasions: two groups); the guard
    # takes the runs' whole spread, sessions and all (what the runs have shown of each control)
    shown, groups = groups, within(groups, sessions)
    # per key its share group: its own group where that has a share, else its domain's
    names = [g if g in SESSION_SHARE else s for g, s in zip(domains, scaled)]
    share = np.array([SESSION_SHARE.get(n, max(SESSION_SHARE.values())) for n in names])
    sshare, learned = sw * share, None
    sig2 = tau2 + wbar
    for _ in range(3):
        # each run weighed by its own reps' noise against the drift the last pass measured
        u = weights(d.w, sig2, wbar)
        base_mean, ua = _wmean(ya, u[base_rows])
        other_mean, ub = _wmean(yb, u[other_rows])
        raw = other_mean - base_mean
        with np.errstate(invalid="ignore", divide="ignore"):
            # per key: a run that lacks it (a case that failed there) leaves it out of its side's mean
            kk = np.where((ua > 0) & (ub > 0), 1.0 / ua + 1.0 / ub, math.nan)
            # the controls' move per key, each side's runs weighed as that key's
            uy = np.where(np.isfinite(d.y), u, 0.0)
            dxk = (np.einsum("rk,ri->ki", uy[other_rows], d.x[other_rows]) / ub[:, None]
                   - np.einsum("rk,ri->ki", uy[base_rows], d.x[base_rows]) / ua[:, None]) if ncov \
                else np.zeros((k, 0))
        xtx, xty, yty, dof = _moments(d, groups, u)
        beta, cov = _posterior(xtx, xty, m0, v0, sig2)
        rss = np.maximum(_rss(xtx, xty, yty, beta), 0.0)
        adj = raw - np.sum(beta * dxk, axis=1) if ncov else raw
        units = kk + sshare     # one run a side: its differences hold the sessions' term too (added below)
        vb = _bounded(dxk, cov, v0)[1] / units if one_run else None      # what the one-run fit takes
        s0, bw, moments, cs, scale = _scales(scale_of, rss, dof, wbar, tau2,
                                             adj ** 2 / units if one_run else None, vb)
        for ix in ([bulk_of[g] for g in SCALE_AS if g in bulk_of] if one_run else []):
            # a group scaled with its domain follows the controls by its own bulk (the large buffers)
            got = fit_t(adj[ix] ** 2 / units[ix], wbar[ix], tau2[ix], vb[ix])
            cs[ix] = got[2] if got else cs[ix]
        d0 = _prior_df(s0, bw, wdf, moments, host_d0(rss, dof, s0))
        sig2 = (d0 * s0 + rss) / (d0 + dof)
        if sw > 0 and learned is None:
            # where the host's runs span sessions, they measure the session's share (once: the first
            # pass's slopes and one run's variance), moderated towards SESSION_SHARE, never below it
            learned = measured(d.y - np.einsum("ki,ri->rk", beta, d.x) if ncov else d.y, sig2, d0 + dof,
                               shown, sessions, names, MIN_FIT)
            sshare = sw * np.array([taken(p, learned.get(n)) for p, n in zip(share, names)])
    beta, cov = _posterior(xtx, xty, m0, v0, sig2)
    shift = np.sum(beta * dxk, axis=1) if ncov else np.zeros(k)
    vspeed, vmem = _bounded(dxk, cov, v0)
    vfull = vspeed + vmem
    # where the slopes' bound was most of the group's median variance: else the bulk said little of c
    with np.errstate(invalid="ignore", divide="ignore"):
        told = vmem / (sig2 * kk + vfull)
    follow = {g: float(cs[ix[0]]) for g, ix in bulk_of.items() if one_run and np.any(vmem[ix] > 0)
              and np.median(np.where(np.isfinite(told[ix]), told[ix], 0.0)) >= 0.5}
    vbeta = vspeed + cs * vmem    # as far as the comparison's bulk says its cases followed the memory's move
    guarded, limit = guard(d, shown, dx, 1.0 / ka + 1.0 / kb, x_tau2) if ncov else ([], ())
    vsess = sshare * sig2
    delta = raw - shift
    mom = _fitted_on(scale_of, scale, moments)
    rw = reps_share(sig2, bw, d0, dof)
    with np.errstate(invalid="ignore", divide="ignore"):    # the runs' part (the rest: covariates, session)
        run = np.where(np.isfinite(kk), sig2 * kk / (sig2 * kk + vbeta + vsess), 1.0)
    known = known_to(wdf, mom, rw * run) + dof      # what the variance rests on, as its test takes it
    var, df = tailed(sig2 * kk + vbeta + vsess, known)
    bulk = {}
    for g in BULK_GROUPS:
        ix = bulk_of.get(g)
        if ix is None:
            continue
        # never past the prior's variance (a = b = 1): a change of the kernel that moves the whole
        # group further than the machine drifts is still seen (--no-prior: no prior, no bound)
        cap = np.where(tau2[ix] > 0, tailed((tau2[ix] + wbar[ix]) * kk[ix] + vfull[ix] + vsess[ix], known[ix])[0],
                       math.inf)
        cases = ~np.char.startswith(np.array(d.keys, dtype=str)[ix], "cell:")      # a cell repeats its cases
        var[ix], lam = bulk_widen(delta[ix], var[ix], df[ix], cap, cases)
        if lam > 1.0:
            bulk[g] = lam
    # the sides' own runs' part of dof: a side's runs count for a key only where all of them have it
    sides = [list(base_rows), list(other_rows)]
    own = sum(np.all(np.isfinite(d.y[rows]), axis=0) * (len(rows) - 1.0)
              for rows in within(sides, sessions) if len(rows) >= 2) + np.zeros(k)
    return Fit(list(d.keys), delta, var, df, sig2, dof, shift, raw, base_mean, dx, guarded if relative else [],
               limit, scale, (ka, kb), vbeta, vsess, bulk, own, rdf, mom, follow, rw,
               learned or {})


def _bounded(dxk, cov, v0):
    """(the CPU speed's part, the memory controls' part) of the covariates'
    uncertainty dx' Var(beta) dx per key: the first a slope whose prior is
    of the slope itself (BETA_CPU), the second slopes whose prior sd is a
    bound (how far the case could follow the control, BETA_MEMORY_SD),
    which a comparison's bulk may find its cases far from (none where
    beta_prior holds them at 0: v0 FIXED)."""
    if dxk.shape[1] == 0:
        return np.zeros(len(dxk)), np.zeros(len(dxk))
    full = np.einsum("ki,kij,kj->k", dxk, cov, dxk)
    speed = dxk[:, 0] ** 2 * cov[:, 0, 0]
    return speed, np.where(np.any(v0[:, 1:] > FIXED, axis=1), np.maximum(full - speed, 0.0), 0.0)


def bulk_widen(delta, var, df, cap, votes=True):
    """(var, lam): a group's variances checked against the group's own
    differences in this comparison (genomic control: Devlin and Roeder
    1999; an empirical null, Efron 2004).  lam is the median over the keys
    (those that votes marks: a summary cell repeats its cases) of t^2 =
    delta^2 / var against the median of t(df)^2; above 1 the bulk of the
    group moved further than its variances hold (a factor the cases share,
    drawn unevenly by the sides), and every variance is multiplied by lam,
    never past cap (and never narrowed).  lam is nan with fewer than
    MIN_FIT keys, and nothing is widened."""
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = np.isfinite(delta) & np.isfinite(var) & (var > 0) & np.isfinite(df) & (df > 0)
        vote = ok & votes
        if np.sum(vote) < MIN_FIT:
            return var, math.nan
        lam = float(np.median(delta[vote] ** 2 / var[vote] / [t_quantile(0.5, v) ** 2 for v in df[vote]]))
        if not lam > 1.0:
            return var, lam
        return np.where(ok, np.maximum(var, np.minimum(lam * var, cap)), var), lam


def _nanmedian(a):
    """The median over runs (axis 0) of what each key has; nan where none."""
    ok = np.any(np.isfinite(a), axis=0)
    out = np.full(a.shape[1], math.nan)
    out[ok] = np.nanmedian(a[:, ok], axis=0)
    return out


def guard(d, groups, dx, kk, x_tau2):
    """(guarded, limits): the covariates whose move between the sides is
    outside what the runs have seen, more than GUARD_Z of their
    run-to-run standard deviation (the groups' spread of it, moderated
    towards the prior's drift of the control, x_tau2) for the sides' runs;
    and each covariate's limit (log)."""
    if x_tau2 is None:
        return [], ()
    ss = np.zeros(d.x.shape[1])
    dof = 0
    for rows in groups:
        if len(rows) >= 2 and np.all(np.isfinite(d.x[rows])):
            xc = d.x[rows] - d.x[rows].mean(axis=0)
            ss += np.sum(xc * xc, axis=0)
            dof += len(rows) - 1
    var = (D0 * np.asarray(x_tau2) + ss) / (D0 + dof)
    limit = tuple(float(GUARD_Z * math.sqrt(v * kk)) for v in var)
    return [i for i in range(len(dx)) if abs(dx[i]) > limit[i]], limit


def _fitted_on(scale_of, scale, moments):
    """Per key the run differences its group's scale was measured on, where
    the fit measured it: inf where it is the prior's or the comparison's
    own bulk (a few hundred cases), or where the fit sits at the bound of
    its drift part (a = A_MIN: the scale is then the reps' noise, held
    there, not an estimate from the runs)."""
    out = np.full(len(moments), math.inf)
    for g, ix in scale_of.items():
        a, _, source = scale[g]
        if source == "runs" and a > A_MIN * 1.001:
            out[ix] = moments[ix]
    return out


def variances(d, rows, groups, domains, tau2, relative=True, x_tau2=None, sessions=None):
    """(sig2, rdf, mom, dof, rw) per key with no comparison (a kernel's own
    summary): one run's total variance on this host as a comparison of the runs `rows` (two
    runs or more a side) would take it: the groups' residual spread, each run weighed by its
    own reps' noise, moderated towards the prior scaled by the groups' own fit (or the prior
    as it is); w: the median of the runs `rows`; rdf: a typical run's reps' degrees of
    freedom; mom: the run differences the scale was fitted on (_fitted_on); dof: the runs'
    own degrees of freedom; rw: the reps' share of sig2 (reps_share).  sessions: per run its
    session (sessions_of): each kernel's runs spread within their sessions, as fit takes them."""
    k, ncov = len(d.keys), d.x.shape[1]
    groups = within(groups, sessions)
    with np.errstate(invalid="ignore", divide="ignore"):
        wbar = _nanmedian(d.w[rows])
        wdf = np.nansum(d.wdf[rows], axis=0) if d.wdf is not None else np.full(k, math.inf)
    m0, v0 = beta_prior(domains, ncov, relative, tau2, x_tau2)
    sig2 = tau2 + wbar
    for _ in range(3):
        u = weights(d.w, sig2, wbar)
        xtx, xty, yty, dof = _moments(d, groups, u)
        beta, _ = _posterior(xtx, xty, m0, v0, sig2)
        rss = np.maximum(_rss(xtx, xty, yty, beta), 0.0)
        s0, bw, moments, _, scale = _scales(_scale_groups(domains), rss, dof, wbar, tau2)
        d0 = _prior_df(s0, bw, wdf, moments, host_d0(rss, dof, s0))
        sig2 = (d0 * s0 + rss) / (d0 + dof)
    return sig2, per_run(d, rows, wdf), _fitted_on(_scale_groups(domains), scale, moments), dof, reps_share(
        sig2, bw, d0, dof)
