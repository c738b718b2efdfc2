"""tests/validation/rep_budget.py: what an interval at one run a side is
made of, and the same reps spent another way, on fixture runs."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "validation" / "rep_budget.py"


@pytest.fixture
def rb(validation_script):
    return validation_script("rep_budget")


def _runs(gen, root, n, cheap=r"^lat_syscall "):
    """n runs of one kernel with CPU controls; the reps of the cases
    matching `cheap` recorded as taking 30 ms, the others 120 ms."""
    import re
    out = []
    for i in range(n):
        d = gen.make_run(root, kernel="6.1.0-a", seed=30 + i, reps=6, cases="medium")
        for k, v in enumerate(("chain", "alu", "copy")):
            gen.add_control(d, 1.0, seed=90 + 3 * i + k, variant=v)
        lines = []
        for line in (d / "runs.jsonl").read_text().splitlines():
            r = json.loads(line)
            if re.search(cheap, r["case"]):
                r["duration_ms"] = 30.0
            lines.append(json.dumps(r))
        (d / "runs.jsonl").write_text("\n".join(lines) + "\n")
        out.append(str(d))
    return out


def test_the_plan_gives_a_cheap_case_more_reps_at_the_same_cost(rb):
    cases = [{"cost": 0.03}, {"cost": 0.12}]
    n = rb.plan(cases, 3.0, lambda k: math.log1p(1.0 / k))
    assert n[0] * 0.03 + n[1] * 0.12 <= 3.0 + 1e-9
    assert n[0] * 0.03 + n[1] * 0.12 > 3.0 - 0.12
    assert 3.0 < n[0] / n[1] < 5.0          # log((n+1)/n) per second alike: n about 1/cost
    assert rb.uniform(cases, 3.01) == [20, 20]  # in turn: 5 + 15 each (3.0 s), then not even the cheap one fits
    assert all(k <= rb.MAX_REPS for k in rb.plan(cases, 1e6, lambda k: math.log1p(1.0 / k)))


def test_a_weight_moves_reps_to_the_weighed_case_at_the_same_cost(rb):
    """Two cases of one cost: alike without weights; weighed 4x, the first
    gains 4x per rep, so it gets about 4x the reps (log((n+1)/n) about
    1/n), within the same budget."""
    cases = [{"cost": 0.1}, {"cost": 0.1}]
    gain = lambda k: math.log1p(1.0 / k)     # noqa: E731
    assert rb.plan(cases, 6.0, gain) == [30, 30]
    n = rb.plan(cases, 6.0, gain, [4.0, 1.0])
    assert sum(n) == 60 and 3.0 < n[0] / n[1] < 5.0


def test_the_scaled_mde_at_the_measured_reps_is_compares(rb, gen, tmp_path):
    """mde_at rebuilds compare's variance from the parts: at the reps a
    side measured it gives compare's own mde, and more reps narrow it."""
    runs = _runs(gen, tmp_path, 4)

    class A:
        history, base, other = runs[:2], runs[2], runs[3]
    reports = rb._reports(A)
    cb, co = rb._cost(runs[2]), rb._cost(runs[3])
    assert cb["lat_syscall null"] == pytest.approx(0.03) and cb["bw_mem rd size_kb=1024"] == pytest.approx(0.12)
    cases = rb.cases_of(reports[0], {c: (cb[c] + co[c]) / 2 for c in cb}, {})
    same = [x for x in cases if x["na"] == x["nb"]]
    assert len(same) > 10
    for x in same:
        assert rb.mde_at(x, x["na"]) == pytest.approx(x["mde"], rel=1e-6)
        assert rb.mde_at(x, 4 * x["na"]) < x["mde"]
        assert 0.0 <= x["rep_share"] <= 1.0


def test_cli_prints_the_domains_and_the_three_ways(gen, tmp_path):
    runs = _runs(gen, tmp_path, 4)
    p = subprocess.run([sys.executable, str(SCRIPT), "--history", runs[0], "--history", runs[1], runs[2], runs[3]],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "cpu: " in p.stdout and "median share of the variance from the reps" in p.stdout
    for way in ("as measured:", "one more rep for every case in turn:", "planned by gain per second:"):
        assert way in p.stdout
    assert "headline cases weighed" not in p.stdout
    w = subprocess.run([sys.executable, str(SCRIPT), "--history", runs[0], "--history", runs[1], "--weight", "3",
                        runs[2], runs[3]], capture_output=True, text=True)
    assert w.returncode == 0, w.stderr
    assert "planned, the headline cases weighed 3x:" in w.stdout and ", headline cases " in w.stdout
    zero = subprocess.run([sys.executable, str(SCRIPT), "--history", runs[0], "--history", runs[1], "--weight", "0",
                           runs[2], runs[3]], capture_output=True, text=True)
    assert zero.returncode == 2 and "a weight is above 0" in zero.stderr and "Traceback" not in zero.stderr
    bad = subprocess.run([sys.executable, str(SCRIPT), "--history", runs[0], "--history", str(tmp_path),
                          runs[2], runs[3]], capture_output=True, text=True)
    assert bad.returncode == 2 and "not a run directory" in bad.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "runs.jsonl").write_text("")    # a run directory in name only: compare finds no usable run
    worse = subprocess.run([sys.executable, str(SCRIPT), "--history", runs[0], "--history", runs[1],
                            str(empty), runs[3]], capture_output=True, text=True)
    assert worse.returncode == 1 and "rep_budget.py: compare: " in worse.stderr, worse.stderr
    assert "Traceback" not in worse.stderr
