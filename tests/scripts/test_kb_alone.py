"""A case that moved alone: outside the summary tables, significant with one
run on a side, and no other case of its binary significant the same way is
inconclusive (stats.decide's groups), in compare's text, CSV and the page;
--flag-alone judges it like any other. On fixed comparisons and on synthetic
runs."""
import csv
import re

import pytest

from kbench import cli
from kbench.model import compare, load, stats
from kbench.views import compare_text


def _cmp(ratio, p=1e-6, runs=(1, 1)):
    c = stats.Comparison("latency", 1.0, ratio, ratio, ratio * 0.95, ratio * 1.05, p, p, 5, 5, 15, 15, stats.SAME,
                         stats.speed_change(ratio, "latency"), mde=0.05, base_runs=runs[0], other_runs=runs[1])
    return c


def _decide(cmps, fams, groups):
    return stats.decide(cmps, families=fams, groups=groups)


S, P = stats.SECONDARY, stats.PRIMARY + ": Processes"


def test_a_secondary_case_alone_in_its_binary_is_inconclusive():
    cmps = [_cmp(1.4), _cmp(1.0, p=0.9), _cmp(1.0, p=0.9)]
    _decide(cmps, [S, S, S], ["lat_pathwalk", "lat_pathwalk", "lat_fs"])
    assert cmps[0].verdict == stats.INCONCLUSIVE and cmps[0].alone
    assert not cmps[1].alone and not cmps[2].alone


def test_two_cases_of_one_binary_moving_the_same_way_stay_significant():
    cmps = [_cmp(1.4), _cmp(1.3), _cmp(0.7)]
    _decide(cmps, [S, S, S], ["lat_syscall", "lat_syscall", "lat_syscall"])
    assert [c.verdict for c in cmps] == [stats.SLOWER, stats.SLOWER, stats.INCONCLUSIVE]
    # the faster one is alone in its direction
    assert [c.alone for c in cmps] == [False, False, True]


def test_a_primary_case_keeps_its_verdict_alone():
    cmps = [_cmp(1.25), _cmp(1.0, p=0.9)]
    _decide(cmps, [P, S], ["lat_syscall", "lat_syscall"])
    assert cmps[0].verdict == stats.SLOWER and not cmps[0].alone
    # a secondary case of the same binary moving with it is not alone either
    cmps = [_cmp(1.25), _cmp(1.3)]
    _decide(cmps, [P, S], ["lat_syscall", "lat_syscall"])
    assert [c.verdict for c in cmps] == [stats.SLOWER, stats.SLOWER]


@pytest.mark.parametrize("runs", [(2, 2), (4, 3)])
def test_with_two_runs_a_side_the_rule_is_off(runs):
    cmps = [_cmp(1.4, runs=runs), _cmp(1.0, p=0.9, runs=runs)]
    _decide(cmps, [S, S], ["lat_pathwalk", "lat_pathwalk"])
    assert cmps[0].verdict == stats.SLOWER and not cmps[0].alone


def test_one_run_on_either_side_is_enough_for_the_rule():
    cmps = [_cmp(1.4, runs=(4, 1))]
    _decide(cmps, [S], ["lat_pathwalk"])
    assert cmps[0].verdict == stats.INCONCLUSIVE and cmps[0].alone


def test_without_groups_nothing_is_alone_and_a_bad_groups_list_is_refused():
    cmps = [_cmp(1.4)]
    _decide(cmps, [S], None)
    assert cmps[0].verdict == stats.SLOWER and not cmps[0].alone
    with pytest.raises(ValueError, match="groups"):
        _decide([_cmp(1.4)], [S], ["a", "b"])


def test_one_family_for_all_cases_applies_the_rule_to_every_case():
    cmps = [_cmp(1.4), _cmp(1.0, p=0.9)]
    _decide(cmps, ["", ""], ["lat_syscall", "lat_pipe"])
    assert cmps[0].alone


def test_a_machine_shift_is_not_alone():
    cmps = [_cmp(1.4)]
    stats.decide(cmps, families=[S], groups=["bw_mem"], machine_shift=[True])
    assert cmps[0].verdict == stats.MACHINE and not cmps[0].alone


# ---- synthetic runs, one a side ---------------------------------------------

LONE = "lat_pathwalk negative depth=4,name_len=8"


def _sides(base, other):
    w = load.Warnings()
    return compare.Side("A", load.load_runs([base], w)), compare.Side("B", load.load_runs([other], w))


@pytest.fixture
def lone_runs(tmp_path, gen):
    """One run a side: the base kernel, and the other with one secondary
    case 40% slower (lat_pathwalk negative depth=4) and two secondary
    lat_ctx cases 40% slower together. (base dir, other dir, the pair)"""
    root = tmp_path / "r"
    gen.make_run(root, host="hx", kernel="6.1.0-a", seed=21, reps=6)
    base = str(root / "hx" / "6.1.0-a")
    a, _ = _sides(base, base)
    primary = compare.primary_names(a, a)
    assert LONE in a.cases and LONE not in primary
    pair = [n for n in sorted(a.cases) if n.startswith("lat_ctx ") and n not in primary][:2]
    assert len(pair) == 2
    scale = {"^" + re.escape(LONE) + "$": 1.4}
    scale.update({"^" + re.escape(n) + "$": 1.4 for n in pair})
    gen.make_run(root, host="hx", kernel="6.1.0-b", seed=22, reps=6, scale=scale)
    return base, str(root / "hx" / "6.1.0-b"), pair


def test_compare_on_one_run_a_side(lone_runs):
    base, other, pair = lone_runs
    a, b = _sides(base, other)
    rep = compare.run_compare(a, b, compare.Options(n_boot=300))
    by = {r.case: r.cmp for r in rep.rows}
    assert by[LONE].verdict == stats.INCONCLUSIVE and by[LONE].alone
    for n in pair:
        assert by[n].verdict == stats.SLOWER and not by[n].alone
    assert [n for n, c in by.items() if c.alone] == [LONE]
    text = compare_text.format_report(rep, opts=compare.Options(n_boot=300))
    assert "(alone) 1 case(s) outside the summary tables (or of a file-system-bound binary) changed " \
        "significantly" in text
    # the two lat_ctx cases flagged with one run a side: what their flags rest on
    assert "One run a side: 2 flag(s) rest on one run of a side." in text
    assert re.search(rf"^    {re.escape(LONE)}: .*slower", text, re.M)
    # --flag-alone: judged like any other case
    rep = compare.run_compare(a, b, compare.Options(n_boot=300, alone=False))
    assert {r.case: r.cmp for r in rep.rows}[LONE].verdict == stats.SLOWER


def test_the_cli_csv_and_the_page_say_moved_alone(lone_runs, capsys, tmp_path):
    base, other, pair = lone_runs
    out = tmp_path / "c.csv"

    def csv_rows(*more):
        assert cli.compare_main([base, other, "--boot", "300", "--csv", str(out)] + list(more)) == 0
        capsys.readouterr()
        with open(out, newline="") as f:
            return {r["case"]: r for r in csv.DictReader(f)}
    rows = csv_rows()
    assert rows[LONE]["alone"] == "yes" and rows[LONE]["verdict"] == stats.INCONCLUSIVE
    assert rows[pair[0]]["alone"] == "" and rows[pair[0]]["verdict"] == stats.SLOWER
    rows = csv_rows("--flag-alone")
    assert rows[LONE]["alone"] == "" and rows[LONE]["verdict"] == stats.SLOWER
    page = tmp_path / "page.html"
    root = str(tmp_path / "r")
    assert cli.report_main([root, "--baseline", "hx/6.1.0-a", "--out", str(page), "--no-samples", "--boot",
                            "300"]) == 0
    text = page.read_text()
    row = re.search(rf"<tr[^>]*>(?:(?!</tr>).)*{re.escape(LONE)}(?:(?!</tr>).)*</tr>", text, re.S)
    assert row and "(moved alone: measure that side again)" in row.group(0), row and row.group(0)
    # (the page judges the summary cells too, and one run a side measures the
    # drift on every case it compares: another noisy case may move alone there)
    assert re.search(r"<small>[12] moved alone \(one run: measure again\)</small>", text)
    # the scoreboard: every flag of this page rests on one run a side
    slower = re.search(r"<td class='num s2'>(\d+)<small>(\d+) on one run a side: confirm with a second</small>", text)
    assert slower and slower.group(1) == slower.group(2) and int(slower.group(1)) >= 2
    for n in pair:
        row = re.search(rf"<tr[^>]*>(?:(?!</tr>).)*{re.escape(n)}(?:(?!</tr>).)*</tr>", text, re.S)
        assert row and "moved alone" not in row.group(0) and ">significantly slower<" in row.group(0)


def test_the_one_run_note_needs_a_flag_on_one_run(lone_runs):
    """Two runs a side (each side's run twice): the same cases flagged, no
    note; one run a side with nothing flagged: no note."""
    base, other, _ = lone_runs
    w = load.Warnings()
    a2 = compare.Side("A", load.load_runs([base], w) * 2)
    b2 = compare.Side("B", load.load_runs([other], w) * 2)
    rep = compare.run_compare(a2, b2, compare.Options(n_boot=300))
    assert any(r.cmp.significant for r in rep.rows)
    assert "One run a side" not in compare_text.format_report(rep, opts=compare.Options(n_boot=300))
    a, _ = _sides(base, base)
    rep = compare.run_compare(a, compare.Side("B", load.load_runs([base], w)), compare.Options(n_boot=300))
    assert not any(r.cmp.significant for r in rep.rows)
    assert "One run a side" not in compare_text.format_report(rep, opts=compare.Options(n_boot=300))


@pytest.mark.parametrize("runs, n", [((1, 1), 1), ((3, 1), 1), ((2, 2), 0)])
def test_a_flagged_cell_counts_in_the_one_run_note(runs, n):
    import types
    cell, other = _cmp(1.4, runs=runs), _cmp(1.0, p=0.9, runs=runs)
    _decide([cell, other], [P, P], None)
    assert cell.significant and not other.significant
    rep = types.SimpleNamespace(rows=[], cells={"cell:P:x": (cell, "mean", ["a", "b"]),
                                                "cell:P:y": (other, "mean", ["c", "d"])})
    lines = compare_text.one_run_lines(rep)
    if n:
        assert len(lines) == 1 and lines[0].startswith(f"One run a side: {n} flag(s) rest on one run of a side.")
    else:
        assert lines == []


def test_a_primary_case_of_a_shared_binary_alone_is_inconclusive():
    """shared: a binary whose cases share one state from run to run (the
    prior's file-system-bound benches); there the rule takes the primary
    cases too, and still only with one run on a side and only alone."""
    cmps = [_cmp(4.3), _cmp(1.0, p=0.9), _cmp(1.25)]
    stats.decide(cmps, families=[P, S, P], groups=["lat_fs", "lat_fs", "lat_syscall"], shared=("lat_fs",))
    assert cmps[0].verdict == stats.INCONCLUSIVE and cmps[0].alone
    assert cmps[2].verdict == stats.SLOWER and not cmps[2].alone
    cmps = [_cmp(4.3), _cmp(1.3)]
    stats.decide(cmps, families=[P, S], groups=["lat_fs", "lat_fs"], shared=("lat_fs",))
    assert [c.verdict for c in cmps] == [stats.SLOWER, stats.SLOWER]
    cmps = [_cmp(4.3, runs=(2, 2)), _cmp(1.0, p=0.9, runs=(2, 2))]
    stats.decide(cmps, families=[P, S], groups=["lat_fs", "lat_fs"], shared=("lat_fs",))
    assert cmps[0].verdict == stats.SLOWER and not cmps[0].alone


def test_a_series_takes_the_shared_binaries_in_every_step():
    """decide_pending (a series: every step's cases decided together, each
    step's grouped apart): the prior's shared binaries count in each step."""
    from kbench.model import drift
    steps = [[_cmp(4.3), _cmp(1.0, p=0.9)], [_cmp(4.3), _cmp(1.3)]]
    pending = [(judged, [""] * 2, [P, S], ["lat_fs", "lat_fs"], lambda: None) for judged in steps]
    compare.decide_pending(pending, compare.Options(prior=drift.load_prior()))
    assert [c.verdict for c in steps[0] + steps[1]] == [stats.INCONCLUSIVE, stats.INCONCLUSIVE, stats.SLOWER,
                                                         stats.SLOWER]
    assert [c.alone for c in steps[0] + steps[1]] == [True, False, False, False]
    assert pending == []


@pytest.fixture
def fs_runs(tmp_path, gen):
    """One run a side: the base kernel, and the other with one primary
    lat_fs case (the first) three times slower. (base dir, other dir, case)"""
    root = tmp_path / "r"
    gen.make_run(root, host="hx", kernel="6.1.0-a", seed=31, reps=6)
    base = str(root / "hx" / "6.1.0-a")
    a, _ = _sides(base, base)
    case = sorted(n for n in compare.primary_names(a, a) if n.startswith("lat_fs "))[0]
    gen.make_run(root, host="hx", kernel="6.1.0-b", seed=32, reps=6, scale={"^" + re.escape(case) + "$": 3.0})
    return base, str(root / "hx" / "6.1.0-b"), case


def test_compare_takes_the_shared_binaries_from_the_prior(fs_runs):
    """A primary lat_fs case alone on one run a side: inconclusive where the
    prior names lat_fs shared (the built-in one does), called where it names
    none, and with --flag-alone."""
    import dataclasses
    from kbench.model import drift
    base, other, case = fs_runs
    prior = drift.load_prior()
    assert "lat_fs" in prior.shared
    for shared, alone, want in ((prior.shared, True, stats.INCONCLUSIVE), ((), True, stats.SLOWER),
                                (prior.shared, False, stats.SLOWER)):
        opts = compare.Options(n_boot=300, alone=alone, prior=dataclasses.replace(prior, shared=shared))
        got = {r.case: r.cmp for r in compare.run_compare(*_sides(base, other), opts).rows}[case]
        assert got.verdict == want and got.alone == (want == stats.INCONCLUSIVE), (shared, alone, got.verdict)
