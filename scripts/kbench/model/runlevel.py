"""The run level of the model: how far whole runs of one case stray from
each other on a host, beyond what their reps account for (RunSpread per
case, RunNoise per host), weighed against the built-in drift prior and
scaled by the host's own drift (drift.host_scales).  Pure functions."""
import math
from dataclasses import dataclass

from .pvalues import _inverse_trigamma, digamma, trigamma


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

    def __init__(self, spreads, runs=0, kernels=0, boots=None, prior=None, scales=None, domain_of=None,
                 kernel_runs=(), prior_across=()):
        self.spreads = {k: v for k, v in spreads.items() if v.dof > 0 and v.within > 0 and v.ss >= 0}
        self.runs = runs
        self.kernels = kernels
        self.boots = boots      # boots those runs were made on; None: not recorded for all of them
        # drift.DriftPrior: the built-in drift of each case between runs,
        # measured elsewhere; the host's own spread is weighed against it
        self.prior = prior
        # {domain: drift.HostScale}: how far this host drifts against the
        # prior, per domain, fitted over all its cases (drift.host_scales);
        # domain_of(key) names a case's domain
        self.scales = scales or {}
        # the domains with no scale because the host's only runs of them
        # cross a machine shift, whose fit drifted as far as the prior
        self.prior_across = tuple(prior_across)
        self.domain_of = domain_of
        self.kernel_runs = list(kernel_runs)   # [(kernel, runs)] the spreads came from
        self.k0, self.d0 = self._prior()

    def scale_of(self, key):
        """The drift.HostScale that applies to a case: its domain's; for a
        summary cell (several cases, maybe of both domains) the one with the
        largest factor; None without one."""
        if not self.scales:
            return None
        if key.startswith("cell:") or self.domain_of is None:
            return max(self.scales.values(), key=lambda s: s.factor)
        return self.scales.get(self.domain_of(key))

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
            sc = self.scale_of(key)
            if sc is not None:
                tp, dp = tp * sc.factor ** 2, min(dp, sc.df)
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
        for k in sorted(set().union(*runs)):   # sorted: sums in one order whatever the hash seed
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
