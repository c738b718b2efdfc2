"""Sides of a comparison put to the run-level model (runmodel): each run's
own estimates (once per run), the covariates from its control cases, the
host's runs that measure the run level (HostRuns), and the model's answer
turned into a stats.Comparison per case."""
import datetime
import math
from dataclasses import dataclass, field

import numpy as np

from . import runcache, runmodel, stats, workers
from .bootstrap import log_combined, side_estimate, side_estimates


# ---- one run's estimates ---------------------------------------------------

def run_estimates(run, opts, cells=None):
    """{key: (theta, se, df)}: each case's estimate over this run's reps (log
    time, the comparison's estimator) with its bootstrap standard error and
    that error's degrees of freedom (stats.estimator_df),
    and each summary-table cell made of several cases (cells(run) ->
    {key: Series}), computed once per run and estimator."""
    key = (opts.estimator, opts.n_boot, opts.seed)
    cache = run.__dict__.setdefault("_kbench_estimates", {})
    got = cache.get(key)
    if got is None:
        side = f"{run.host}/{run.kernel}#{run.run_id}"      # (the kernel's name as grouped seeds it)

        def make():
            series = {name: stats.Series.single(c.rep_arrays(), c.metric, name, units=c.rep_units(),
                                                estimator=opts.estimator) for name, c in run.cases.items()}
            series.update(cells(run) if cells else {})
            return _estimates(series, side, opts)
        got = cache[key] = runcache.estimates(run, key + (side, cells is not None), make)
    return got


def estimate_runs(runs, opts, cells=None):
    """run_estimates of each of runs not made yet, at once: by forked worker
    processes, one per CPU (workers.count: from PARALLEL_FROM runs, capped
    by KBENCH_JOBS), each handed back; where there are none, or they fail,
    each when it is asked for.  The bootstraps of every case of every run
    are most of what a comparison of many runs costs."""
    key = (opts.estimator, opts.n_boot, opts.seed)
    todo = [r for r in runs if key not in r.__dict__.get("_kbench_estimates", {})]
    got = workers.fork_map(lambda run: run_estimates(run, opts, cells), todo, workers.count(len(todo)))
    for r, e in zip(todo, got or ()):
        r.__dict__.setdefault("_kbench_estimates", {})[key] = e


def _estimates(series, side_id, opts):
    """{key: (theta, se, df)} of each Series of {key: Series} with two reps
    or more, each key's bootstrap seeded by the side and the key, made
    together (side_estimates)."""
    keys = [k for k, ser in series.items() if ser is not None and ser.n_reps >= 2]
    ests = side_estimates([(series[k], stats.seeded_rng(opts.seed, side_id, k)) for k in keys], opts.n_boot,
                          opts.estimator)
    # (a se of nan, as two equal reps give, leaves the key out of the model; its
    # estimate still serves as a covariate: a control of a short run)
    return {k: (float(e.theta), float(e.se), float(e.df)) for k, e in zip(keys, ests) if not math.isnan(e.theta)}


def series_estimates(series, opts, tag):
    """{run: (theta, se, df)} of one Series split by the run of each rep (a
    quantity no run's own estimates hold: a scaling point)."""
    by = {}
    for r, u in zip(series.reps, series.units):
        by.setdefault(u, []).append(r)
    out = {}
    for u, reps in by.items():
        ser = stats.Series(reps, series.combine, series.metric, series.label, [u] * len(reps), opts.estimator)
        out.update({u: e for e in _estimates({series.label: ser}, f"{tag}#{u}", opts).values()})
    return out


# ---- the covariates --------------------------------------------------------

def control_names(runs):
    """(CPU controls, memory controls) present in every run: the speed of
    runs compared with one another must be the mean over the same ones."""
    cpu = mem = None
    for r in runs:
        c = {n for n, x in r.cases.items() if x.control and x.reps and (x.decl.get("domain") or "cpu") == "cpu"}
        m = {n for n, x in r.cases.items() if x.control and x.reps and x.decl.get("domain") == "memory"}
        cpu = c if cpu is None else cpu & c
        mem = m if mem is None else mem & m
    return sorted(cpu or ()), sorted(mem or ())


def covariates(est, cpu, mem):
    """A run's covariates from its estimates: its CPU speed (the mean log
    time of its CPU controls), then each memory control relative to it;
    nan where a control is missing."""
    if not cpu:
        return []
    vals = [est.get(n, (math.nan,))[0] for n in cpu]
    speed = sum(vals) / len(vals)
    return [speed] + [est.get(n, (math.nan,))[0] - speed for n in mem]


# ---- the host's runs -------------------------------------------------------

@dataclass
class HostRuns:
    """The runs of one host that measure how far whole runs drift: lists of
    runs, each the replicates of one kernel (the compared sides are lists
    of their own); with the built-in drift prior."""
    lists: list = field(default_factory=list)
    prior: object = None
    boots: object = None          # boots the runs were made on; None: not recorded for all

    @property
    def measured(self):
        return any(len(rs) >= 2 for rs in self.lists)

    @property
    def runs(self):
        return sum(len(rs) for rs in self.lists if len(rs) >= 2)

    @property
    def kernels(self):
        return sum(1 for rs in self.lists if len(rs) >= 2)

    @property
    def kernel_runs(self):
        return [(rs[0].kernel, len(rs)) for rs in self.lists if len(rs) >= 2]

    def __bool__(self):
        return self.measured or self.prior is not None


class NoiseMap(dict):
    """{host: HostRuns}; get() of a host with none gives the prior alone
    (HostRuns without runs), or None without a prior."""

    def __init__(self, items=(), prior=None):
        super().__init__(items)
        self.prior = prior

    def get(self, host, default=None):
        v = super().get(host)
        if v is None and self.prior is not None:
            return HostRuns([], self.prior)
        return default if v is None else v


def tau2_of(prior, keys):
    """Per key the prior's drift (tau^2); 0 without a prior."""
    if prior is None:
        return np.zeros(len(keys))
    return np.array([prior.get(k)[0] for k in keys])


def cell_tau2(tau2, prior, keys, cells, est):
    """tau2 with each summary cell of several cases (cells: {key: Series}
    of one run) at least the drift its cases' priors give it: the cell is
    the combination of its cases' values (est: that run's {key: (theta,
    se, df)} weighs them as the combination does), so its drift is theirs,
    correlated as far as that widens it (the parts of a mean drift
    together, a difference's as if apart)."""
    if prior is None or not cells:
        return tau2
    out = np.array(tau2, dtype=float)
    for j, key in enumerate(keys):
        ser = cells.get(key)
        names = getattr(ser, "case_names", ())
        if ser is None or not ser.combined() or not names or any(n not in est for n in names):
            continue
        _, g = log_combined(ser.combine, ser.metric, [est[n][0] for n in names])
        t = [math.sqrt(prior.get(n)[0]) for n in names]
        var = sum((gi * ti) ** 2 for gi, ti in zip(g, t)) + 2.0 * sum(
            max(0.0, g[a] * g[b]) * t[a] * t[b] for a in range(len(names)) for b in range(a + 1, len(names)))
        if math.isfinite(var):
            out[j] = max(out[j], var)
    return out


# ---- a comparison ----------------------------------------------------------

def rows_and_groups(base_runs, other_runs, host):
    """(every run, base row indices, other row indices, replicate groups as
    row indices): the sides' runs first, then the host's other runs; each
    list of the host's runs one group (the sides' own lists among them)."""
    runs, index = [], {}

    def row(r):
        k = (r.host, r.run_id, id(r))
        if k not in index:
            index[k] = len(runs)
            runs.append(r)
        return index[k]
    base = [row(r) for r in base_runs]
    other = [row(r) for r in other_runs]
    groups = []
    lists = list(host.lists) if host is not None else []
    for side in (base_runs, other_runs):
        if len(side) >= 2 and not any({id(r) for r in side} <= {id(x) for x in rs} for rs in lists):
            lists.append(list(side))
    for rs in lists:
        if len(rs) >= 2:
            groups.append([row(r) for r in rs])
    return runs, base, other, groups


def fit(base_runs, other_runs, keys, domains, opts, host, extra=None, cells=None):
    """(runmodel.fit of these keys (cases, cells) for two sides' runs, with
    the host's runs (HostRuns or None); the CPU and memory controls behind
    the covariates).  extra: {key: {run: (theta, se)}} of keys no run's own
    estimates hold (series_estimates); cells(run): the summary-table cells
    each run's estimates include."""
    runs, base, other, groups = rows_and_groups(base_runs, other_runs, host)
    cpu, mem = control_names([runs[i] for i in base + other])
    ests = []
    for r in runs:
        e = dict(run_estimates(r, opts, cells))
        for key, per_run in (extra or {}).items():
            if r.run_id in per_run:
                e[key] = per_run[r.run_id]
        ests.append(e)
    d, tau2, x_tau2 = model_inputs(runs, ests, cpu, mem, keys, base[0], host, opts, cells)
    sessions = runmodel.sessions_of([started(r) for r in runs])
    return runmodel.fit(d, base, other, groups, domains, tau2, relative=opts.relative, x_tau2=x_tau2,
                        sessions=sessions), (cpu, mem)


def model_inputs(runs, ests, cpu, mem, keys, first, host, opts, cells=None):
    """(runmodel.Design, tau2, x_tau2) of the runs' estimates ests for fit
    and plan: the covariates from the controls cpu and mem, each key's
    prior drift (a summary cell's at least its cases', weighed by the
    estimates of row `first`) and the covariates' (None without them or a
    prior)."""
    x = [covariates(e, cpu, mem) for e in ests]
    ncov = len(x[0]) if x else 0
    d = runmodel.design(ests, x if ncov else [[] for _ in ests], keys)
    prior = host.prior if host is not None else getattr(opts, "prior", None)
    tau2 = cell_tau2(tau2_of(prior, keys), prior, keys, cells(runs[first]) if cells else None, ests[first])
    return d, tau2, covariate_tau2(prior, cpu, mem) if ncov else None


def started(run):
    """A run's start (seconds since the epoch, from meta.json's
    started_utc); nan when it was not recorded."""
    t = (run.meta or {}).get("started_utc")
    if not isinstance(t, str):
        return math.nan
    try:
        return datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
    except ValueError:
        return math.nan


def covariate_tau2(prior, cpu, mem):
    """Per covariate the prior's drift of its controls (the CPU speed: the
    mean of its controls'; a memory control relative to it: the two
    added); None without a prior."""
    if prior is None or not cpu:
        return None
    t = tau2_of(prior, list(cpu) + list(mem))
    tc = float(np.mean(t[:len(cpu)]))
    return [tc] + [float(v) + tc for v in t[len(cpu):]]


def plan(runs, host, keys, domains, opts, cells=None):
    """{key: runmodel.Plan}: one run's total variance of each key on this host
    (runmodel.variances) and what a test of it rests on, for a kernel's own
    summary: its runs and the host's other runs (HostRuns or None)."""
    rws, base, _, groups = rows_and_groups(runs, [], host)
    cpu, mem = control_names([rws[i] for i in base])
    ests = [run_estimates(r, opts, cells) for r in rws]
    d, tau2, x_tau2 = model_inputs(rws, ests, cpu, mem, keys, base[0], host, opts, cells)
    sig2, rdf, mom, dof, rw = runmodel.variances(d, base, groups, domains, tau2, opts.relative, x_tau2,
                                                 runmodel.sessions_of([started(r) for r in rws]))
    # planned_mde's parts: no covariates' move, no session term (no comparison)
    return {k: runmodel.Plan(float(s), float(v), mom=float(m), hdf=float(h), rw=float(r))
            for k, s, v, m, h, r in zip(keys, sig2, rdf, mom, dof, rw)}


def comparison(f, j, base_series, other_series, opts):
    """The stats.Comparison of key j of a runmodel.Fit (stats.compare with
    the model's difference, variance and degrees of freedom; the counts,
    the rank test and the median reps from the two Series)."""
    model = None
    delta, var, mean = float(f.delta[j]), float(f.var[j]), float(f.base_mean[j])
    if math.isfinite(delta) and math.isfinite(var) and math.isfinite(mean):
        hist_df = f.plan_df(j)
        # the covariates' part as at one run a side (the controls' mean move shrinks with the runs);
        # both parts of var, finite where var is
        vcov = float(f.vbeta[j]) * 2.0 / (1.0 / f.k[0] + 1.0 / f.k[1])
        model = stats.ModelDiff(mean, delta, var, float(f.df[j]), float(f.sig2[j]), hist_df, f.k,
                                float(f.shift[j]), vcov, float(f.vsess[j]), float(f.mom[j]), f.host_df(j),
                                float(f.rw[j]))
    return stats.compare(base_series, other_series, min_reps=opts.min_reps, estimator=opts.estimator,
                         level=opts.level, model=model)
