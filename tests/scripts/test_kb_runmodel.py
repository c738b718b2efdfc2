"""The run-level model (scripts/kbench/model/runmodel.py): its parts on
fixed inputs, and what compare says of a short run against its copy made
20% slower, controls included."""
import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from kbench.model import compare, drift, load, runmodel, stats

ROOT = Path(__file__).resolve().parent.parent.parent
KEPT = ROOT / "tests" / "validation" / "data" / "host-scale" / "20261204T223337Z-9fd498"


def _design(y, w=None, x=None, wdf=None):
    y = np.asarray(y, dtype=float)
    w = np.full(y.shape, 1e-4) if w is None else np.asarray(w, dtype=float)
    x = np.zeros((y.shape[0], 0)) if x is None else np.asarray(x, dtype=float)
    wdf = np.full(y.shape, math.inf) if wdf is None else np.asarray(wdf, dtype=float)
    return runmodel.Design([f"k{j}" for j in range(y.shape[1])], y, w, x, wdf)


def test_one_runs_variance_is_moderated_towards_the_prior():
    """No covariates, one key with runs of its own: sigma^2 = (d0 s0 + ss)
    / (d0 + dof), s0 = a tau^2 + b w with the prior as it is (one key: no
    scale is fitted), d0 = D0 here (no reps' share, w's df infinite)."""
    y = [[0.0], [0.02], [0.5], [0.46], [0.01], [0.5]]      # base 0, 2; other 1, 3; history 4, 5
    d = _design(y, w=[[0.0]] * 6)
    tau2 = np.array([0.03 ** 2])
    f = runmodel.fit(d, [0, 1], [2, 3], [[0, 1], [2, 3], [4, 5]], ["cpu"], tau2)
    ss = 0.02 ** 2 / 2 + 0.04 ** 2 / 2 + 0.49 ** 2 / 2
    assert f.dof[0] == 3
    assert f.sig2[0] == pytest.approx((runmodel.D0 * 0.03 ** 2 + ss) / (runmodel.D0 + 3))
    assert f.delta[0] == pytest.approx(0.48 - 0.01)
    # tested as t with D0 degrees of freedom whose variance is sigma^2 (1/2 + 1/2) (w's degrees of
    # freedom not known: not widened for them)
    assert f.var[0] == pytest.approx(f.sig2[0] * (1 / 2 + 1 / 2) * (runmodel.D0 - 2) / runmodel.D0)
    assert f.df[0] == runmodel.D0


def test_a_difference_is_tested_as_t_with_d0_degrees_of_freedom_of_its_variance():
    """tailed on fixed inputs (D0 = 4): the scale squared of a t with 4
    degrees of freedom whose variance is 2 is 1; reps of few degrees of
    freedom (3) give t(3) of the variance itself; reps of 8 widen the
    scale as t(8) widens a normal at its 5% point.  Drawn so (a t(4)
    difference of variance 1, its reps' noise known to 8 degrees of
    freedom), an unchanged case is at p < .05 about one time in twenty
    and at p < .001 about one in a thousand, where a normal test of the
    same variance puts five times as many past its .001 point."""
    assert runmodel.D0 == 4.0
    var, df = runmodel.tailed(np.array([2.0, 2.0, 0.5, 2.0]), np.array([math.inf, 3.0, math.nan, 8.0]))
    widen = (stats.t_quantile(0.05, 8.0) / stats.t_quantile(0.05, math.inf)) ** 2
    assert var[:3].tolist() == [1.0, 2.0, 0.25] and var[3] == pytest.approx(widen)
    assert df.tolist() == [4.0, 3.0, 4.0, 4.0]
    rng = np.random.default_rng(3)
    n = 200000
    d = np.abs(rng.standard_t(4, size=n) * math.sqrt(0.5))
    normal = np.mean(d > 3.2905)
    d /= np.sqrt(rng.chisquare(8, size=n) / 8)        # the variance as an estimate of 8 degrees of freedom
    scale2, df = (float(v) for v in runmodel.tailed(1.0, 8.0))
    t = d / math.sqrt(scale2)
    assert 0.04 < np.mean(t > stats.t_quantile(0.05, df)) < 0.055
    assert 0.0005 < np.mean(t > stats.t_quantile(0.001, df)) < 0.002
    assert normal > 0.005


def test_a_run_whose_reps_scattered_counts_for_less():
    """A run's weight against a typical run (reps' noise wbar): the drift
    sig2 - wbar plus its own w; never above one."""
    sig2, wbar = np.array([4e-4]), np.array([1e-4])
    u = runmodel.weights(np.array([[1e-4], [0.0], [0.0256], [math.nan]]), sig2, wbar)
    assert u[:, 0].tolist() == pytest.approx([1.0, 1.0, 4e-4 / (4e-4 - 1e-4 + 0.0256), 1.0])
    # three runs a side, one of the base's 15% off with reps that scattered (se 0.16), its w
    # far above the others': the sides' difference is the other runs', and the spread that
    # run adds is weighed down with it
    y = [[0.15], [0.0], [0.002], [0.07], [0.068], [0.072]]
    w = [[0.0256], [1e-4], [1e-4], [1e-4], [1e-4], [1e-4]]
    f = runmodel.fit(_design(y, w=w), [0, 1, 2], [3, 4, 5], [[0, 1, 2], [3, 4, 5]], ["cpu"],
                     np.array([1e-4]))
    assert f.delta[0] == pytest.approx(0.07 - 0.001, abs=0.004)
    plain = runmodel.fit(_design(y, w=[[1e-4]] * 6), [0, 1, 2], [3, 4, 5], [[0, 1, 2], [3, 4, 5]], ["cpu"],
                         np.array([1e-4]))
    assert plain.delta[0] == pytest.approx(0.07 - 0.050667, abs=1e-4)    # as if every run were alike
    assert f.var[0] < plain.var[0] / 3


def test_beta_follows_the_covariate_as_far_as_the_runs_show_it():
    """A key that moves 1.5x the CPU speed in a history of eight runs: its
    posterior beta is near 1.5 (the prior's 1 barely pulls), its
    difference is taken at one machine state, and the covariate's move
    adds beta's uncertainty to the variance."""
    rng = np.random.default_rng(3)
    x = rng.normal(0, 0.05, size=12)
    y = 1.5 * x + rng.normal(0, 0.002, size=12)
    y[10:] += 0.10                      # the other side: 10% slower, at its own speed
    x[10:] += 0.04
    y[10:] += 1.5 * 0.04
    d = _design(y[:, None], x=x[:, None])
    f = runmodel.fit(d, [8, 9], [10, 11], [list(range(8)), [8, 9], [10, 11]], ["cpu"], np.array([1e-4]))
    assert f.delta[0] == pytest.approx(0.10, abs=0.01)
    assert f.shift[0] == pytest.approx(1.5 * f.dx[0], rel=0.1)


def test_the_guard_names_a_covariate_beyond_what_the_runs_have_shown():
    """The CPU speed within 1% in the history and the sides, then 30% apart
    between the sides: beyond GUARD_Z of its spread."""
    x = np.array([[0.0], [0.01], [0.005], [0.3], [0.305], [0.0], [0.01]])
    d = _design(np.zeros((7, 1)), x=x)
    guarded, limit = runmodel.guard(d, [[0, 1, 2], [3, 4], [5, 6]], np.array([0.3]), 1.0, [0.02 ** 2])
    assert guarded == [0] and limit[0] < 0.3
    assert runmodel.guard(d, [[0, 1, 2]], np.array([0.01]), 1.0, [0.02 ** 2])[0] == []


def test_sessions_and_their_weight():
    """Runs more than an hour apart are two sessions; sides alternating in
    one session weigh 0, sides each a session of its own 2, half and half
    in between."""
    starts = [0, 300, 600, 900, 20000, 20300]
    s = runmodel.sessions_of(starts)
    assert s == [0, 0, 0, 0, 1, 1]
    assert runmodel.session_weight(s, [0, 2], [1, 3]) == 0.0
    assert runmodel.session_weight(s, [0, 1], [4, 5]) == 2.0
    assert runmodel.session_weight(s, [0, 4], [1, 2]) == pytest.approx(0.5)
    assert runmodel.sessions_of([math.nan, 5.0]) == [0, 0]


def test_the_empirical_null_finds_the_scale_and_ignores_a_minority_of_changes():
    """Differences drawn with variance tau^2 / 4 (a host calmer than the
    prior: a = 0.25), a tenth of them moved by 20 sds: the fit finds a
    near 0.25 all the same; a bulk that moved further than the prior allows
    (every case 4x its variance: a kernel's change of a whole domain, or a
    machine beyond the prior) is taken at the prior, never past it."""
    rng = np.random.default_rng(7)
    t2 = rng.uniform(1e-4, 4e-4, size=300)
    w = np.full(300, 1e-6)
    tail = (runmodel.D0 - 2) / runmodel.D0          # t(D0) scaled to a variance
    d = rng.standard_t(runmodel.D0, size=300) * np.sqrt(0.25 * t2 * tail)
    d[:30] += 20 * np.sqrt(0.25 * t2[:30])
    a, b, _ = runmodel.fit_t(d * d, w, t2)
    assert 0.15 < a < 0.4
    wide = rng.standard_t(runmodel.D0, size=300) * np.sqrt(4 * t2 * tail)
    a, b, _ = runmodel.fit_t(wide * wide, w, t2)
    assert a == pytest.approx(1.0) and b <= 1.0


def test_one_run_a_side_measures_how_far_its_cases_followed_the_memory_controls_move():
    """One run a side, no history; the memory control moved 30% between
    the runs and the CPU speed 6%.  The memory slopes' prior sd is a bound
    (tau / tau_control: 0.38 here, so the control's move alone could
    explain 11%), and where the cases did not follow it, the comparison's
    bulk says so: the memory part of their covariates' uncertainty comes
    down, the CPU speed's (a prior of the slope itself) stays whole.  Where they did
    follow it, as far as the bound allows, it stays; where a fifth of them
    followed it fully, those are not taken for changes far out."""
    rng = np.random.default_rng(21)
    n = 200
    tau2 = np.full(n, 0.05 ** 2)
    x_tau2 = [0.02 ** 2, 0.13 ** 2]
    x = [[0.0, 0.0], [0.06, 0.3]]
    bound = 0.05 / 0.13
    tail = math.sqrt((runmodel.D0 - 2) / runmodel.D0)

    def fit(beta_mem):
        y = np.zeros((2, n))
        y[1] = 0.06 + beta_mem * 0.3 + rng.standard_t(runmodel.D0, size=n) * 0.01 * tail
        return runmodel.fit(_design(y, w=np.full((2, n), 2e-5), x=x), [0], [1], [], ["memory"] * n, tau2,
                            x_tau2=x_tau2)

    def p(f):
        return np.array([stats.t_two_sided_p(abs(dl) / math.sqrt(v), df) for dl, v, df in zip(f.delta, f.var, f.df)])
    speed = runmodel.BETA_CPU[1] ** 2 * 0.06 ** 2
    full = speed + bound ** 2 * 0.3 ** 2
    still = fit(np.zeros(n))
    assert np.all(still.vbeta >= speed * 0.999) and np.all(still.vbeta < speed + 0.1 * (full - speed))
    assert set(still.follow) == {"memory"} and still.follow["memory"] < 0.1
    # a memory control that did not move tells nothing of how far the cases follow it: nothing said
    y = np.zeros((2, n))
    y[1] = 0.06 + rng.standard_t(runmodel.D0, size=n) * 0.01 * tail
    calm = runmodel.fit(_design(y, w=np.full((2, n), 2e-5), x=[[0.0, 0.0], [0.06, 0.001]]), [0], [1], [],
                        ["memory"] * n, tau2, x_tau2=x_tau2)
    assert calm.follow == {}
    followed = fit(rng.normal(0, bound, size=n))
    assert np.all(followed.vbeta > speed + 0.5 * (full - speed)) and np.all(followed.vbeta <= full * 1.001)
    # the still cases are judged with power, the ones that followed are not flagged for it
    assert np.median(np.sqrt(still.var)) < 0.5 * np.median(np.sqrt(followed.var))
    assert np.mean(p(followed) < 0.05) < 0.1
    for _ in range(3):
        beta = np.zeros(n)
        few = rng.choice(n, n // 5, replace=False)
        beta[few] = bound * rng.choice([-1.0, 1.0], size=len(few))
        f = fit(beta)
        # the bulk saw them (above the floor), and no median case took them down with it
        assert f.follow["memory"] > 1.5 * runmodel.A_MIN and np.mean(p(f)[few] < 0.001) < 0.2


def test_the_runs_spread_fit_finds_the_scale():
    rng = np.random.default_rng(11)
    t2 = rng.uniform(1e-4, 4e-4, size=300)
    w = np.full(300, 1e-6)
    dof = np.full(300, 3.0)
    true = 0.5 * t2 * rng.f(3, runmodel.D0, size=300)
    a, b = runmodel.fit_f(true * dof, dof, w, t2)
    assert 0.35 < a < 0.7


def test_a_summary_takes_one_runs_variance_as_a_comparison_of_its_runs_does():
    """The power line plans with what a comparison would measure: for the
    runs of two sides (two each), a history pair and a CPU-speed
    covariate, variances() gives the very sigma^2 fit() does, with the
    same reps' noise (the median run's) and the same weights: here one
    run whose reps scattered, which a plain mean of w would have made the
    typical run."""
    rng = np.random.default_rng(5)
    n_keys = 40
    speed = rng.normal(0, 0.02, size=6)
    y = speed[:, None] + rng.normal(0, 0.01, size=(6, n_keys))
    w = np.full((6, n_keys), 4e-5)
    w[2] = 0.004                           # the base's second run: its reps scattered
    d = _design(y, w=w, x=speed[:, None], wdf=np.full((6, n_keys), 9.0))
    groups = [[0, 1], [2, 3], [4, 5]]      # history, base, other
    domains = ["cpu"] * n_keys
    tau2 = np.full(n_keys, 2e-4)
    f = runmodel.fit(d, [2, 3], [4, 5], groups, domains, tau2, x_tau2=[1e-4])
    sig2, df, mom, dof, rw = runmodel.variances(d, [2, 3, 4, 5], groups, domains, tau2, x_tau2=[1e-4])
    assert sig2 == pytest.approx(f.sig2, rel=1e-9)
    assert rw == pytest.approx(f.rw, rel=1e-9) and np.all(rw > 0) and np.all(rw < 1)
    assert df == pytest.approx(f.rdf) and np.all(df == 9.0)       # a typical run's reps' degrees of freedom
    assert mom.tolist() == f.mom.tolist()
    assert f.scale["cpu"][2] == "runs"
    u = runmodel.weights(d.w, f.sig2, np.median(w[2:], axis=0))
    assert np.all(u[2] < 0.2) and np.all(u[[0, 1, 3, 4, 5]] == 1.0)


def test_the_memory_managers_cases_are_a_group_with_their_own_session_share():
    """scale_group: the CPU-bound cases of lat_proc, lat_pagefault and
    lat_mmap are "state" (scaled as the CPU-bound, checked on their own
    bulk), a system call and a memory-bound fork are not; with the sides in
    sessions of their own, a state case carries SESSION_SHARE["state"] of
    its run variance twice, a CPU-bound one the CPU's share."""
    def case(name, domain):
        c = load.Case(name, name.split()[0], name.split()[1], "", "", "latency")
        c.declared = {"domain": domain}
        return c
    got = [compare.scale_group(case(n, dom)) for n, dom in (
        ("lat_proc fork", "cpu"), ("lat_pagefault anon x1", "cpu"), ("lat_mmap mmap size_kb=4", "cpu"),
        ("lat_syscall null", "cpu"), ("lat_proc fork_mem parent_mb=64", "memory"))]
    assert got == ["state", "state", "state", "cpu", "memory"]
    assert "state" in runmodel.BULK_GROUPS and runmodel.SCALE_AS["state"] == "cpu"
    rng = np.random.default_rng(3)
    n_keys = 20
    y = rng.normal(0, 0.01, size=(4, n_keys))
    d = _design(y, w=np.full((4, n_keys), 1e-6), x=np.zeros((4, 0)), wdf=np.full((4, n_keys), 6.0))
    domains = ["cpu"] * 10 + ["state"] * 10
    f = runmodel.fit(d, [0, 1], [2, 3], [[0, 1], [2, 3]], domains, np.full(n_keys, 1e-4), sessions=[0, 0, 1, 1])
    share = f.vsess / f.sig2
    assert share[:10] == pytest.approx(2 * runmodel.SESSION_SHARE["cpu"])
    assert share[10:] == pytest.approx(2 * runmodel.SESSION_SHARE["state"])
    assert runmodel.SESSION_SHARE["state"] > runmodel.SESSION_SHARE["cpu"]
    alike = runmodel.fit(d, [0, 2], [1, 3], [[0, 1], [2, 3]], domains, np.full(n_keys, 1e-4), sessions=[0, 0, 1, 1])
    assert np.all(alike.vsess == 0.0)
    # the state cases all 5% slower on the other side: their group is widened by its own bulk, the rest not
    moved = y.copy()
    moved[2:, 10:] += 0.05
    dm = _design(moved, w=np.full((4, n_keys), 1e-6), x=np.zeros((4, 0)), wdf=np.full((4, n_keys), 6.0))
    f = runmodel.fit(dm, [0, 1], [2, 3], [[0, 1], [2, 3]], domains, np.full(n_keys, 1e-4))
    assert f.bulk.get("state", 0) > 1 and "cpu" not in f.bulk


def test_one_run_a_side_in_sessions_of_their_own_counts_the_session_once():
    """One run a side, no history: the scale is fitted on the comparison's
    own differences, which hold the sessions' term where the sides ran in
    sessions of their own.  So the fit takes one run's share of them, and
    the variance with the session term added is what the differences show,
    as with the sides in one session: the session is not counted twice.
    (Before, sides hours apart got the sessions' term on top of a fit that
    already held it: about (1 + SESSION_SHARE) times the variance.)"""
    rng = np.random.default_rng(21)
    n = 80
    tau2 = np.full(n, 1e-3)
    y = np.zeros((2, n))
    y[1] = rng.normal(0, 1, size=n) * math.sqrt(2 * 0.3e-3)        # a third of the prior's drift
    d = _design(y, w=np.full((2, n), 1e-9))
    one = runmodel.fit(d, [0], [1], [], ["cpu"] * n, tau2, sessions=[0, 0])
    apart = runmodel.fit(d, [0], [1], [], ["cpu"] * n, tau2, sessions=[0, 1])
    share = runmodel.SESSION_SHARE["cpu"]
    assert np.all(one.vsess == 0.0) and apart.vsess == pytest.approx(2 * share * apart.sig2)
    assert 2 * runmodel.A_MIN < apart.scale["cpu"][0] < one.scale["cpu"][0] < 1.0      # neither at a bound
    assert 2 * apart.sig2 + apart.vsess == pytest.approx(2 * one.sig2, rel=5e-3)      # (the fit's tolerance)
    assert apart.sig2 == pytest.approx(one.sig2 / (1 + share), rel=5e-3)


def test_the_plan_at_the_comparisons_own_runs_is_the_comparison():
    """A plan for as many runs a side as the comparison had gives its
    variance and its test's degrees of freedom: one run's total variance
    over the runs, what the controls' move added (the covariates'
    uncertainty) and the session term, which more runs do not shrink; the
    reps of its runs (6 degrees of freedom each), the run differences the
    scale was fitted on and the runs' own spread as the comparison's, the
    reps' as far as their noise is a share of the variance."""
    rng = np.random.default_rng(8)
    n_keys = 30
    speed = np.array([0.0, 0.01, 0.0, 0.03, 0.005, 0.04])      # the other side ran slower machines
    y = speed[:, None] * rng.normal(1.0, 0.3, size=n_keys) + rng.normal(0, 0.01, size=(6, n_keys))
    d = _design(y, w=np.full((6, n_keys), 1e-6), x=speed[:, None], wdf=np.full((6, n_keys), 6.0))
    groups = [[0, 1], [2, 4], [3, 5]]
    domains = ["cpu"] * n_keys
    f = runmodel.fit(d, [2, 4], [3, 5], groups, domains, np.full(n_keys, 1e-4), x_tau2=[1e-4],
                     sessions=[0, 0, 0, 1, 0, 1])
    assert np.all(f.vbeta > 0) and np.all(f.vsess > 0)
    # the drift's scale fitted on the runs' 3 differences, not held at its floor
    assert f.scale["cpu"][2] == "runs" and f.scale["cpu"][0] > 2 * runmodel.A_MIN and np.all(f.mom == 3.0)
    assert np.all(f.rdf == 6.0) and np.all(f.host_df(0) == 1.0)
    vcov = f.vbeta * 2.0 / (1.0 / 2 + 1.0 / 2)
    for j in range(n_keys):
        se, df = runmodel.planned(f.sig2[j], f.rdf[j], 2, vcov[j], f.vsess[j], f.mom[j], f.host_df(j), f.rw[j])
        assert se ** 2 == pytest.approx(f.var[j], rel=1e-9) and df == pytest.approx(f.df[j], rel=1e-3)
    se8, df8 = runmodel.planned(f.sig2[0], f.rdf[0], 8, vcov[0], f.vsess[0], f.mom[0], f.host_df(0), f.rw[0])
    var8 = (2 * f.sig2[0] + vcov[0]) / 8 + f.vsess[0]
    run = 2 * f.sig2[0] / 8 / var8        # the runs' part: the reps' share is of it
    assert 0 < f.rw[0] < 1 and 0 < run < 1
    known = 1.0 / ((f.rw[0] * run) ** 2 / 96 + 1.0 / 3) + f.host_df(0) + 14
    scale2, df = runmodel.tailed(var8, known)
    assert se8 ** 2 == pytest.approx(float(scale2)) and df8 == runmodel.D0 and known > runmodel.D0


def test_a_scale_held_at_its_floor_is_not_an_estimate():
    """Runs that agree within their reps' noise put the drift's scale at
    its floor (a = A_MIN): the scale is then the reps' noise, known to the
    reps' degrees of freedom, not an estimate from the runs' 3 differences
    (mom inf), so the test's degrees of freedom are the reps' (24, as far
    as their noise is the variance) and the runs' (3); runs that drift
    (the plan test above) count them."""
    rng = np.random.default_rng(9)
    n_keys = 30
    y = rng.normal(0, 0.001, size=(6, n_keys))
    d = _design(y, w=np.full((6, n_keys), 1e-4), wdf=np.full((6, n_keys), 6.0))
    f = runmodel.fit(d, [2, 4], [3, 5], [[0, 1], [2, 4], [3, 5]], ["cpu"] * n_keys, np.full(n_keys, 1e-4))
    assert f.scale["cpu"][2] == "runs" and f.scale["cpu"][0] == pytest.approx(runmodel.A_MIN)
    assert np.all(np.isinf(f.mom)) and np.all(f.df == runmodel.D0)
    assert np.all(f.rw > 0.5) and np.all(f.rw < 1)
    known = 24.0 / f.rw ** 2 + 3.0
    widen = np.array([(stats.t_quantile(0.05, v) / stats.t_quantile(0.05, math.inf)) ** 2 for v in known])
    # (tailed takes the degrees of freedom to 3 significant digits)
    assert f.var == pytest.approx(f.sig2 * (1 / 2 + 1 / 2) * (runmodel.D0 - 2) / runmodel.D0 * widen, rel=1e-3)


def test_the_reps_degrees_of_freedom_count_as_far_as_their_noise_is_the_variance():
    """Satterthwaite's sum on fixed inputs: a part that is a share s of a
    variance and rests on n degrees of freedom adds s^2 / n to 1 / df.
    Then a comparison of one run a side, no history, the reps of each run
    worth 6 degrees of freedom (12 in all): where the variance is all the
    reps' noise (no drift in the prior), the test is widened as t(12)
    widens a normal; where the drift is most of it, the reps' estimate
    moves the variance by its share only, and the widening is that much
    smaller."""
    assert float(runmodel.known_to(np.array(10.0), np.array(math.inf))) == pytest.approx(10.0)
    assert float(runmodel.known_to(np.array(10.0), np.array(math.inf), 0.5)) == pytest.approx(40.0)
    # a scale fitted on 5 run differences counts whole: every case of its group shares it
    assert float(runmodel.known_to(np.array(10.0), np.array(5.0), 0.5)) == pytest.approx(1 / (0.025 + 0.2))
    rng = np.random.default_rng(12)
    n = 60
    w = np.full((2, n), 1e-4)
    tau2 = np.where(np.arange(n) < n // 2, 0.0, 9e-4)
    y = np.zeros((2, n))
    y[1] = rng.normal(0, 1, size=n) * np.sqrt(2 * (w[0] + tau2))
    f = runmodel.fit(_design(y, w=w, wdf=np.full((2, n), 6.0)), [0], [1], [], ["cpu"] * n, tau2)
    widen = f.var / (2 * f.sig2 * (runmodel.D0 - 2) / runmodel.D0)
    z = stats.t_quantile(0.05, math.inf)
    reps, drift = slice(0, n // 2), slice(n // 2, n)
    assert np.all(f.rw[reps] == pytest.approx(1.0)) and np.all(f.rw[drift] < 0.5)
    assert widen[reps] == pytest.approx((stats.t_quantile(0.05, 12.0) / z) ** 2, rel=1e-3)
    assert widen[drift] == pytest.approx([(stats.t_quantile(0.05, 12.0 / r ** 2) / z) ** 2 for r in f.rw[drift]],
                                         rel=1e-3)
    assert np.all(widen[drift] < 1 + 0.5 * (widen[reps] - 1))


def test_a_groups_own_bulk_widens_it_never_past_the_cap():
    """bulk_widen on fixed inputs: twenty keys of variance 1 and (nearly)
    normal tails; every difference 2 puts the median t^2 at 4 against the
    normal's 0.455, so each variance is multiplied by 4 / 0.455, up to its
    cap; differences within their variances, or fewer than MIN_FIT keys,
    leave them as they are; the median is robust to a minority moved far."""
    var, df = np.ones(20), np.full(20, 1e6)
    q = 0.6744897501960817 ** 2
    got, lam = runmodel.bulk_widen(np.full(20, 2.0), var, df, np.full(20, math.inf))
    assert lam == pytest.approx(4.0 / q, rel=1e-4)
    assert got == pytest.approx(np.full(20, 4.0 / q), rel=1e-4)
    cap = np.r_[np.full(10, 5.0), np.full(10, 0.5)]
    got, _ = runmodel.bulk_widen(np.full(20, 2.0), var, df, cap)
    assert got.tolist() == [5.0] * 10 + [1.0] * 10          # capped; a cap below var never narrows
    small = np.r_[np.full(14, 0.3), np.full(6, 30.0)]      # six far out: the median is the bulk's
    got, lam = runmodel.bulk_widen(small, var, df, np.full(20, math.inf))
    assert lam == pytest.approx(0.09 / q, rel=1e-4) and got.tolist() == [1.0] * 20
    got, lam = runmodel.bulk_widen(np.full(7, 2.0), np.ones(7), np.full(7, 1e6), np.full(7, math.inf))
    assert math.isnan(lam) and got.tolist() == [1.0] * 7
    # keys that do not vote (a summary cell repeats its cases) leave lam to the others, and are
    # widened with them: twelve calm cells would have put the median at 0.09 / q
    votes = np.r_[np.full(20, True), np.full(12, False)]
    got, lam = runmodel.bulk_widen(np.r_[np.full(20, 2.0), np.full(12, 0.3)], np.ones(32), np.full(32, 1e6),
                                   np.full(32, math.inf), votes)
    assert lam == pytest.approx(4.0 / q, rel=1e-4) and got == pytest.approx(np.full(32, 4.0 / q), rel=1e-4)
    got, lam = runmodel.bulk_widen(np.r_[np.full(7, 2.0), np.full(5, 0.3)], np.ones(12), np.full(12, 1e6),
                                   np.full(12, math.inf), np.r_[np.full(7, True), np.full(5, False)])
    assert math.isnan(lam)                                  # seven cases vote: fewer than MIN_FIT


def test_two_party_cases_that_moved_together_are_widened_cpu_bound_ones_are_not():
    """Two runs a side and a history pair; each side's runs agree, but the
    sides drew a factor that moved twenty two-party cases 8% together
    (across CPUs, then on one CPU; and, in a third fit, twenty CPU-bound
    cases, where the CPU speed and a kernel's change of their path are
    what moves them together): a two-party group is widened by its own
    bulk, the CPU-bound group is judged as its runs' spread says."""
    rng = np.random.default_rng(12)
    n = 20
    y = rng.normal(0, 0.01, size=(6, n))
    y[[4, 5]] += 0.08                       # the other side: every case 8% slower, the runs agree
    tau2 = np.full(n, 0.05 ** 2)
    groups = [[0, 1], [2, 3], [4, 5]]
    cross = runmodel.fit(_design(y), [2, 3], [4, 5], groups, ["cross"] * n, tau2)
    cpu = runmodel.fit(_design(y), [2, 3], [4, 5], groups, ["cpu"] * n, tau2)
    same = runmodel.fit(_design(y), [2, 3], [4, 5], groups, ["same"] * n, tau2)
    assert cross.bulk["cross"] > 4 and same.bulk["same"] > 4 and cpu.bulk == {}
    # the file-system-bound cases: the file system's state moves them all (a journal, its free space)
    fs = runmodel.fit(_design(y), [2, 3], [4, 5], groups, ["fs"] * n, tau2)
    assert fs.bulk["fs"] > 4 and np.all(fs.var > 2 * cpu.var)
    # the memory-bound cases past the memory control's buffer: checked against their own bulk, scaled
    # (and their slopes' prior taken) as the memory-bound cases are
    dram = runmodel.fit(_design(y), [2, 3], [4, 5], groups, ["dram"] * n, tau2)
    memory = runmodel.fit(_design(y), [2, 3], [4, 5], groups, ["memory"] * n, tau2)
    assert dram.bulk["dram"] > 4 and memory.bulk == {} and set(dram.scale) == {"memory"}
    assert np.allclose(dram.sig2, memory.sig2) and np.all(dram.var > 2 * memory.var)
    assert np.all(cross.var > 2 * cpu.var)
    # never past the prior's (a = b = 1)
    assert np.all(cross.var <= (tau2 + 1e-4) * 1.0 * (runmodel.D0 - 2) / runmodel.D0 + 1e-12)
    t_cross, t_cpu = cross.delta / np.sqrt(cross.var), cpu.delta / np.sqrt(cpu.var)
    assert np.median(np.abs(t_cpu)) > 2 * np.median(np.abs(t_cross))
    # sides that did not draw it apart, their runs as close as their reps' noise (w 4x their spread)
    # lets them be: the median of twenty t^2 strays by chance, but not fourfold (the runs drawn with
    # the model's tails, t(D0))
    for _ in range(5):
        calm = rng.standard_t(runmodel.D0, size=(6, n)) * 0.01 * math.sqrt((runmodel.D0 - 2) / runmodel.D0)
        f = runmodel.fit(_design(calm, w=np.full((6, n), 4e-4)), [2, 3], [4, 5], groups, ["cross"] * n, tau2)
        assert f.bulk == {}


def test_the_words_say_which_group_was_widened_by_its_bulk():
    from kbench.views import compare_text
    assert compare_text.bulk_text({}) == ""
    words = compare_text.bulk_text({"cross": 4.0})
    assert "cross-CPU cases moved together 2x as far as their runs' spread allows" in words
    assert "the other CPU's wakeups" in words and "never past the prior's" in words
    assert "the file system's state, has no control" in compare_text.bulk_text({"fs": 4.0})
    words = compare_text.bulk_text({"dram": 2.25})
    assert words.startswith(" The memory-bound cases with a buffer the memory control's size or larger moved "
                            "together 1.5x as far")
    assert "the memory's regime" in words


def test_memory_cases_at_the_memory_controls_buffer_or_larger_are_a_group():
    """scale_group: a memory-bound case whose size_kb is at least the memory
    control's buffer (its bytes per pass, as the runs recorded it) is
    "dram"; smaller buffers, CPU-bound cases and the control itself keep
    their domain; without the control's size nothing is "dram"."""
    def case(name, params, domain, control=False, nbytes=0):
        c = load.Case(name, name.split()[0], name.split()[1], params, "", "bandwidth", control=control,
                      bytes_per_op=nbytes)
        c.declared = {"domain": domain}
        return c
    ctl = case("ctl_machine mem", "", "memory", control=True, nbytes=64 << 20)
    big = case("bw_mem rd size_kb=262144", "size_kb=262144", "memory")
    same = case("lat_mem_rd stride size_kb=65536,stride=64", "size_kb=65536,stride=64", "memory")
    small = case("bw_mem rd size_kb=16384", "size_kb=16384", "memory")
    cpu = case("lat_mmap mmap size_kb=262144", "size_kb=262144", "cpu")    # the memory manager's: "state"

    class Side:
        def __init__(self, *cases):
            self.cases = {c.name: c for c in cases}
    kb = compare.memory_control_kb(Side(ctl, big), Side(ctl, small))
    assert kb == 65536
    assert [compare.scale_group(c, kb) for c in (big, same, small, cpu, ctl)] == \
        ["dram", "dram", "memory", "state", "memory"]
    assert compare.memory_control_kb(Side(big, small)) == 0 and compare.scale_group(big, 0) == "memory"
    other = case("ctl_machine mem", "", "memory", control=True, nbytes=16 << 20)
    assert compare.memory_control_kb(Side(ctl), Side(other)) == 0     # runs that disagree: no group


def test_a_run_keeps_its_bandwidth_cases_bytes_per_op(tmp_path):
    """The loader keeps a bandwidth case's bytes per op (the memory
    control's buffer comes from it), and pooling runs keeps it."""
    from kbench.model import groups
    lines = [{"schema": 1, "run_id": "r1", "bench": "ctl_machine", "variant": "mem", "case": "ctl_machine mem",
              "metric": "bandwidth", "control": True, "rep_idx": i, "ns_per_op": 2.0e6 + i,
              "bytes_per_op": 64 << 20} for i in range(3)]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in lines))
    cases, bad = load.read_samples(path, "r1", load.Warnings())
    assert bad == 0 and cases["ctl_machine mem"].bytes_per_op == 64 << 20

    class Run:
        def __init__(self, cases):
            self.cases, self.path = cases, tmp_path
    pooled = groups.pool_cases([Run(cases)])
    assert pooled["ctl_machine mem"].bytes_per_op == 64 << 20


def test_a_plan_takes_a_typical_runs_reps():
    """Three runs a side and a history pair, the reps of each run worth 12
    degrees of freedom; key 1 is missing in one base run (a case that run
    did not run): a plan counts a typical run's reps for it all the same,
    not the sum over the runs that had it, and the host's runs' spread
    without the sides' own (the base side's runs gave key 1 none)."""
    rng = np.random.default_rng(4)
    y = rng.normal(0, 0.01, size=(8, 2))
    y[1, 1] = math.nan
    wdf = np.full((8, 2), 12.0)
    wdf[1, 1] = math.nan
    f = runmodel.fit(_design(y, wdf=wdf), [0, 1, 2], [3, 4, 5], [[0, 1, 2], [3, 4, 5], [6, 7]], ["cpu"] * 2,
                     np.full(2, 1e-4))
    assert f.own.tolist() == [4.0, 2.0]
    assert f.dof.tolist() == [5.0, 3.0]
    assert f.plan_df(0) == 12.0 and f.plan_df(1) == 12.0
    # the history pair's spread, without the sides' own (a side whose runs do not all have key 1 gave
    # it none to take out)
    assert f.host_df(0) == 1.0 and f.host_df(1) == 1.0
    assert f.df.tolist() == [runmodel.D0, runmodel.D0]
    se, df = runmodel.planned(f.sig2[1], f.plan_df(1), 3)
    assert df == runmodel.D0 and se ** 2 > f.sig2[1] * 2 / 3 * (runmodel.D0 - 2) / runmodel.D0
    assert stats.detectable_change(0.12, 0.3) == math.inf


def test_planned_runs_narrow_the_mde():
    parts = (0.02 ** 2, 8.0)
    one, four = stats.planned_mde(parts, 1), stats.planned_mde(parts, 4)
    se1, df1 = runmodel.planned(0.02 ** 2, 8.0, 1)       # two runs of reps worth 8 degrees of freedom each
    widen = (stats.t_quantile(0.05, 16.0) / stats.t_quantile(0.05, math.inf)) ** 2
    assert se1 == pytest.approx(math.sqrt(2 * (runmodel.D0 - 2) / runmodel.D0 * widen) * 0.02)
    assert df1 == runmodel.D0
    assert one == pytest.approx(stats.detectable_change(se1, df1))
    assert four < one / 2
    assert stats.runs_for(parts, 0.03) == next(k for k in range(1, 31) if stats.planned_mde(parts, k) <= 0.03)


def test_a_plan_names_what_planned_takes_after_the_runs():
    # the Plan a comparison or a summary hands on is planned's arguments, in planned's order, with
    # planned's defaults: a field added to one and not the other would shift every part after it
    import inspect
    params = [p for p in inspect.signature(runmodel.planned).parameters.values() if p.name != "k"]
    assert [p.name for p in params] == list(runmodel.Plan._fields)
    assert [p.default for p in params[2:]] == [runmodel.Plan._field_defaults[p.name] for p in params[2:]]
    plan = runmodel.Plan(0.02 ** 2, 8.0, vcov=1e-4, vsess=2e-4, mom=6.0, hdf=3.0, rw=0.5)
    se, df = runmodel.planned(0.02 ** 2, 8.0, 2, 1e-4, 2e-4, 6.0, 3.0, 0.5)
    assert stats.planned_mde(plan, 2) == stats.detectable_change(se, df)
    assert stats.planned_mde(plan, 2) != stats.planned_mde(plan[:2], 2)


def _short_run(dst, factor, run_id):
    """A kept run cut to three cases (as `--only` runs them) with its
    controls' first two reps, every sample's time times factor."""
    keep = {"lat_syscall null", "lat_syscall stat", "bw_mem rd size_kb=262144"}
    controls = {"ctl_machine chain", "ctl_machine alu", "ctl_machine copy", "ctl_machine mem", "ctl_machine llc"}
    d = dst / "vm" / ("6.18.44" if factor == 1.0 else "6.18.44-copy") / run_id
    d.mkdir(parents=True)
    meta = json.loads((KEPT / "meta.json").read_text())
    meta.update(run_id=run_id, kernel_release=d.parent.name)
    (d / "meta.json").write_text(json.dumps(meta))
    first = {}      # a control's first two reps (its rep_idx are the run's control slots)
    with gzip.open(KEPT / "samples.jsonl.gz", "rt") as f:
        for line in f:
            o = json.loads(line)
            if o["case"] in controls:
                got = first.setdefault(o["case"], [])
                if o["rep_idx"] not in got and len(got) < 2:
                    got.append(o["rep_idx"])
    for name in ("samples.jsonl", "runs.jsonl", "cases.jsonl"):
        out = []
        with gzip.open(KEPT / (name + ".gz"), "rt") as f:
            for line in f:
                o = json.loads(line)
                case = o.get("case")
                if case is None or not (case in keep or case in controls):
                    continue
                if case in controls and name != "cases.jsonl" and o.get("rep_idx") not in first[case]:
                    continue
                if "run_id" in o:
                    o["run_id"] = run_id
                if name == "samples.jsonl":
                    if o["metric"] == "bandwidth":
                        o["mb_per_s"] = o.get("mb_per_s", 0) / factor if "mb_per_s" in o else o.get("mb_per_s")
                    o["ns_per_op"] *= factor
                    o["elapsed_ns"] = int(o["elapsed_ns"] * factor)
                out.append(json.dumps(o))
        (d / name).write_text("\n".join(out) + "\n")
    return d


def test_a_short_run_cannot_hide_a_shift(tmp_path):
    """Three cases and their controls at two reps, against a copy with
    every sample 20% slower, controls included, with the built-in prior
    and no history: no case is called faster or slower; the CPU controls'
    move is beyond anything a run drifts, so the report says MACHINE SHIFT
    and why."""
    a = _short_run(tmp_path, 1.0, "a1")
    b = _short_run(tmp_path, 1.2, "b1")
    w = load.Warnings()
    sa, sb = compare.Side("A", load.load_runs([a], w)), compare.Side("B", load.load_runs([b], w))
    opts = compare.Options(prior=drift.load_prior())
    rep = compare.run_compare(sa, sb, opts)
    assert rep.shift is not None and rep.shift.speed_ratio == pytest.approx(1.2, rel=0.01)
    rows = {r.case: r.cmp for r in rep.rows}
    assert {"lat_syscall null", "lat_syscall stat", "bw_mem rd size_kb=262144"} <= set(rows)
    assert not any(c.significant for c in rows.values())
    assert rep.shift.shifted and all(c.verdict == stats.MACHINE for c in rows.values() if c.comparable)
    assert all(c.not_judged.startswith("machine shift: the CPU controls ran 20.0% slower") for c in rows.values() if c.comparable)
