"""The control trace of a run (kbench.controls), its text in summarize and
its chart and banner on the page, on synthetic runs."""
import math
from pathlib import Path

import numpy as np
import pytest

from kbench.model import compare, controls, drift, load, summary
from kbench.views import html
from kbench.views import summary_text

T0 = 5_000_000_000  # CLOCK_MONOTONIC of the first sample


def _run(run_id="r1", slow=(), factor=1.0, kernel="k"):
    """Controls every second for 60 s, the seconds in `slow` 20% slower;
    one measured case every 2 s.  factor scales everything (a machine shift)."""
    run = load.Run(Path(run_id), {"run_id": run_id}, run_id, "h", kernel, "complete")
    ctl = load.Case("ctl_machine alu", "ctl_machine", "alu", "", "pinned", "latency", control=True)
    for s in range(60):
        v = 1.2 * factor * (1.2 if s in slow else 1.0)
        ctl.reps[(run_id, s)] = [v, v, v]
        ctl.rep_start[(run_id, s)] = T0 + s * 1_000_000_000
    case = load.Case("lat_syscall null", "lat_syscall", "null", "", "pinned", "latency")
    for r in range(30):
        v = 1000.0 * factor
        case.reps[(run_id, r)] = [v, v, v]
        case.rep_start[(run_id, r)] = T0 + (2 * r) * 1_000_000_000 + 500_000_000
    run.cases = {ctl.name: ctl, case.name: case}
    return run


def test_trace_is_relative_to_the_run_median_in_time_order():
    pts = controls.trace(_run(slow=range(10, 20)))
    assert len(pts) == 60 and [p.t_s for p in pts] == sorted(p.t_s for p in pts)
    assert pts[0].t_s == 0 and pts[-1].t_s == 59
    assert pts[15].rel == pytest.approx(1.2) and pts[30].rel == pytest.approx(1.0)


def test_disturbed_stretch_and_marked_reps():
    run = _run(slow=range(10, 20))
    pts = controls.trace(run)
    # A median of 5 neighbours keeps a 10 s stretch whole: 10 s to the
    # first undisturbed control at 20 s.
    assert controls.disturbed_times(pts) == [(10.0, 20.0)]
    marks = controls.marked_reps(run, pts)
    # reps starting at 10.5..18.5 s: nearest control inside the stretch
    assert sorted(k[1] for k in marks["lat_syscall null"]) == [5, 6, 7, 8, 9]
    assert "ctl_machine alu" not in marks



def test_a_rep_is_marked_by_the_nearest_control_the_earlier_on_a_tie():
    """Controls at 0..59 s, the 10-19 s ones slow: a rep at 9.5 s is as
    near the fast control at 9 s as the slow one at 10 s (not marked), one
    at 19.5 s as near the slow one at 19 s as the fast one at 20 s (marked);
    before the first control and after the last, the nearest end."""
    run = _run(slow=range(10, 20))
    case = run.cases["lat_syscall null"]
    case.reps, case.rep_start = {}, {}
    for r, s in enumerate([9.5, 9.6, 19.5, 19.6, -3.0, 75.0]):
        case.reps[("r1", r)] = [1000.0]
        case.rep_start[("r1", r)] = T0 + int(s * 1e9)
    marks = controls.marked_reps(run, controls.trace(run))
    assert [k[1] for k in marks["lat_syscall null"]] == [1, 2]


def test_the_trace_medians_are_numpy_medians():
    run = _run()
    ctl = run.cases["ctl_machine alu"]
    for s in range(60):
        ctl.reps[("r1", s)] = [1.0 + 0.01 * ((s * 7) % 13), 2.0, 1.5 + 0.001 * s, 1.1][: 1 + s % 4]
    pts = controls.trace(run)
    vals = [float(np.median(ctl.reps[("r1", s)])) for s in range(60)]
    med = float(np.median(vals))
    assert [p.rel for p in pts] == [v / med for v in vals]
    assert controls.binned(pts, 7) == [float(np.median([p.rel for p in pts if min(6, int(p.t_s / 59 * 7)) == i]))
                                       for i in range(7)]

def test_stretches_less_than_a_second_apart_are_one():
    """Controls every 0.2 s: slow, one back to normal, slow again within the
    same second: one stretch, not "24-24 s, 24-29 s"."""
    rel = [1.0] * 10 + [1.2] * 6 + [1.0] * 3 + [1.2] * 10 + [1.0] * 20 + [1.2] * 10 + [1.0] * 10
    pts = [controls.Point(i * 0.2, "ctl_machine alu", r) for i, r in enumerate(rel)]
    raw = controls._raw_disturbed(pts, controls.DISTURBED)
    assert len(raw) == 3 and raw[1][0] - raw[0][1] < 1.0     # the smoothing leaves a gap of one point
    got = controls.disturbed_times(pts)
    assert len(got) == 2
    assert got[0] == (pytest.approx(raw[0][0]), pytest.approx(raw[1][1]))
    assert got[1] == (pytest.approx(raw[2][0]), pytest.approx(raw[2][1]))


def test_one_slow_control_rep_is_not_a_disturbance():
    pts = controls.trace(_run(slow=[30]))
    assert controls.disturbed_times(pts) == []


def test_describe_and_sparkline():
    lines = controls.describe(_run(slow=range(10, 20)))
    assert "60 control reps over 59 s" in lines[0]
    assert len(lines[1].split("|")[1]) == 40
    assert "1 stretch(es), 10 s of 59 s: 10-20 s" in lines[2]
    assert "5 rep(s) of 1 case(s)" in lines[3]
    assert controls.describe(_run(slow=())) [2].strip().startswith("no stretch")
    assert controls.sparkline([0.9, 1.3, math.nan]) == "▁█ "


def test_summarize_keeps_controls_apart():
    g = load.Group("h", "k", [_run(slow=range(10, 20))])
    g.cases = g.runs[0].cases
    text = summary_text.format_group(g, all_cases=True)
    table, controls_part = text.split("== controls")
    assert "lat_syscall null" in table and "ctl_machine" not in table
    assert "ctl_machine alu" in controls_part and "machine speed over run r1" in controls_part


def _model(shifted):
    base = load.Group("h", "base", [_run("a")])
    other = load.Group("h", "other", [_run("b", factor=1.3 if shifted else 1.0, kernel="other")])
    for g in (base, other):
        g.cases = g.runs[0].cases
    sa, sb = compare.Side("h/base", base.runs), compare.Side("h/other", other.runs)
    opts = compare.Options(n_boot=200, prior=drift.load_prior())
    shift = compare.compare_controls(sa, sb, opts)
    rows = compare.compare_sides(sa, sb, opts, shift=shift)
    return html.Model(groups=[base, other], baseline=base, tables=[], comparisons={other.key: (rows, {})},
                      opts=opts, shifts={other.key: shift})


def test_page_shows_the_trace_and_a_banner_only_when_shifted():
    page = html.render(_model(True), "/tmp/x/index.html")
    assert "<h2 id='machine'>" in page and page.count("<svg class='trace'") == 2
    assert "class='alarm'>Machine shift during h/other against h/base: the CPU controls ran 30.0% slower" in page
    cases_part = page.split("<h2 id='cases'>")[1].split("<h2 id='machine'>")[0]
    # no control is a row of every case (the verdicts' reasons name the control that moved)
    assert "<td>ctl_machine" not in cases_part and "<td>lat_syscall null</td>" in cases_part
    assert "not judged <small>(machine shift: the CPU controls ran 30.0% slower" in cases_part
    quiet = html.render(_model(False), "/tmp/x/index.html")
    assert "class='alarm'" not in quiet and "judged relative to the controls (the CPU's speed: same)" in quiet


def test_noise_markers_flag_disturbed_samples():
    assert load._disturbed({"elapsed_ns": 1000, "run_delay_ns": 101, "steal_ns": 0})
    assert load._disturbed({"elapsed_ns": 1000, "run_delay_ns": 60, "steal_ns": 50})
    assert not load._disturbed({"elapsed_ns": 1000, "run_delay_ns": 100, "steal_ns": None})
    assert not load._disturbed({"elapsed_ns": 1000})          # runs from before the markers
    assert not load._disturbed({"elapsed_ns": 0, "run_delay_ns": 5})


def test_summarize_says_how_many_reps_the_markers_flag(tmp_path):
    run = _run()
    case = run.cases["lat_syscall null"]
    case.disturbed = {("r1", 3), ("r1", 4)}
    g = load.Group("h", "k", [run])
    g.cases = run.cases
    text = " ".join(summary_text.format_group(g).split())   # lines are wrapped at 100 columns
    assert "Noise markers: 2 of 30 reps of one-party cases" in text and "lat_syscall null (2)" in text
    case.disturbed = set()
    assert "Noise markers" not in summary_text.format_group(g)


def test_the_memory_control_has_its_own_trace():
    """The memory control (a bandwidth) is traced apart from the CPU
    controls: it neither makes nor hides their disturbed stretches."""
    run = _run(slow=range(10, 20))
    mem = load.Case("ctl_machine mem", "ctl_machine", "mem", "", "unpinned", "bandwidth", control=True)
    for s in range(0, 60, 3):
        v = 40000.0 / (1.5 if 30 <= s < 45 else 1.0)     # a slow memory regime at 30-45 s
        mem.reps[("r1", 100 + s)] = [v, v, v]
        mem.rep_start[("r1", 100 + s)] = T0 + s * 1_000_000_000 + 300_000_000
    run.cases[mem.name] = mem
    cpu = controls.trace(run)
    assert {p.case for p in cpu} == {"ctl_machine alu"}
    assert controls.disturbed_times(cpu) == [(10.0, 20.0)]
    m = controls.trace(run, "memory")
    assert {p.case for p in m} == {"ctl_machine mem"} and max(p.rel for p in m) == pytest.approx(1.5)
    assert len(controls.trace(run, None)) == len(cpu) + len(m)
    text = "\n".join(controls.describe(run))
    assert "memory controls over the run (20 reps" in text
    svg = html.trace_svg(run)
    assert "stroke-dasharray" in svg and "dashed = memory control" in svg
