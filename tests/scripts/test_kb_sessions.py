"""Sessions (scripts/kbench/model/sessions.py): the runs' spread taken
within sessions, and a session's share measured on the host's runs where a
kernel ran in several sessions, on fixed inputs."""
import math

import numpy as np
import pytest

from kbench.model import runmodel, sessions


def _design(y, w):
    y = np.asarray(y, dtype=float)
    return runmodel.Design([f"k{j}" for j in range(y.shape[1])], y, np.full(y.shape, w), np.zeros((len(y), 0)),
                           np.full(y.shape, 6.0))


def _kernel(rng, n_keys, m, n, share, start=0):
    """m sessions of n runs of one kernel: each session a level per key of
    variance share (one run's variance 1), each run 1 about it."""
    rows, sess = [], []
    for s in range(m):
        level = rng.normal(0, math.sqrt(share), n_keys)
        for _ in range(n):
            rows.append(level + rng.normal(0, 1, n_keys))
            sess.append(start + s)
    return rows, sess


def test_within_splits_each_kernels_runs_by_session():
    assert sessions.within([[0, 1, 2, 3], [4, 5]], [0, 1, 0, 2, 3, 3]) == [[0, 2], [1], [3], [4, 5]]
    assert sessions.within([], [0]) == []
    assert sessions.within([[0, 1], [2]], None) == [[0, 1], [2]]


@pytest.mark.parametrize("share", [0.0, 0.5, 1.5])
def test_a_sessions_share_is_measured_on_a_kernel_that_ran_in_several(share):
    """300 keys of one group, one kernel in four sessions of three runs
    (three session dof, which every key shares) and one in a single
    session (no vote): the measured share within a factor of the truth
    that 300 votes on three dof allow (and at 0: below a tenth)."""
    rng = np.random.default_rng(5)
    a, sa = _kernel(rng, 300, 4, 3, share)
    b, sb = _kernel(rng, 300, 1, 3, 5.0, start=10)
    resid = np.array(a + b)
    got = sessions.measured(resid, np.ones(300), np.full(300, 1e6), [list(range(12)), list(range(12, 15))],
                            sa + sb, ["cpu"] * 300)
    assert set(got) == {"cpu"} and got["cpu"][1] == 3.0
    if share == 0.0:
        assert got["cpu"][0] < 0.1
    else:
        assert share / 1.5 < got["cpu"][0] < share * 1.5
    # too few keys, or no kernel in two sessions: nothing measured
    assert sessions.measured(resid[:, :5], np.ones(5), np.full(5, 1e6), [list(range(12))], sa + sb, ["cpu"] * 5) == {}
    assert sessions.measured(resid, np.ones(300), np.full(300, 1e6), [list(range(12, 15))], sa + sb,
                             ["cpu"] * 300) == {}


def test_the_measured_share_is_moderated_towards_the_constant():
    assert sessions.moderated(0.5, None, 4.0) == 0.5
    assert sessions.moderated(0.5, (0.1, 4.0), 4.0) == pytest.approx(0.3)
    assert sessions.moderated(0.5, (2.0, 12.0), 4.0) == pytest.approx((4 * 0.5 + 12 * 2.0) / 16)


def test_the_run_level_is_one_runs_spread_within_a_session_and_the_history_measures_the_share():
    """Two runs a side, the sides in sessions of their own, and a history
    kernel of three sessions of four runs whose sessions hardly differ:
    one run's variance is the spread within sessions (the history's
    sessions apart, it would hold their levels too), and the session term
    is the constant, never less (the history measured about 0 on two session
    dof); where the history's sessions moved far apart, their spread within
    sessions is the same and the session term the constant moderated
    towards the large share they measured."""
    rng = np.random.default_rng(9)
    n_keys = 200
    sides, ss = _kernel(rng, n_keys, 2, 2, 0.0)
    hist, sh = _kernel(rng, n_keys, 3, 4, 0.0, start=5)
    y = np.array(sides + hist) * 0.01
    d = _design(y, 1e-6)
    tau2 = np.full(n_keys, 1e-4)
    domains = ["cpu"] * n_keys
    f = runmodel.fit(d, [0, 1], [2, 3], [[0, 1], [2, 3], list(range(4, 16))], domains, tau2, sessions=ss + sh)
    assert f.dof[0] == 1 + 1 + 9
    got, dof = f.sessions["cpu"]
    assert dof == 2.0 and got < 0.2
    share = runmodel.SESSION_SHARE["cpu"]
    assert f.vsess == pytest.approx(2 * share * f.sig2)
    # the history's sessions moved far apart: its spread within them is the same, its share is measured large
    far = y.copy()
    far[8:12] += 0.05
    g = runmodel.fit(_design(far, 1e-6), [0, 1], [2, 3], [[0, 1], [2, 3], list(range(4, 16))], domains, tau2,
                     sessions=ss + sh)
    assert g.sig2 == pytest.approx(f.sig2, rel=0.05)
    big = g.sessions["cpu"][0]
    assert big > 1.0 and g.vsess == pytest.approx(2 * (runmodel.D0 * share + 2.0 * big) / (runmodel.D0 + 2.0) * g.sig2)
    # sides that alternate in one session: no session term, nothing measured
    h = runmodel.fit(d, [0, 2], [1, 3], [[0, 1, 2, 3], list(range(4, 16))], domains, tau2, sessions=[0] * 4 + sh)
    assert np.all(h.vsess == 0.0) and h.sessions == {}


def test_a_kernels_own_plan_takes_its_runs_spread_within_sessions():
    """variances (summarize's power line): one kernel's runs in three
    sessions of four, its sessions far apart: its runs' dof and one run's
    variance are those within sessions, as a comparison takes them."""
    rng = np.random.default_rng(4)
    rows, sess = _kernel(rng, 100, 3, 4, 25.0)
    d = _design(np.array(rows) * 0.01, 1e-6)
    tau2 = np.full(100, 1e-4)
    apart = runmodel.variances(d, list(range(12)), [list(range(12))], ["cpu"] * 100, tau2, sessions=sess)
    pooled = runmodel.variances(d, list(range(12)), [list(range(12))], ["cpu"] * 100, tau2)
    assert apart[3][0] == 9 and pooled[3][0] == 11
    assert np.median(apart[0]) < np.median(pooled[0]) / 3


def test_compare_says_what_the_host_measured_and_what_it_took():
    """The run-level paragraph's sentence: per group the measured share,
    the built-in one and the one taken (never below the built-in)."""
    from kbench.views import compare_text
    assert compare_text.sessions_text({}) == ""
    text = compare_text.sessions_text({"cpu": (0.2, 2.0), "state": (5.0, 2.0)})
    assert "(2 degrees of freedom between sessions" in text
    assert "CPU-bound cases 0.2 (built in 0.49, taken 0.49)" in text
    assert f"taken {(4 * 1.56 + 2 * 5.0) / 6:.2g})" in text
    assert "(1 degree of freedom" in compare_text.sessions_text({"cpu": (0.2, 1.0)})
