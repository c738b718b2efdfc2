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
import math
import zlib
from dataclasses import dataclass

import numpy as np

from .defaults import (  # noqa: F401  (the model's names for them)
    ALPHA, DEFAULT_BOOT, DEFAULT_ESTIMATOR, DEFAULT_MIN_EFFECT, DEFAULT_MIN_REPS, ESTIMATORS, LEVEL, LOW_Q,
    PLAN_MAX_RUNS, POWER,
)
from .bootstrap import (  # noqa: F401  (handed on: stats.side_estimate, stats.estimate, ...)
    BOOT_BLOCK_BYTES, NETWORK_MAX, SideEstimate, _median, boot_estimates, boot_se, estimate, estimator_df, hd_weights,
    log_combined, quartiles, side_estimate, sorting_network,
)
from . import runmodel
from .pvalues import (  # noqa: F401  (handed on: stats.t_quantile, stats.bh_adjust, ...)
    _inverse_trigamma, bh_adjust, betainc, cv_percent, cv_percents, digamma, log_welch_p, mann_whitney, min_rank_p,
    one_way_p, t_quantile, t_two_sided_p, trigamma, welch_df, welch_t,
)

FASTER = "significantly faster"
SLOWER = "significantly slower"
SAME = "no significant change"
FEW = "too few reps"
INCONCLUSIVE = "inconclusive"          # not significant, and could not have seen min_effect
NOT_JUDGED = "not judged"              # a guard put the case out of judgement: Comparison.not_judged says why
MACHINE = NOT_JUDGED                   # its name from when a machine shift was the only guard
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

    def components(self):
        """One plain Series per case of a cell of several cases."""
        return [Series.single([r[i] for r in self.reps], self.metric, self.label, self.units, self.estimator)
                for i in range(len(self.reps[0]) if self.reps else 1)]

    def combined(self, of=None):
        """A cell of several cases (a mean, a difference) is its cases' values combined: with of(a
        case's Series) -> value, that combination (nan where not positive); else whether it is one."""
        if of is None:
            return self.combine is not None and bool(self.reps) and len(self.reps[0]) > 1
        v = float(self.combine([of(c) for c in self.components()]))
        return v if v > 0 else math.nan

    def headline(self):
        """The case's value: the estimator over the rep values (ns or MB/s); a
        cell of several cases: its cases' values combined, as its label says."""
        y = self.log_times()
        if not len(y):
            return math.nan
        if self.combined() and self.estimator != "median" and (v := self.combined(Series.headline)) > 0:
            return v
        if np.any(np.isnan(y)) or self.estimator == "median":
            # (derived values that are not positive: the plain median too)
            return float(np.median(self.rep_values()))
        return from_log_time(estimate(y, self.estimator), self.metric)

    def unit_codes(self):
        """Each rep's run as a small integer (0, 1, ... in the order the
        runs first appear).  Computed once, as rep_values."""
        cached = getattr(self, "_unit_codes", None)
        if cached is None:
            index = {}
            cached = self._unit_codes = np.array([index.setdefault(u, len(index)) for u in self.units], dtype=int)
        return cached

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


def planned_mde(parts, k, level=LEVEL):
    """The mde of a comparison if each side were k runs like these.  parts:
    a tails.Plan (or its leading fields), what the run-level model says
    one run of this case on this host is (runmodel.planned, which tests the
    plan as a comparison is tested: tails.tailed, its degrees of freedom
    to 3 significant digits).  nan without parts."""
    if not parts or k < 1:
        return math.nan
    plan = runmodel.Plan(*parts)
    if math.isnan(plan.sig2) or math.isnan(plan.rdf):
        return math.nan
    se, df = runmodel.planned(plan.sig2, plan.rdf, k, *plan[2:])
    return detectable_change(se, df, level)


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
    even cap runs would not do, or without parts.  The planned mde falls as
    runs are added (the runs' variance over k, their degrees of freedom up),
    so halving finds it: about five plans a case instead of up to cap."""
    def enough(k):
        m = planned_mde(parts, k, level)
        return not math.isnan(m) and m <= target
    if not parts or cap < 1 or not enough(cap):
        return None
    lo, hi = 0, cap         # not enough at lo (0: no runs), enough at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def detectable_change(se, df, level=LEVEL, power=POWER):
    """The smallest relative change (a ratio - 1 > 0) that a difference
    with this standard error would detect at `level` with `power`."""
    if math.isnan(se) or math.isnan(df) or df <= 0:
        return math.nan
    k = t_quantile(1.0 - level, df) + t_quantile(2.0 * (1.0 - power), df)
    # (a fraction of a degree of freedom puts the quantiles past any ratio a float holds: no change
    # is detectable)
    return math.expm1(k * se) if k * se < 700.0 else math.inf


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
    parts: tuple = ()          # a tails.Plan against runs like these (planned_mde); () without a run level


def summarize(series, n_boot=DEFAULT_BOOT, seed=1, plan=None):
    """Per-case summary of a plain (single-component) series.  plan: the
    case's tails.Plan on its host (judge.plan: one run's total variance
    and what a test of it rests on): the mde against another set of runs
    like these is then the run-level model's (planned_mde); without it,
    the reps' noise alone."""
    rv = series.rep_values()
    if not len(rv):
        return Summary(series.metric, 0, 0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    # with a plan the mde is the plan's: no bootstrap (nothing would take its standard error)
    planned = plan is not None and math.isfinite(plan[0]) and not any(math.isnan(v) for v in plan)
    est = side_estimate(series, 0 if planned else n_boot, seeded_rng(seed, "summary", series.label))
    mde = detectable_change(est.se * math.sqrt(2.0), est.df) if est.n >= 2 else math.nan
    parts = ()
    if planned and est.n >= 2:
        parts = runmodel.Plan(*plan)
        mde = planned_mde(parts, max(est.runs, 1))
    elif est.run_unit:
        # Against another set of runs like these: the runs' variance rules.
        var = float(np.var(est.run_thetas, ddof=1))
        mde = max(mde, detectable_change(math.sqrt(2.0 * var / est.runs), est.runs - 1.0))
    samples = series.all_samples()
    best = float(np.min(samples)) if lower_is_better(series.metric) else float(np.max(samples))
    within = cv_percents([r[0] for r in series.reps])
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
    # a tails.Plan: what runs like these rest on (planned_mde, runs_for)
    # when the run-level model judged the case; () otherwise
    parts: tuple = ()
    family: str = ""               # the adjustment's family (PRIMARY, SECONDARY; "" = one family)
    alone: bool = False            # significant, but it moved alone (decide's groups): INCONCLUSIVE
    mid_ratio: float = math.nan    # other / base of the median rep (the middle of the reps, not the estimator)
    fast_ratio: float = math.nan   # other / base of the fastest rep (where a fast mode sits)
    overlap: float = math.nan      # the faster side's share of reps as slow as the slower side's value, or slower
    modes: bool = False            # significant, but the middle of the reps did not follow (decide): INCONCLUSIVE
    modal: bool = True             # two parties: decide reads a fastest rep that did not follow as modes
    not_judged: str = ""           # NOT_JUDGED: why, in words ("memory shift: ctl_machine llc ran 9.1% slower")

    @property
    def significant(self):
        return self.verdict in (FASTER, SLOWER)

    @property
    def one_run(self):    # a side of one run: its flags rest on that run (the alone rule, compare's note, the page)
        return min(self.base_runs, self.other_runs) == 1

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
    def not_judged_kind(self):
        """What put the case out of judgement, in a few words: the reason up
        to its first colon ("memory shift"); "" when it was judged."""
        return self.not_judged.split(":", 1)[0].strip() if self.verdict == NOT_JUDGED else ""

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


@dataclass
class ModelDiff:
    """The run-level model's answer for one case (runmodel.Fit, judge):
    the base side's mean estimate and the difference (log time), the
    scale squared and degrees of freedom of the t it is tested against
    (runmodel.tailed), one run's total variance and what a plan's test
    rests on (a typical run's reps' degrees of freedom, the run
    differences the drift's scale was fitted on, the host's runs'
    degrees of freedom), the runs a side,
    how far the covariates moved the case, and the parts of var that are
    the covariates' uncertainty (as at one run a side) and the session
    term."""
    base_mean: float
    delta: float
    var: float
    df: float
    sig2: float
    plan_df: float
    runs: tuple
    shift: float = 0.0
    vcov: float = 0.0
    vsess: float = 0.0
    mom: float = math.inf     # the run differences its scale was fitted on (runmodel.Fit.mom)
    host_df: float = 0.0      # the degrees of freedom of the host's runs' spread (runmodel.Fit.host_df)
    rw: float = 1.0           # the reps' share of sig2 (runmodel.Fit.rw)


def compare(base, other, *, n_boot=DEFAULT_BOOT, seed=1, level=LEVEL, min_reps=DEFAULT_MIN_REPS,
            base_est=None, other_est=None, base_id="base", other_id="other", estimator=None, model=None):
    """Compare two Series (base = baseline, other = the one judged), without
    a final verdict for comparable cases: see `decide`.

    With `model` (a ModelDiff: the run-level model, runmodel), the ratio,
    its interval, p and the mde come from the model's difference of the
    sides' mean run estimates, its variance and degrees of freedom; the
    values shown are the base side's mean estimate and that times the
    ratio (the other side at the base side's machine state).  Without it
    (the statistics used directly, on reps alone): the difference d of the
    two sides' estimators on log times, with a standard error from each
    side's bootstrap (`side_estimate`) and Welch's degrees of freedom; a
    side whose runs disagree (one-way test) makes the run the observation
    (`run_level`).  Either way the interval excludes 1 exactly when p <
    1 - level, and `mde` is the smallest change this comparison could have
    detected at that level with 80% power.
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
    extra = {}
    if model is not None:
        d, se, df = model.delta, math.sqrt(max(model.var, 0.0)), model.df
        a, b = from_log_time(model.base_mean, metric), from_log_time(model.base_mean + d, metric)
        ratio = b / a
        change = speed_change(ratio, metric)
        extra = dict(base_runs=model.runs[0], other_runs=model.runs[1], run_level=True,
                     run_sd=math.sqrt(model.sig2) if model.sig2 >= 0 else nan,
                     parts=runmodel.Plan(model.sig2, model.plan_df, model.vcov, model.vsess, model.mom,
                                         model.host_df, model.rw))
    else:
        if base_est is None:
            base_est = side_estimate(base, n_boot, seeded_rng(seed, base_id, base.label), est_name)
        if other_est is None:
            other_est = side_estimate(other, n_boot, seeded_rng(seed, other_id, other.label), est_name)
        d = other_est.theta - base_est.theta
        va, vb = base_est.se ** 2, other_est.se ** 2
        se = math.sqrt(va + vb) if not (math.isnan(va) or math.isnan(vb)) else nan
        df = welch_df(va, base_est.df, vb, other_est.df) if not math.isnan(se) else nan
        run_mode = base_est.run_unit or other_est.run_unit
        if run_mode and not math.isnan(se):
            rl = _runs_as_unit(base_est, other_est)
            if rl is not None and rl[0] > se:
                se, df = rl
        extra = dict(base_run_p=base_est.run_p, other_run_p=other_est.run_p, base_runs=base_est.runs,
                     other_runs=other_est.runs, run_level=run_mode)
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
    rep_other, rep_base = other.rep_values(), base.rep_values()
    _, p_rank = mann_whitney(rep_other, rep_base)
    med_other, med_base = (x.combined(lambda c: float(np.median(c.rep_values()))) if x.combined()
                           else float(np.median(r)) for x, r in ((other, rep_other), (base, rep_base)))
    mid = med_other / med_base if med_other > 0 and med_base > 0 else nan
    shift = model.shift if model is not None else 0.0
    if shift:
        # the median reps compared at one machine state too
        mid *= math.exp(-shift) if lower_is_better(metric) else math.exp(shift)
    fast, overlap = _fast_mode(base, other, a, b, shift, metric)
    return Comparison(metric, a, b, ratio, lo, hi, p, p_rank, *counts, SAME, change, mde=mde,
                      estimator=est_name, df=df, mid_ratio=mid, fast_ratio=fast, overlap=overlap, **extra)


def _fast_mode(base, other, a, b, shift, metric):
    """(fast_ratio, overlap) of two Series: other / base of the fastest rep
    (each side's runs' fastest reps, their mean in log time: the pooled
    fastest of many runs is the fastest run's), the other side's taken at
    the base side's machine state (shift: log time); and the faster side's
    share of reps at least as slow as the slower side's value (a, b: the
    sides' values as compared)."""
    def fastest(series, off):
        y = series.log_times() - off
        ok = np.isfinite(y)
        if not np.any(ok):
            return math.nan, y[ok]
        if series.combined():     # a cell of several cases: its cases' fastest combined
            return log_combined(series.combine, metric, [fastest(c, 0.0)[0] for c in series.components()])[0] - off, \
                y[ok]
        codes = series.unit_codes()[ok]
        runs = np.full(int(codes.max()) + 1, np.inf)
        np.minimum.at(runs, codes, y[ok])
        return float(np.mean(runs[np.isfinite(runs)])), y[ok]
    fb, yb = fastest(base, 0.0)
    fo, yo = fastest(other, shift)
    if not (math.isfinite(fb) and math.isfinite(fo)) or not (a > 0 and b > 0):
        return math.nan, math.nan
    fast = math.exp(fo - fb) if lower_is_better(metric) else math.exp(fb - fo)
    ea, eb = to_log_time([a], metric)[0], to_log_time([b], metric)[0]
    faster, slow_value = (yb, eb) if eb >= ea else (yo, ea)
    return fast, float(np.mean(faster >= slow_value))


def _runs_as_unit(a, b):
    """(se, df) of the difference of two sides' estimates with the run as
    the observation: the variance between runs, pooled over both sides'
    runs (each run's estimate around its side's mean), times 1/k_a + 1/k_b.
    A side with one run borrows the other's runs' variance.  None when no
    side has two runs.  (The statistics used on reps alone, without the
    run-level model.)"""
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


PRIMARY = "primary"      # the cases behind the summary tables: one family of the adjustment
# A significant change of the low estimator whose median rep moved less than
# this share of it (or the other way) is a new mix of fast and slow reps, not
# a shift (decide: `modes`).  On the A/A and slowdown runs of
# tests/validation/README.md ("Host drift scale"), the mode flips flagged had
# shares 0.08-0.16 and the slowdowns and drifts 0.81-1.53.  The same share
# of the fastest rep in a case of two parties, where the faster side's reps
# reach the slower side's value (a share of them at least LOW_Q): the sides
# drew both modes, in another mix (tests/validation/README.md, "The
# run-level model").
MODES_SHARE = 0.5
SECONDARY = "secondary"  # every other case: another family


def decide(comparisons, *, min_effect=DEFAULT_MIN_EFFECT, level=LEVEL, adjust=True, machine_shift=False,
           families=None, groups=None, shared=()):
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
    A change of the low estimator that the sides' median reps do not follow (they moved less than
    MODES_SHARE of it, or the other way) is INCONCLUSIVE, marked `modes`: where a case's reps fall
    into a fast and a slow mode (two threads on one CPU), a run that drew no fast rep moves the low
    quantile by the modes' distance while the bulk of its reps stays put; a kernel change moves
    both.  So does, in a case of two parties (Comparison.modal: one process has one path, and its
    stray fast rep is a moment of the machine), a change of the low estimator that the sides'
    fastest reps do not follow (less than MODES_SHARE of it) where the faster side's reps reach the
    slower side's value in at least a LOW_Q share: both sides drew both modes, and the slower one
    fewer fast reps (a run with one fast rep in fifteen and its neighbour with eight).
    machine_shift: True, a reason, or one per comparison (a reason in
    words, or True, when a control its domain follows moved beyond what
    the host's runs have shown; "" or False when not): such a case is NOT_JUDGED, whatever its
    p, with the reason in `not_judged`, and for the judged cases of its
    family it counts as a case with p = 1 (its small p, the machine's
    doing, would lower every judged case's bar in the step-up).  Adjusting keeps an
    A/A comparison of a few hundred cases free of false alarms;
    adjust=False judges each case on its own.

    groups: None, or a label per comparison (the binary of its case: its
    cases share a path into the kernel).  Then a case outside the primary
    families that is significant with one run on a side, and whose group
    has no other case significant the same way, moved alone: it is
    INCONCLUSIVE, marked `alone`.  A case of one run can jump 30-60% for
    the whole run, one case at a time (A/A runs of a 2-vCPU VM: about one
    run in nine), which no prior of the drift between runs made from a few
    runs covers; a kernel change that moves a path moves its binary's
    other cases too, and the primary cases keep the power to see one
    headline number move alone.  shared: groups whose cases share one
    state from run to run (the drift prior's file-system-bound benches:
    what the runs before left in the file system): there one run's state
    moves a headline case alone as far as any, and the rule takes the
    primary cases too.
    """
    comparisons = list(comparisons)
    shifts = machine_shift if isinstance(machine_shift, (list, tuple)) else [machine_shift] * len(comparisons)
    fams = list(families) if families is not None else [""] * len(comparisons)
    if len(shifts) != len(comparisons) or len(fams) != len(comparisons):
        raise ValueError("decide: machine_shift and families need one entry per comparison")
    if groups is not None and len(groups) != len(comparisons):
        raise ValueError("decide: groups needs one entry per comparison")
    for c in comparisons:
        c.alone = c.modes = False
        c.not_judged = ""
    for c, f in zip(comparisons, fams):
        c.family = f
    live = [(c, s, f) for c, s, f in zip(comparisons, shifts, fams) if c.verdict not in (MISSING, UNDEFINED, FEW)]
    qs = {}
    for fam in dict.fromkeys(f for _, _, f in live):
        members = [(c, s) for c, s, f in live if f == fam]
        ps = [c.p for c, _ in members]
        got = bh_adjust(ps) if adjust else np.asarray(ps, dtype=float)
        # a case the machine moved counts in its family's number of cases,
        # never as a discovery: the judged cases' bar as if its p were 1
        bar = bh_adjust([1.0 if s else p for (_, s), p in zip(members, ps)]) \
            if adjust and any(s for _, s in members) else got
        qs.update({id(c): float(q if s else b) for (c, s), q, b in zip(members, got, bar)})
    alpha = 1.0 - level
    for c, shifted, _ in live:
        q = qs[id(c)]
        c.q = q
        significant = not math.isnan(q) and q < alpha
        big = abs(c.ratio - 1.0) >= min_effect
        c.unresolved = False
        if shifted:
            c.verdict = NOT_JUDGED
            c.not_judged = shifted if isinstance(shifted, str) else "machine shift"
        elif significant and big and _modes(c):
            c.verdict = INCONCLUSIVE
            c.modes = True
        elif significant and big:
            c.verdict = FASTER if c.change > 0 else SLOWER
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
            if (c.verdict in (FASTER, SLOWER) and (not f.startswith(PRIMARY) or g in shared) and c.one_run
                    and len(moved[(g, c.verdict)]) == 1):
                c.verdict = INCONCLUSIVE
                c.alone = True
    return comparisons


def _modes(c):
    """The low estimator moved and the median rep did not follow (less
    than MODES_SHARE of the change in log terms, or the other way), or, in
    a case of two parties, the fastest rep did not, the faster side's reps
    reaching the slower side's value at least a LOW_Q share of the time."""
    if c.estimator == "median" or not (c.ratio > 0 and c.mid_ratio > 0) or c.ratio == 1.0:
        return False
    if math.log(c.mid_ratio) / math.log(c.ratio) < MODES_SHARE:
        return True
    # the fast mode stayed where it was, and the faster side's reps reach the
    # slower side's value as often as the estimator's quantile: the sides'
    # reps share both modes and drew them in another mix
    return c.modal and c.fast_ratio > 0 and c.overlap >= LOW_Q and \
        math.log(c.fast_ratio) / math.log(c.ratio) < MODES_SHARE


# ------------------------------------------------------------ units
