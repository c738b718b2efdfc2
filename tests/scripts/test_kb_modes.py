"""A change of the low estimator that the median rep, or the fastest rep
where the sides' reps share both modes, does not follow is a new mix of
fast and slow reps, not a shift (stats.decide's `modes`): inconclusive,
in compare's text, CSV and the page; a shift of every rep is still
called, and so is a shift whose slower side has one stray fast rep.  On
fixed reps."""
import math
import re

import numpy as np

from kbench.model import compare, load, stats
from kbench.views import compare_text, export, page

FAST, SLOW = 4000.0, 5700.0     # ns: a case of two threads on one CPU, in its two modes


def _series(values, label):
    return stats.Series.single([np.array([v]) for v in values], "latency", label, units=[label] * len(values))


def _bimodal(rng, n_fast, n_slow, scale=1.0):
    vals = np.concatenate([FAST * np.exp(rng.normal(0, 0.01, n_fast)), SLOW * np.exp(rng.normal(0, 0.01, n_slow))])
    return vals * scale


def _judge(base, other, **kw):
    c = stats.compare(_series(base, "a"), _series(other, "b"), n_boot=500, **kw)
    stats.decide([c])
    return c


def test_a_run_that_drew_no_fast_rep_is_not_a_slowdown():
    rng = np.random.default_rng(1)
    base = _bimodal(rng, 5, 9)           # the low quantile in the fast mode
    other = _bimodal(rng, 0, 12)         # no fast rep at all: the low quantile in the slow mode
    c = _judge(base, other)
    assert c.ratio > 1.25                # the estimator moved by the modes' distance
    assert abs(math.log(c.mid_ratio)) < 0.03
    assert c.verdict == stats.INCONCLUSIVE and c.modes and not c.significant


def test_a_shift_of_every_rep_is_still_called():
    rng = np.random.default_rng(2)
    base = _bimodal(rng, 5, 9)
    other = _bimodal(rng, 5, 9, scale=1.25)     # both modes 25% slower
    c = _judge(base, other)
    assert c.verdict == stats.SLOWER and not c.modes
    assert math.log(c.mid_ratio) / math.log(c.ratio) > 0.8


def test_a_side_that_drew_fewer_fast_reps_is_not_a_slowdown():
    """Both sides in both modes, the median moved with the low quantile
    (one side mostly fast, the other one fast rep in fifteen), the
    fastest rep did not: modes."""
    rng = np.random.default_rng(3)
    base = _bimodal(rng, 9, 6)
    other = _bimodal(rng, 1, 14)
    c = _judge(base, other)
    assert c.ratio > 1.25 and math.log(c.mid_ratio) / math.log(c.ratio) > 0.5   # the median followed
    assert abs(math.log(c.fast_ratio)) < 0.05 and c.overlap >= stats.LOW_Q
    assert c.verdict == stats.INCONCLUSIVE and c.modes


def test_a_shift_with_one_stray_fast_rep_is_still_called():
    """Every rep of the other side 14% slower but one, as fast as the
    base's (a rep before the change took hold): the fastest rep did not
    follow, but the base's reps never reach the other side's value."""
    rng = np.random.default_rng(4)
    base = 250.0 * np.exp(rng.normal(0, 0.01, 11))
    other = np.append(285.0 * np.exp(rng.normal(0, 0.01, 10)), 252.0)
    c = _judge(base, other)
    assert math.log(c.fast_ratio) / math.log(c.ratio) < stats.MODES_SHARE
    assert c.overlap == 0.0
    assert c.verdict == stats.SLOWER and not c.modes


def _fixed(ratio, mid, estimator="low", fast=math.nan, overlap=math.nan, modal=True):
    c = stats.Comparison("latency", 1.0, ratio, ratio, ratio * 0.98, ratio * 1.02, 1e-6, 1e-6, 9, 9, 27, 27,
                         stats.SAME, stats.speed_change(ratio, "latency"), mde=0.02, mid_ratio=mid,
                         estimator=estimator, fast_ratio=fast, overlap=overlap, modal=modal)
    stats.decide([c])
    return c


def test_the_share_and_its_direction():
    fixed = _fixed
    assert fixed(1.20, 1.12).verdict == stats.SLOWER              # the median followed (share 0.62)
    assert fixed(1.20, 1.08).modes                                # it did not (share 0.42)
    assert fixed(1.20, 0.97).modes                                # the median moved the other way
    assert fixed(0.80, 0.99).modes and fixed(0.80, 0.99).verdict == stats.INCONCLUSIVE
    assert fixed(1.20, math.nan).verdict == stats.SLOWER         # no median: the estimator's verdict
    assert fixed(1.20, 1.0, estimator="median").verdict == stats.SLOWER   # the median is the estimator
    # the median followed; the fastest rep did not (share 0.42), and the sides overlap: modes
    assert fixed(1.20, 1.15, fast=1.08, overlap=0.2).modes
    assert not fixed(1.20, 1.15, fast=1.08, overlap=0.19).modes            # less overlap than LOW_Q
    assert not fixed(1.20, 1.15, fast=1.12, overlap=0.5).modes             # the fastest rep followed (0.62)
    assert fixed(0.80, 0.85, fast=1.01, overlap=0.3).modes                 # faster, the fastest rep the other way


def test_a_one_process_case_with_a_stray_fast_rep_is_still_called():
    """The fastest rep is read as a mode only in a case of two parties: a
    system call's one stray fast rep (the machine's moment) beside a
    shift of its median and low quantile is a shift, whatever the overlap
    of the sides' slow tails; the median's condition holds for every case."""
    assert _fixed(1.20, 1.15, fast=1.08, overlap=0.3).modes                   # two parties: modes
    c = _fixed(1.20, 1.15, fast=1.08, overlap=0.3, modal=False)
    assert c.verdict == stats.SLOWER and not c.modes
    assert _fixed(1.20, 1.08, modal=False).modes                              # the median did not follow


def test_the_cases_of_two_parties_read_their_fastest_rep(tmp_path, gen):
    """compare marks each case by its placement: two processes on one CPU
    or across CPUs (or wherever the scheduler puts them) are modal, one
    process is not; a summary cell made of them as its cases are."""
    root = tmp_path / "r"
    for k, seed in (("6.1.0-a", 41), ("6.1.0-b", 42)):
        gen.make_run(root, host="hm", kernel=k, seed=seed, reps=5)
    w = load.Warnings()
    a, b = (compare.Side(k, load.load_runs([str(root / "hm" / k)], w)) for k in ("6.1.0-a", "6.1.0-b"))
    rep = compare.run_compare(a, b, compare.Options(n_boot=200))
    modal = {r.case: r.cmp.modal for r in rep.rows}
    assert modal["lat_pipe rt @same"] and modal["lat_pipe rt @cross"] and modal["lat_pipe rt @unpinned"]
    assert not modal["lat_syscall null"] and not modal["lat_syscall read"]
    two = [c for c in modal if " @" in c and c.split(" @")[1].split()[0] in ("same", "cross", "unpinned")]
    assert len(two) >= 3 and all(modal[c] for c in two)
    assert sum(not v for v in modal.values()) > len(modal) // 2


def test_text_csv_and_page_say_so(tmp_path, gen):
    root = tmp_path / "r"
    gen.make_run(root, host="hm", kernel="6.1.0-a", seed=31, reps=6)
    gen.make_run(root, host="hm", kernel="6.1.0-b", seed=32, reps=6)
    w = load.Warnings()
    a, b = (compare.Side(k, load.load_runs([str(root / "hm" / k)], w)) for k in ("6.1.0-a", "6.1.0-b"))
    opts = compare.Options(n_boot=200)
    rep = compare.run_compare(a, b, opts)
    row = rep.rows[0]
    row.cmp.verdict, row.cmp.modes, row.cmp.mid_ratio, row.cmp.fast_ratio = stats.INCONCLUSIVE, True, 1.01, 0.98
    text = compare_text.format_report(rep, opts=opts)
    assert re.search(rf"^{re.escape(row.case)} .*inconclusive \(modes\)", text, re.M)
    assert "(modes) 1 case(s) changed significantly at the fast end of their reps" in text
    assert re.search(rf"^    {re.escape(row.case)}: .*, median rep 1\.0% slower, fastest rep 2\.0% faster$", text, re.M)
    rows = list(export.csv_rows(rep))
    assert [r["modes"] for r in rows if r["case"] == row.case] == ["yes"]
    assert all(r["modes"] == "" for r in rows if r["case"] != row.case)
    assert "fast reps only" in page.cell_words(row.cmp)
    assert "the median or the fastest rep did not follow" in page.cmp_title(row.cmp)
