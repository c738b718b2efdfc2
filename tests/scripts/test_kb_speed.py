"""The CPU-bound cases judged relative to each run's CPU speed
(kbench.model.speed, compare's default; --as-measured turns it off), on
synthetic runs whose every case and CPU control follows the machine's
speed in that run."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from kbench.model import compare, load, speed, stats

NULL = "lat_syscall null"


def _runs(gen, root, speeds, kernel, seed, slower=None):
    """Runs of one kernel, each at one machine speed (a time factor) that
    every case and the three CPU controls follow; slower: {regex: factor}
    on top in every run."""
    out = []
    for i, f in enumerate(speeds):
        d = gen.make_run(root, kernel=kernel, seed=seed + i, reps=6, cases="small", scale={r".": f, **(slower or {})},
                         failures=False)
        for k, v in enumerate(("chain", "alu", "copy")):
            gen.add_control(d, f, seed=seed + 50 + 3 * i + k, variant=v)
        out.append(d)
    return load.load_runs(out, load.Warnings())


def _compare(gen, tmp_path, base_speeds, other_speeds, slower=None, **kw):
    base = compare.Side("base", _runs(gen, tmp_path / "a", base_speeds, "6.1.0-a", 10))
    other = compare.Side("other", _runs(gen, tmp_path / "b", other_speeds, "6.1.0-b", 30, slower))
    opts = compare.Options(n_boot=300, **kw)
    shift = compare.compare_controls(base, other, opts)
    rows = {r.case: r for r in compare.compare_sides(base, other, opts, shift=shift)}
    return shift, rows, base, other


def test_a_runs_speed_is_the_mean_log_time_of_its_cpu_controls(gen, tmp_path):
    runs = _runs(gen, tmp_path, [1.0, 1.25], "6.1.0-a", 10)
    names = speed.cpu_control_names(runs)
    assert names == ["ctl_machine alu", "ctl_machine chain", "ctl_machine copy"]
    a, b = (speed.run_speed(r, names) for r in runs)
    assert a == pytest.approx(math.log(1.2), abs=0.01)          # 1.2 ns an operation, 0.5% noise
    assert b - a == pytest.approx(math.log(1.25), abs=0.01)
    assert math.isnan(speed.run_speed(runs[0], []))
    assert math.isnan(speed.run_speed(runs[0], names + ["ctl_machine nothing"]))


def test_a_run_without_cpu_controls_gives_no_names(gen, tmp_path):
    bare = load.load_runs([gen.make_run(tmp_path / "bare", seed=5, reps=3, cases="small", failures=False)],
                          load.Warnings())
    with_ctl = _runs(gen, tmp_path, [1.0], "6.1.0-test", 10)
    assert speed.cpu_control_names(with_ctl + bare) == []


def test_rescaled_puts_times_and_bandwidths_at_one_speed():
    lat = stats.Series.single([[2.0, 4.0], [3.0]], "latency", "x", units=["r1", "r2"])
    got = speed.rescaled(lat, {"r1": math.log(1.0), "r2": math.log(2.0)}, math.log(1.0))
    assert [list(r[0]) for r in got.reps] == [[2.0, 4.0], [1.5]]    # r2 ran at half speed: its times halved
    assert got.units == ["r1", "r2"] and got.metric == "latency"
    two = stats.Series([([2.0], [8.0])], lambda m: m[0] + m[1], "latency", "z", units=["r2"])
    assert [list(a) for a in speed.rescaled(two, {"r2": math.log(2.0)}, 0.0).reps[0]] == [[1.0], [4.0]]
    bw = stats.Series.single([[3.0]], "bandwidth", "y", units=["r2"])
    assert list(speed.rescaled(bw, {"r2": math.log(2.0)}, 0.0).reps[0][0]) == [6.0]
    # a rep whose run has no speed: the series as it is
    assert speed.rescaled(lat, {"r1": 0.0}, 0.0) is lat
    assert speed.rescaled(lat, {"r1": 0.0, "r2": math.nan}, 0.0) is lat


JUDGED = (stats.SLOWER, stats.FASTER)


def _flagged(rows):
    return {n for n, r in rows.items() if r.cmp.verdict in JUDGED}


def test_a_slowdown_is_seen_across_a_move_of_the_machine(gen, tmp_path):
    """The other side's machine ran about 8% faster and lat_syscall null
    is 10% slower: as measured that is a machine shift (nothing judged);
    relative to each run's speed, null alone is flagged slower, by its
    10%, and the file-system- and memory-bound cases, which do not follow
    the CPU's speed, are not judged."""
    slower = {r"^lat_syscall null$": 1.10}
    shift, rows, _, _ = _compare(gen, tmp_path, [1.0, 1.02], [0.93, 0.92], slower=slower)
    assert shift.relative and not shift.shifted and shift.cpu_moved
    assert shift.speed_ratio == pytest.approx(0.915, rel=0.02)
    assert _flagged(rows) == {NULL}
    assert rows[NULL].cmp.ratio == pytest.approx(1.10, rel=0.03)
    others = [r for n, r in rows.items() if compare.domain_of(_CASES[n]) != "cpu" and r.cmp.verdict == stats.MACHINE]
    assert others                                       # moved with the machine: would be significant
    assert not [r for n, r in rows.items() if compare.domain_of(_CASES[n]) == "cpu" and r.cmp.verdict == stats.MACHINE]
    measured, mrows, _, _ = _compare(gen, tmp_path / "m", [1.0, 1.02], [0.93, 0.92], slower=slower, relative=False)
    assert measured.shifted and not measured.relative and not _flagged(mrows)
    assert mrows[NULL].cmp.ratio == pytest.approx(1.10 * 0.915, rel=0.03)    # the faster machine hid it


def test_the_drift_between_a_sides_runs_cancels(gen, tmp_path):
    """Each side's two runs 15% apart in speed: relative to the speed,
    null's 10% is flagged with a narrower interval than as measured, and
    nothing else is."""
    slower = {r"^lat_syscall null$": 1.10}
    shift, rows, _, _ = _compare(gen, tmp_path, [1.0, 1.15], [1.15, 1.0], slower=slower)
    assert not shift.shifted and _flagged(rows) == {NULL}
    _, mrows, _, _ = _compare(gen, tmp_path / "m", [1.0, 1.15], [1.15, 1.0], slower=slower, relative=False)

    def width(r):
        return math.log(r.cmp.hi / r.cmp.lo)
    assert width(rows[NULL]) < width(mrows[NULL]) / 2


def test_a_step_of_the_speed_beyond_the_limit_is_a_machine_shift(gen, tmp_path):
    """The other side's machine 20% slower, null 10% slower on top: a step
    beyond SPEED_STEP judges nothing (null, significant relative to the
    speed, is not judged); with a wider limit null alone is flagged."""
    slower = {r"^lat_syscall null$": 1.10}
    shift, rows, _, _ = _compare(gen, tmp_path, [1.0, 1.0], [1.2, 1.2], slower=slower)
    assert shift.relative and shift.shifted
    assert not _flagged(rows) and rows[NULL].cmp.verdict == stats.MACHINE
    assert rows[NULL].cmp.ratio == pytest.approx(1.10, rel=0.03)
    shift, rows, _, _ = _compare(gen, tmp_path / "w", [1.0, 1.0], [1.2, 1.2], slower=slower, speed_step=0.30)
    assert not shift.shifted and shift.cpu_moved
    assert _flagged(rows) == {NULL}
    # either way: a machine 20% faster is a step too
    shift, rows, _, _ = _compare(gen, tmp_path / "f", [1.0, 1.0], [1 / 1.2, 1 / 1.2], slower=slower)
    assert shift.shifted and not _flagged(rows) and rows[NULL].cmp.verdict == stats.MACHINE


def test_a_quiet_machine_judges_every_domain(gen, tmp_path):
    shift, rows, _, _ = _compare(gen, tmp_path, [1.0, 1.0], [1.0, 1.0])
    assert shift.relative and not shift.shifted and not shift.cpu_moved
    assert shift.speed_ratio == pytest.approx(1.0, abs=0.01)
    assert not [r for r in rows.values() if r.cmp.verdict in (stats.MACHINE, stats.SLOWER, stats.FASTER)]


def test_run_estimates_take_the_speed_out_of_cpu_bound_cases(gen, tmp_path):
    a, b = _runs(gen, tmp_path, [1.0, 1.3], "6.1.0-a", 10)
    rel = [compare.run_estimates(r, compare.Options(n_boot=100)) for r in (a, b)]
    raw = [compare.run_estimates(r, compare.Options(n_boot=100, relative=False)) for r in (a, b)]
    assert raw[1][NULL][0] - raw[0][NULL][0] == pytest.approx(math.log(1.3), abs=0.03)
    assert rel[1][NULL][0] - rel[0][NULL][0] == pytest.approx(0.0, abs=0.03)
    # a memory-bound case, and the controls themselves, stay as measured
    mem = next(n for n, c in a.cases.items() if compare.domain_of(c) == "memory" and not c.control)
    assert rel[1][mem][0] - rel[0][mem][0] == pytest.approx(raw[1][mem][0] - raw[0][mem][0])
    assert rel[0]["ctl_machine alu"] == raw[0]["ctl_machine alu"]


_CASES = {}


@pytest.fixture(autouse=True)
def _case_objects(gen, tmp_path_factory):
    """The declared case of every name in the small set (its domain)."""
    if not _CASES:
        d = gen.make_run(tmp_path_factory.mktemp("decl"), seed=3, reps=2, cases="small", failures=False)
        run, = load.load_runs([d], load.Warnings())
        _CASES.update(run.cases)


def test_compare_says_the_speed_and_as_measured_turns_it_off(gen, tmp_path):
    root = Path(__file__).resolve().parents[2]
    slower = {r"^lat_syscall null$": 1.10}
    _runs(gen, tmp_path / "r", [1.0, 1.02], "6.1.0-a", 10)
    _runs(gen, tmp_path / "r", [0.93, 0.92], "6.1.0-b", 30, slower)
    out = {}
    for mode, extra in (("relative", []), ("measured", ["--as-measured"])):
        js = tmp_path / f"{mode}.json"
        p = subprocess.run([sys.executable, str(root / "scripts" / "compare"), "--no-history",
                            str(tmp_path / "r" / "testhost" / "6.1.0-a"), str(tmp_path / "r" / "testhost" / "6.1.0-b"),
                            "--boot", "300", "--json", str(js), *extra], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        out[mode] = (p.stdout, json.loads(js.read_text())[0])
    text, doc = out["relative"]
    assert "Machine speed: the CPU controls ran" in text and "WARNING: MACHINE MOVED" in text
    assert "MACHINE SHIFT" not in text
    assert doc["relative"] and doc["machine_moved"] and not doc["machine_shift"]
    assert doc["speed_ratio"] == pytest.approx(0.915, rel=0.02)
    assert [r["case"] for r in doc["rows"] if r["verdict"] in JUDGED and not r["control"]] == [NULL]
    text, doc = out["measured"]
    assert "Machine speed:" not in text and "WARNING: MACHINE SHIFT" in text
    assert not doc["relative"] and doc["machine_shift"] and doc["speed_ratio"] is None
    assert not [r for r in doc["rows"] if r["verdict"] in JUDGED and not r["control"]]
