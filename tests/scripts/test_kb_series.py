"""A series of kernels (summarize/compare --series, kbench.series): the
release order, each kernel against the one before it with compare's
statistics, all steps adjusted together, and where each case changed."""
import csv
import json
import math
import re

import pytest

from kb_helpers import assert_clean_exit
from kbench.model import compare, groups as groups_mod, load, series, stats
from kbench.cli import compare_main, summarize_main

KERNELS = ["6.1.0", "6.2.0", "6.3.0", "6.4.0", "6.5.0"]
STAYS = r"^lat_syscall stat$"        # +25% from kernel 2 on (it stays)
GOES = r"^lat_sig catch$"            # +10% at kernel 2 only (gone at kernel 3)


def make_series(gen, root, planted, kernels=KERNELS, runs=2):
    """Two runs of each kernel (small case set); planted: the two steps."""
    for i, k in enumerate(kernels, start=1):
        for r in range(runs):
            scale = {}
            if planted and i >= 3:
                scale[STAYS] = 1.15
            if planted and i == 2:
                scale[GOES] = 1.10
            gen.make_run(root, "h", k, seed=100 * i + r, reps=5, samples=3, cases="small", run_id=f"r{i}{r}",
                         scale=scale, failures=False)
    return root


@pytest.fixture(scope="module")
def planted(tmp_path_factory, gen):
    return make_series(gen, tmp_path_factory.mktemp("planted") / "results", True)


@pytest.fixture(scope="module")
def flat(tmp_path_factory, gen):
    return make_series(gen, tmp_path_factory.mktemp("flat") / "results", False)


def test_release_order():
    names = ["6.12", "6.6", "6.1.5", "6.6-rc7", "6.1", "6.6-rc1", "6.6.0-rc3", "6.1.0[patched]", "v-nightly",
             "6.1.0-18-amd64", "6.1.0-9-amd64", "6.12.117+deb12-cloud-amd64"]
    assert sorted(names, key=series.version_key) == [
        "6.1", "6.1.0-9-amd64", "6.1.0-18-amd64", "6.1.0[patched]", "6.1.5", "6.6-rc1", "6.6.0-rc3", "6.6-rc7",
        "6.6", "6.12", "6.12.117+deb12-cloud-amd64", "v-nightly"]


def test_order_given_and_its_errors(flat):
    groups = groups_mod.group_runs(load.load_runs([flat], load.Warnings()))
    shuffled = [groups[3], groups[0], groups[4], groups[2], groups[1]]
    got, left = series.order_groups(shuffled)
    assert [g.kernel for g in got] == KERNELS and left == []
    got, left = series.order_groups(groups, ["6.5.0", "h/6.1.0", "6.3"])
    assert [g.kernel for g in got] == ["6.5.0", "6.1.0", "6.3.0"]
    assert [g.kernel for g in left] == ["6.2.0", "6.4.0"]
    with pytest.raises(series.OrderError, match="matches no kernel found; there are: h/6.1.0"):
        series.order_groups(groups, ["7.0"])
    with pytest.raises(series.OrderError, match="matches several kernels: h/6.1.0, h/6.2.0"):
        series.order_groups(groups, ["6."])
    with pytest.raises(series.OrderError, match="names h/6.1.0 twice"):
        series.order_groups(groups, ["6.1.0", "h/6.1.0"])


def test_planted_steps_found_where_they_are_and_nothing_else(planted, tmp_path, capsys):
    out_csv, out_json = tmp_path / "ch.csv", tmp_path / "ch.json"
    rc = summarize_main(["--series", str(planted), "--csv", str(out_csv), "--json", str(out_json)])
    text, err = capsys.readouterr()
    assert_clean_exit(rc, err, 0)
    assert "Series of 5 kernels: h/6.1.0 < h/6.2.0 < h/6.3.0 < h/6.4.0 < h/6.5.0" in text
    assert "the 4 step(s) are judged together" in text
    rows = list(csv.DictReader(out_csv.open()))
    assert [(r["case"], r["kernel"], r["previous"], r["verdict"], r["stayed"]) for r in rows] == [
        ("lat_syscall stat", "h/6.3.0", "h/6.2.0", stats.SLOWER, "yes"),
        ("lat_sig catch", "h/6.2.0", "h/6.1.0", stats.SLOWER, "back"),
    ]
    stay, goes = rows
    assert 1.10 < float(stay["ratio"]) < 1.21 and float(stay["ci_low"]) > 1.0
    assert stay["after"] == "h/6.4.0" and stay["after_verdict"] == stats.SLOWER
    assert 1.05 < float(goes["ratio"]) < 1.15 and float(goes["back_change_pct"]) > 0   # back: faster
    assert goes["after"] == "h/6.3.0" and goes["after_verdict"] != stats.SLOWER
    lines = text[text.index("== Where it changed"):].splitlines()
    assert lines[0] == "== Where it changed (2 change(s), largest first)"
    assert lines[3].startswith("lat_syscall stat  h/6.3.0     h/6.2.0  15.")
    assert "stayed (h/6.4.0 against h/6.2.0: " in lines[3]
    assert lines[4].startswith("lat_sig catch     h/6.2.0     h/6.1.0  ")
    assert "went back at h/6.3.0 (" in lines[4] and "faster); h/6.3.0 against h/6.1.0: " in lines[4]
    assert len(lines) == 5
    doc = json.loads(out_json.read_text())
    assert [(c["case"], c["position"], c["stayed"]) for c in doc["changes"]] == [
        ("lat_syscall stat", 2, "yes"), ("lat_sig catch", 1, "back")]


def test_flat_series_lists_nothing(flat, tmp_path, capsys):
    """Five kernels of one and the same machine (A/A-like): 4 steps of 46
    cases and cells, nothing listed."""
    out_json = tmp_path / "s.json"
    rc = compare_main(["--series", str(flat), "--json", str(out_json)])
    text, err = capsys.readouterr()
    assert_clean_exit(rc, err, 0)
    assert "Where it changed: nowhere. No case changed significantly at any step." in text
    doc = json.loads(out_json.read_text())
    assert doc["kernels"] == [f"h/{k}" for k in KERNELS] and doc["changes"] == []
    assert [s["from"] for s in doc["steps"]] == [f"h/{k}" for k in KERNELS[:-1]]
    for s in doc["steps"]:
        assert stats.SLOWER not in s["verdicts"] and stats.FASTER not in s["verdicts"]


def test_every_family_is_adjusted_over_all_steps(flat):
    """The adjusted p of each step is Benjamini-Hochberg over the family's
    cases at every step of the series together, not per step."""
    groups = groups_mod.group_runs(load.load_runs([flat], load.Warnings()))
    opts = compare.Options(n_boot=300, prior=None)
    res = series.analyse(groups, opts)
    cmps = {}
    for st in res.steps:
        for c in [r.cmp for r in st.rows] + list(st.cells.values()):
            if not math.isnan(c.q):
                cmps[id(c)] = c
    fams = {}
    for c in cmps.values():
        fams.setdefault(c.family, []).append(c)
    assert any(f.startswith(stats.PRIMARY) for f in fams) and stats.SECONDARY in fams
    for fam, cs in fams.items():
        q = stats.bh_adjust([c.p for c in cs])
        assert [c.q for c in cs] == pytest.approx(list(q)), fam
        assert len(cs) > len(cs) // len(res.steps)   # members from every step


def test_compare_series_order_and_bad_input(flat, capsys):
    rc = compare_main(["--order", "6.5.0,6.1.0", str(flat)])
    text, err = capsys.readouterr()
    assert_clean_exit(rc, err, 0)
    assert text.startswith("Series of 2 kernels: h/6.5.0 , h/6.1.0\nLeft out (not in --order): h/6.2.0, h/6.3.0, "
                           "h/6.4.0\n")
    rc = compare_main(["--order", "9.9", str(flat)])
    assert_clean_exit(rc, capsys.readouterr()[1], 2, "compare: --order '9.9' matches no kernel found")
    rc = summarize_main(["--series", str(flat / "h" / "6.1.0")])
    assert_clean_exit(rc, capsys.readouterr()[1], 1, "summarize: a series needs two kernels or more; found h/6.1.0")
    rc = compare_main(["--series", "--explain", str(flat)])
    assert_clean_exit(rc, capsys.readouterr()[1], 2, "--explain: not with --series")
    rc = compare_main([str(flat / "h" / "6.1.0")])
    assert_clean_exit(rc, capsys.readouterr()[1], 2, "give an OTHER kernel to compare with BASE")


def test_kernel_value_interval_holds_the_run_level(flat):
    groups = groups_mod.group_runs(load.load_runs([flat], load.Warnings()))
    g = groups[0]
    side = compare.Side.from_group(g)
    ser = side.series("lat_syscall null")
    reps_only = series.kernel_value(side, "lat_syscall null", ser, compare.Options(n_boot=300, prior=None))
    from kbench.model import drift
    with_prior = series.kernel_value(side, "lat_syscall null", ser,
                                     compare.Options(n_boot=300, prior=drift.load_prior(None)))
    v, lo, hi = reps_only
    assert lo < v < hi and with_prior[0] == v
    assert with_prior[1] < lo and with_prior[2] > hi      # the prior's drift of a run widens it
    assert math.isnan(series.kernel_value(side, "x", None, compare.Options())[0])


def test_page_where_it_changed_on_top_and_a_trend_per_cell(planted, tmp_path, capsys):
    from kbench.model import tables
    from kbench.cli import report_main
    log = tmp_path / "bisect.jsonl"
    log.write_text(json.dumps({"time": "2025-01-01T00:00:00Z", "commit": "0123456789abcdef0123", "subject": "mm: <x>",
                               "kernel": "6.2.0-rc1", "verdict": "bad", "exit": 1, "ratio": 1.151, "ci_low": 1.1,
                               "ci_high": 1.2, "reps": 10, "note": ""}) + "\nnot json\n")
    page = tmp_path / "index.html"
    rc = report_main([str(planted), "--series", "--out", str(page), "--no-samples", "--boot", "300",
                      "--bisect", str(log)])
    out, err = capsys.readouterr()
    assert_clean_exit(rc, err, 0, f"--bisect {log}: 1 line(s) that are not a step, skipped")
    assert "series of 5 kernels: 2 change(s)\n  lat_syscall stat: 1" in out
    text = page.read_text()
    heads = [h for h in ("id='series'", "id='trends'", "id='bisect'", "id='score'", "id='summary'") if h in text]
    assert heads == ["id='series'", "id='trends'", "id='bisect'", "id='score'", "id='summary'"]
    assert sorted(heads, key=text.index) == heads
    changes = text[text.index("<table class='sort changes'>"):]
    changes = changes[:changes.index("</table>")]
    assert changes.count("<tr>") == 3                       # the head and two changes
    assert "<td class='k'>h/6.3.0</td><td>h/6.2.0</td>" in changes and "went back at h/6.3.0" in changes
    groups = groups_mod.group_runs(load.load_runs([planted], load.Warnings()))
    cells = sum(1 for t in tables.build_tables(groups) for col in t.columns if any(col.cells.values()))
    assert text.count("<svg class='trend'") == cells
    # the kernels by number under each chart's points, the key above them
    assert "Kernels, left to right: <b>1</b> h/6.1.0; <b>2</b> h/6.2.0; <b>3</b> h/6.3.0; <b>4</b> h/6.4.0; " \
           "<b>5</b> h/6.5.0." in text
    for svg in re.findall(r"<svg class='trend'.*?</svg>", text):
        assert re.findall(r"text-anchor='middle' class='m'>(\d+)</text>", svg) == ["1", "2", "3", "4", "5"]
    marks = re.findall(r"fill='(#[0-9a-f]{6})'><title>([^<]*)</title>", text)
    assert sorted((c, t.split(":")[0]) for c, t in marks if c != "#333") == [
        ("#2b7bba", "h/6.3.0"), ("#f2711c", "h/6.2.0"), ("#f2711c", "h/6.3.0")]
    bis = text[text.index("id='bisect'"):]
    assert "<code>0123456789ab</code></td><td>mm: &lt;x&gt;</td><td>6.2.0-rc1</td><td class='s2'>bad</td>" in bis
    assert "<td class='num'>1.151</td><td class='num'>1.100..1.200</td>" in bis
    rc = report_main([str(planted), "--bisect", str(tmp_path / "none.jsonl"), "--out", str(page)])
    assert_clean_exit(rc, capsys.readouterr()[1], 1, "none.jsonl: No such file or directory")


def test_a_machine_shift_between_the_kernels_around_a_change_cannot_tell(gen, tmp_path, capsys):
    """The controls 4.5% slower at each of two steps (within what two runs a
    side and the built-in prior allow: both steps judged, relative to
    them), 9% between the kernel before a change and the kernel after it
    (beyond: a machine shift): the look that says whether it stayed judges
    nothing, so the change is "cannot tell", not "did not stay" (as four
    emulated Debian kernels showed, the control cases 8% apart)."""
    root = tmp_path / "results"
    machine = [1.0, 1.045, 1.045 ** 2, 1.045 ** 2]
    for i, k in enumerate(["6.1.0", "6.2.0", "6.3.0", "6.4.0"]):
        for r in range(2):
            d = gen.make_run(root, "h", k, seed=300 + 10 * i + r, reps=5, samples=3, cases="small",
                             run_id=f"r{i}{r}", scale={STAYS: 1.25} if i >= 1 else {}, failures=False)
            gen.add_control(d, machine[i], 700 + 10 * i + r)
    out_csv = tmp_path / "ch.csv"
    rc = summarize_main(["--series", str(root), "--csv", str(out_csv)])
    text, err = capsys.readouterr()
    assert_clean_exit(rc, err, 0)
    assert "MACHINE SHIFT" not in text                  # no step has one
    # (the changes of the case that changed: this fixture's other cases are
    # two runs of reps noise each, where the series' adjustment may let one
    # through; the series' calibration is tests/validation's simulation)
    rows = [r for r in csv.DictReader(out_csv.open()) if r["case"] == "lat_syscall stat"]
    assert [(r["case"], r["kernel"], r["verdict"], r["stayed"], r["after_verdict"]) for r in rows] == [
        ("lat_syscall stat", "h/6.2.0", stats.SLOWER, "unjudged", stats.NOT_JUDGED)]
    line = text[text.index("== Where it changed"):].splitlines()[3]
    assert re.search(r"cannot tell: the control cases ran 9\.\d% slower on h/6\.3\.0 than on h/6\.1\.0, a machine "
                     r"shift \(h/6\.3\.0 against h/6\.1\.0: 1[0-9]\.\d% slower, [01]\.\d+\.\.1\.\d+, not judged\)$", line), line
    # (the look's change at h/6.1.0's machine state: the 25% less the controls' 9%; a change of 25%
    # is flagged at its step whatever the three steps' adjustment: 15% was at its edge)


def test_trend_chart_has_two_y_ticks_at_least_and_numbers_every_kernel_it_can():
    """An emulated series' open/close: 5.8..18.9 µs, where a round step of
    10 left one tick (10.0) and no scale; 20 kernels: every other number."""
    from kbench.views import trends
    pts = [(13.8e3, 12.8e3, 14.9e3, None), (15.2e3, 14.0e3, 16.6e3, None), (17.9e3, 17.0e3, 18.9e3, None),
           (6.80e3, 6.38e3, 7.25e3, None), (7.27e3, 5.81e3, 9.09e3, None)]
    svg = trends.trend_svg("open/close", "latency", "µs", 1000.0, pts, [f"h/k{i}" for i in range(5)])
    ticks = re.findall(r"text-anchor='end'>([0-9.]+)</text>", svg)
    assert ticks == ["5.00", "10.0", "15.0"]
    many = [(100.0 + i, 99.0 + i, 101.0 + i, None) for i in range(20)]
    svg = trends.trend_svg("x", "latency", "ns", 1.0, many, [f"h/k{i}" for i in range(20)])
    assert re.findall(r"class='m'>(\d+)</text>", svg) == ["1", "3", "5", "7", "9", "11", "13", "15", "17", "20"]
