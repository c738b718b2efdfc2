"""The statistics on fixed inputs, and a coverage simulation."""
import math

import numpy as np
import pytest

from kbench.model import stats as S
from kbench.views import units


def series(reps, metric="latency", estimator=None):
    return S.Series.single([np.asarray(r, float) for r in reps], metric, estimator=estimator)


def test_headline_low_is_harrell_davis_20th_percentile_of_rep_medians():
    s = series([[1, 2, 3], [4, 5, 6, 100], [7, 8, 9]])
    # n = 3, q = 0.2: Beta(0.8, 3.2) CDF at 1/3 and 2/3 gives the weights.
    w = np.diff([0.0, S.betainc(0.8, 3.2, 1 / 3), S.betainc(0.8, 3.2, 2 / 3), 1.0])
    assert w.sum() == pytest.approx(1.0) and w[0] > w[1] > w[2] > 0
    assert s.headline() == pytest.approx(math.exp(np.dot(w, np.log([2, 5.5, 8]))))
    # Bandwidth: noise lowers MB/s, so the estimate leans on the high reps.
    b = series([[2], [5.5], [8]], "bandwidth")
    assert b.headline() == pytest.approx(math.exp(np.dot(w, np.log([8, 5.5, 2]))))
    assert b.headline() > 5.5


def test_headline_low_ignores_a_slow_minority():
    """Reps in fast (100) and slow (135) stretches of the machine: the median
    follows whichever is the majority, the low estimator stays near 100."""
    fast_major = series([[100]] * 6 + [[135]] * 4)
    slow_major = series([[100]] * 4 + [[135]] * 6)
    assert slow_major.headline() / fast_major.headline() < 1.03
    m1 = series([[100]] * 6 + [[135]] * 4, estimator="median").headline()
    m2 = series([[100]] * 4 + [[135]] * 6, estimator="median").headline()
    assert m2 / m1 > 1.15


def test_headline_is_median_of_rep_medians():
    s = series([[1, 2, 3], [4, 5, 6, 100], [7, 8, 9]], estimator="median")
    assert list(s.rep_values()) == [2, 5.5, 8]
    assert s.headline() == 5.5
    sm = S.summarize(s)
    assert (sm.n_reps, sm.n_samples) == (3, 10)
    assert sm.best == 1 and sm.rep_min == 2 and sm.rep_max == 8
    assert sm.between_cv == pytest.approx(58.33, abs=0.01)
    # within: CV of each rep, then the median of those
    cvs = [np.std(r, ddof=1) / np.mean(r) * 100 for r in ([1, 2, 3], [4, 5, 6, 100], [7, 8, 9])]
    assert sm.within_cv == pytest.approx(float(np.median(cvs)))


def test_bandwidth_best_is_the_highest():
    sm = S.summarize(series([[10, 20], [30, 40]], "bandwidth", estimator="median"))
    assert sm.best == 40 and sm.headline == 25 and sm.median == 25


def test_single_rep_has_no_between_spread():
    sm = S.summarize(series([[5, 6, 7]]))
    assert sm.n_reps == 1 and math.isnan(sm.between_cv)


def test_mann_whitney_exact_values():
    assert S.mann_whitney([1, 2, 3], [4, 5, 6]) == (0.0, pytest.approx(0.1))
    assert S.mann_whitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]) == (25.0, pytest.approx(2 / 252))
    u, p = S.mann_whitney([1, 2, 4], [3, 5, 6])  # U = 1: P(U<=1) = 2/20
    assert u == 1 and p == pytest.approx(0.2)


def test_mann_whitney_ties_exact_matches_brute_force():
    x, y = [1, 2, 2, 3], [2, 3, 4, 5]
    u, p = S.mann_whitney(x, y)
    assert u == 2.5
    from itertools import combinations
    allv = x + y
    def ustat(idx):
        xs = [allv[i] for i in idx]
        ys = [allv[i] for i in range(8) if i not in idx]
        return sum((a > b) + 0.5 * (a == b) for a in xs for b in ys)
    us = [ustat(c) for c in combinations(range(8), 4)]
    brute = sum(abs(v - 8) >= abs(u - 8) for v in us) / len(us)
    assert p == pytest.approx(brute)


def test_min_rank_p():
    assert S.min_rank_p(3, 3) == pytest.approx(0.1)
    assert S.min_rank_p(5, 5) == pytest.approx(2 / 252)


def test_t_distribution():
    assert S.t_two_sided_p(2.776445, 4) == pytest.approx(0.05, abs=1e-5)
    assert S.t_two_sided_p(12.7062, 1) == pytest.approx(0.05, abs=1e-5)
    assert S.t_two_sided_p(1.959964, 1e7) == pytest.approx(0.05, abs=1e-5)
    assert S.t_two_sided_p(0.0, 3) == 1.0


def test_welch_t():
    t, df, p = S.welch_t([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    assert t == pytest.approx(3 / math.sqrt(2.5))
    assert df == pytest.approx(6.25 / 1.0625)
    assert 0.10 < p < 0.12
    assert S.welch_t([1, 1, 1], [1, 1, 1])[2] == 1.0
    assert S.welch_t([1, 1, 1], [2, 2, 2])[2] == 0.0


def test_bh_adjust():
    q = S.bh_adjust([0.01, 0.04, 0.03, math.nan, 0.5])
    assert q[0] == pytest.approx(0.04)
    assert q[1] == pytest.approx(0.16 / 3) and q[2] == pytest.approx(0.16 / 3)
    assert math.isnan(q[3]) and q[4] == 0.5


def test_bh_adjust_on_fixed_inputs():
    """Benjamini-Hochberg by hand: p sorted, p * m / rank, then the running
    minimum from the largest p down (step-up), capped at 1; nan not counted.
    m = 6: 0.005 -> 0.03, 0.01 -> 0.03, 0.03 -> 0.06 but 0.0492 above it,
    0.04 -> 0.06 -> 0.0492, 0.041 -> 0.0492, 0.5 -> 0.5."""
    q = S.bh_adjust([0.01, 0.04, 0.03, 0.005, 0.5, math.nan, 0.041])
    expected = [0.03, 0.0492, 0.0492, 0.03, 0.5, math.nan, 0.0492]
    for got, want in zip(q, expected):
        assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-12), (q, expected)
    assert list(S.bh_adjust([0.6, 0.9])) == pytest.approx([0.9, 0.9])     # 1.2 capped by the step-up
    assert list(S.bh_adjust([0.9, 0.6])) == pytest.approx([0.9, 0.9])
    assert list(S.bh_adjust([0.7])) == [0.7]


# t quantiles from a printed table (two-sided 5%: t(0.975); 80% power: t(0.80)):
# df 4: 2.776445, 0.940965; df 10: 2.228139, 0.879058; df 30: 2.042272, 0.853767;
# the normal's: 1.959964, 0.841621.
T_TABLE = {4: (2.776445, 0.940965), 10: (2.228139, 0.879058), 30: (2.042272, 0.853767),
           math.inf: (1.959964, 0.841621)}


@pytest.mark.parametrize("df", sorted(T_TABLE))
def test_mde_equals_the_textbook_formula_on_fixed_inputs(df):
    """mde = exp((t(0.975, df) + t(0.80, df)) * se) - 1, the quantiles from
    the table above, not from the code: se 0.02 at df 10 gives
    exp(3.107197 * 0.02) - 1 = 6.41%."""
    t975, t80 = T_TABLE[df]
    for se in (0.005, 0.02, 0.05, 0.2):
        want = math.exp((t975 + t80) * se) - 1
        assert S.detectable_change(se, df) == pytest.approx(want, rel=2e-6), (se, df)
    if df == 10:
        assert S.detectable_change(0.02, 10) == pytest.approx(0.064116, abs=1e-6)
    assert math.isnan(S.detectable_change(math.nan, df)) and math.isnan(S.detectable_change(0.02, 0))


def test_a_comparisons_mde_is_the_formula_of_its_own_se_and_df():
    """compare's mde on fixed reps: the se behind its interval (the ends are
    d +- t(0.975) se) put into the textbook formula (the t quantiles are the
    code's here: the table above checks them at whole df)."""
    rng = np.random.default_rng(4)
    a = series([[100 * math.exp(x)] for x in rng.normal(0, 0.03, 10)])
    b = series([[104 * math.exp(x)] for x in rng.normal(0, 0.03, 10)])
    c = S.compare(a, b, n_boot=400)
    assert 5 < c.df < 30
    # t(0.975) and t(0.80) at its (fractional) df: two-sided 5% and 40%
    t975, t80 = S.t_quantile(0.05, c.df), S.t_quantile(0.40, c.df)
    se = math.log(c.hi / c.lo) / (2 * t975)
    assert c.mde == pytest.approx(math.exp((t975 + t80) * se) - 1, rel=1e-5)


def _beta_mass(a, b, lo, hi, steps=2000):
    """The Beta(a, b) probability of [lo, hi] by Simpson's rule, independent
    of stats.betainc: with x = t^(1/a) the density's x^(a-1) cancels and
    what is integrated, (1 - t^(1/a))^(b-1) / (a B(a, b)), is smooth on
    [lo^a, hi^a] for b >= 1."""
    logc = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) - math.log(a)
    t0, t1 = lo ** a, hi ** a
    h = (t1 - t0) / steps

    def f(t):
        x = t ** (1 / a)
        return 0.0 if x >= 1 else math.exp(logc + (b - 1) * math.log1p(-x))
    total = f(t0) + f(t1) + sum((4 if i % 2 else 2) * f(t0 + i * h) for i in range(1, steps))
    return total * h / 3


@pytest.mark.parametrize("n", [5, 8, 13])
def test_harrell_davis_weights_against_the_beta_integral(n):
    """Harrell-Davis for the 20th percentile of n values: weight i is the
    Beta(0.2 (n+1), 0.8 (n+1)) probability of ((i-1)/n, i/n]; and the low
    estimate is those weights times the sorted values."""
    a, b = 0.2 * (n + 1), 0.8 * (n + 1)
    want = [_beta_mass(a, b, i / n, (i + 1) / n) for i in range(n)]
    got = S.hd_weights(n, 0.2)
    assert len(got) == n and sum(got) == pytest.approx(1.0)
    assert list(got) == pytest.approx(want, abs=1e-5)        # the (n + 1) slip moves them by 0.01-0.02
    y = np.log(np.arange(3.0, 3.0 + 2 * n, 2)[::-1])            # given unsorted
    assert S.estimate(y, "low") == pytest.approx(float(np.dot(want, np.sort(y))), abs=1e-6)


@pytest.mark.parametrize("ratio,metric,text", [
    (0.8, "latency", "20.0% faster"), (1.25, "latency", "25.0% slower"),
    (1.1, "bandwidth", "10.0% faster"), (0.9, "bandwidth", "10.0% slower"),
    (1.0, "latency", "same"),
])
def test_change_words(ratio, metric, text):
    assert S.change_text(S.speed_change(ratio, metric)) == text


def _noisy(rng, n_reps, center, between=0.01, within=0.01, m=10):
    return series([center * math.exp(rng.normal(0, between)) * np.exp(rng.normal(0, within, m))
                   for _ in range(n_reps)])


def _judge(a, b, **kw):
    c = S.compare(a, b, n_boot=400)
    S.decide([c], **kw)
    return c


def test_verdicts():
    rng = np.random.default_rng(3)
    a = _noisy(rng, 5, 100)
    assert _judge(a, _noisy(rng, 5, 120)).verdict == S.SLOWER
    assert _judge(a, _noisy(rng, 5, 80)).verdict == S.FASTER
    # clearly significant but below the minimum effect
    small = _judge(_noisy(rng, 8, 100, 0.001, 0.001), _noisy(rng, 8, 102, 0.001, 0.001))
    assert small.lo > 1.0 and small.verdict == S.SAME
    assert _judge(_noisy(rng, 8, 100, 0.001, 0.001), _noisy(rng, 8, 102, 0.001, 0.001),
                  min_effect=0.01).verdict == S.SLOWER


def test_bandwidth_direction():
    rng = np.random.default_rng(4)
    a = _noisy(rng, 5, 1000)
    a.metric = "bandwidth"
    b = _noisy(rng, 5, 1500)
    b.metric = "bandwidth"
    c = _judge(a, b)
    assert c.verdict == S.FASTER and c.change_text.endswith("faster")


def test_too_few_reps_never_significant():
    rng = np.random.default_rng(5)
    for n in (1, 2):
        c = _judge(_noisy(rng, n, 100), _noisy(rng, n, 200))
        assert c.verdict == S.FEW
        assert c.change_text == "50.0% slower" or c.change_text.endswith("slower")


def test_missing_is_missing():
    c = S.compare(series([[1, 2]]), None)
    assert c.verdict == S.MISSING and math.isnan(c.other)


def test_bootstrap_is_reproducible():
    rng = np.random.default_rng(6)
    a, b = _noisy(rng, 5, 100), _noisy(rng, 5, 105)
    c1 = S.compare(a, b, n_boot=300, seed=7)
    c2 = S.compare(a, b, n_boot=300, seed=7)
    c3 = S.compare(a, b, n_boot=300, seed=8)
    assert (c1.lo, c1.hi) == (c2.lo, c2.hi)
    assert (c1.lo, c1.hi) != (c3.lo, c3.hi)


def test_interval_covers_known_ratio_at_nominal_rate():
    """200 simulated comparisons, true ratio 1.2, noise between reps (3%)
    and within (2%): the 95% interval covers 1.2 in 90-99% of them and is
    not wide to get there: median width under 20% of the ratio at 5 reps
    (14% here; a t interval of the mean would be about 9%: the low
    estimator's price at few reps, repaid at many)."""
    rng = np.random.default_rng(11)
    covered = 0
    widths = []
    n = 200
    for i in range(n):
        a = _noisy(rng, 5, 100, between=0.03, within=0.02, m=8)
        b = _noisy(rng, 5, 120, between=0.03, within=0.02, m=8)
        c = S.compare(a, b, n_boot=200, seed=i)
        covered += c.lo <= 1.2 <= c.hi
        widths.append(c.hi / c.lo - 1)
    assert 0.90 <= covered / n <= 0.99, covered
    assert float(np.median(widths)) < 0.20, np.median(widths)


@pytest.mark.parametrize("metric", ["latency", "bandwidth"])
def test_interval_is_d_plus_minus_t_se_on_known_estimates(metric):
    """The interval on fixed side estimates, against numbers worked out by
    hand: log values 100 and 120 (ratio 1.2), each with a standard error of
    0.03 on 4 degrees of freedom, so se = 0.03 * sqrt(2) and Welch's df =
    8; t(0.975, 8) = 2.306004 (tables).  Any change to the width (t, se,
    df, level) or to its centre moves lo and hi."""
    est = {side: S.SideEstimate(theta=math.log(v), se=0.03, df=4, n=5, runs=1, run_p=math.nan, run_unit=False)
           for side, v in (("base", 100.0), ("other", 120.0))}
    base = series([[100.0]] * 5, metric)
    other = series([[120.0]] * 5, metric)
    c = S.compare(base, other, n_boot=50, base_est=est["base"], other_est=est["other"])
    half = 2.306004 * 0.03 * math.sqrt(2)
    assert c.ratio == pytest.approx(1.2, rel=1e-12)
    assert c.df == pytest.approx(8.0, rel=1e-12)
    if metric == "latency":  # time ratio other/base
        assert (c.lo, c.hi) == (pytest.approx(1.2 * math.exp(-half), rel=1e-6),
                                pytest.approx(1.2 * math.exp(half), rel=1e-6))
    else:  # MB/s ratio: the log difference counts the other way
        assert (c.lo, c.hi) == (pytest.approx(math.exp(-math.log(1.2) - half), rel=1e-6),
                                pytest.approx(math.exp(-math.log(1.2) + half), rel=1e-6))
    assert c.hi / c.lo == pytest.approx(math.exp(2 * half), rel=1e-6)  # 1.216: the width itself
    # p from the same t: t = log(1.2) / se = 4.297 on 8 df
    assert c.p == pytest.approx(0.00263, abs=2e-5)


def test_units():
    assert units.latency_unit(950) == ("ns", 1.0)
    assert units.latency_unit(25_000) == ("µs", 1e3)
    assert units.latency_unit(2.5e7) == ("ms", 1e6)
    assert units.fmt_num(1234.5) == "1234" or units.fmt_num(1234.5) == "1235"
    assert units.fmt_num(12.34) == "12.3" and units.fmt_num(0.3123) == "0.312"


def _cmp(ratio, lo, hi, p, mde=0.02):
    return S.Comparison("latency", 100.0, 100.0 * ratio, ratio, lo, hi, p, p, 5, 5, 50, 50, S.SAME,
                        S.speed_change(ratio, "latency"), mde=mde)


def test_adjustment_and_unresolved_changes():
    """A lone p = 0.01 among 50 cases is not significant after the
    adjustment: the case is flagged 'unresolved' and inconclusive, neither
    slower nor 'no significant change'."""
    cs = [_cmp(1.2, 1.1, 1.3, 0.01)] + [_cmp(1.0, 0.95, 1.05, 0.9) for _ in range(49)]
    S.decide(cs)
    assert cs[0].verdict == S.INCONCLUSIVE and cs[0].unresolved and cs[0].q == pytest.approx(0.5)
    assert not any(c.unresolved for c in cs[1:])
    S.decide(cs, adjust=False)
    assert cs[0].verdict == S.SLOWER and not cs[0].unresolved
    # significant but smaller than the minimum effect: no verdict of change
    small = [_cmp(1.02, 1.01, 1.03, 0.001)]
    S.decide(small)
    assert small[0].verdict == S.SAME and not small[0].unresolved


def test_inconclusive_when_the_minimum_effect_was_out_of_reach():
    """Not significant and an mde above the minimum effect: 'inconclusive',
    never 'no significant change'."""
    weak = [_cmp(1.05, 0.9, 1.2, 0.4, mde=0.15)]
    S.decide(weak)
    assert weak[0].verdict == S.INCONCLUSIVE
    strong = [_cmp(1.005, 0.99, 1.02, 0.4, mde=0.02)]
    S.decide(strong)
    assert strong[0].verdict == S.SAME
    S.decide(weak, min_effect=0.2)
    assert weak[0].verdict == S.SAME


def test_machine_shift_suppresses_faster_and_slower():
    cs = [_cmp(1.2, 1.1, 1.3, 0.0001), _cmp(1.0, 0.99, 1.01, 0.9)]
    S.decide(cs, machine_shift=True)
    # every case under the shift is not judged, the significant one and the flat one alike, with a reason
    assert [c.verdict for c in cs] == [S.NOT_JUDGED] * 2 and not cs[0].significant
    assert [c.not_judged for c in cs] == ["machine shift"] * 2
    # a guard's own words, per case; a case it leaves alone is judged as usual
    S.decide(cs, machine_shift=["memory shift: ctl_machine llc ran 9.1% slower", ""])
    assert cs[0].verdict == S.NOT_JUDGED and cs[0].not_judged_kind == "memory shift"
    assert cs[0].not_judged == "memory shift: ctl_machine llc ran 9.1% slower"
    assert cs[1].verdict == S.SAME and cs[1].not_judged == "" and cs[1].not_judged_kind == ""


def test_cases_under_a_machine_shift_count_but_never_as_discoveries():
    """Twenty cases the machine moved (p 1e-6 each, under a shift) count
    in the family's number of cases but do not lower the bar of the twenty
    judged ones: a judged p of 0.004 among nineteen of 0.6 adjusts to
    0.004 x 40 = 0.16, as if the moved cases' p were 1 (in one family with
    their own p: 0.0076, significant); the moved cases keep their own q."""
    def judged():
        return [_cmp(1.1, 1.02, 1.2, 0.004)] + [_cmp(1.0, 0.95, 1.05, 0.6) for _ in range(19)]
    moved = [_cmp(1.3, 1.2, 1.4, 1e-6) for _ in range(20)]
    cs = judged() + moved
    S.decide(cs, machine_shift=[False] * 20 + [True] * 20)
    assert cs[0].q == pytest.approx(0.16) and cs[0].verdict != S.SLOWER
    assert all(c.verdict == S.NOT_JUDGED and c.q == pytest.approx(2e-6) for c in moved)
    unmoved = judged() + [_cmp(1.0, 0.95, 1.05, 1.0) for _ in range(20)]
    S.decide(unmoved)
    assert unmoved[0].q == pytest.approx(cs[0].q)


def test_interval_and_p_come_from_one_model():
    """The interval excludes 1 exactly when p < 0.05, on real comparisons."""
    rng = np.random.default_rng(5)
    for i in range(40):
        a = _noisy(rng, 6, 100, between=0.04, within=0.01, m=3)
        b = _noisy(rng, 6, 100 * (1 + 0.02 * (i % 5)), between=0.04, within=0.01, m=3)
        c = S.compare(a, b, n_boot=200, seed=i)
        excludes = c.lo > 1.0 or c.hi < 1.0
        assert excludes == (c.p < 0.05), (c.lo, c.hi, c.p)
        assert c.lo <= c.ratio <= c.hi
        assert c.mde > 0
