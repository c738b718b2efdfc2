"""tests/validation/host_scale.py: --speed (each run's speed from its
control cases, and how much of the drift between runs it carries, on
fixture runs whose every case moves with the machine) and the helpers of
its other analyses (coverage, --follows-memory, --cross-pairs, the robust
fit of --pair-fits, the three-run judging of the Intel VM's runs)."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "validation" / "host_scale.py"


@pytest.fixture
def host_scale(validation_script):
    return validation_script("host_scale")


def _runs(gen, root, speeds, kernel="6.1.0-a", seed=10, slower=None):
    """Runs whose cases and CPU controls all take each speed; slower:
    {regex: factor} on top, for every run (make_run multiplies the
    factors of every pattern a case matches)."""
    out = []
    for i, f in enumerate(speeds):
        scale = {r".": f, **(slower or {})}
        d = gen.make_run(root, kernel=kernel, seed=seed + i, reps=6, cases="medium", scale=scale)
        for k, v in enumerate(("chain", "alu", "copy")):
            gen.add_control(d, f, seed=seed + 50 + 3 * i + k, variant=v)
        out.append(str(d))
    return out


def test_the_speed_takes_the_machines_drift_out_of_the_spread(host_scale, gen, tmp_path):
    runs = _runs(gen, tmp_path, [1.0, 1.25, 0.85])
    spread = host_scale.speed_spread(runs)
    n, raw, norm, narrower = spread["cpu"]
    assert n > 10 and narrower == n
    assert raw > 10 and norm < raw / 4          # ln 1.25 vs ln 0.85: an sd of about 19% before


def test_a_slowdown_reads_true_across_the_machines_drift(host_scale, gen, tmp_path):
    base = _runs(gen, tmp_path / "a", [1.0, 1.2], seed=10)
    other = _runs(gen, tmp_path / "b", [0.85, 0.9], seed=30, slower={r"^lat_syscall null$": 1.10})
    got = host_scale.speed_change(base, other, r"^lat_syscall null$")
    raw, norm = got["lat_syscall null"]
    assert raw < 0                               # the faster machine hides it as measured
    assert norm == pytest.approx(10.0, abs=2.0)  # divided by speed: the 10% put in


def test_speed_cli_prints_each_domain_and_refuses_one_run(gen, tmp_path):
    runs = _runs(gen, tmp_path, [1.0, 1.1])
    p = subprocess.run([sys.executable, str(SCRIPT), "--speed", *runs], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("cpu: ") and "divided by speed" in p.stdout
    p = subprocess.run([sys.executable, str(SCRIPT), "--speed", runs[0]], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "two runs or more" in p.stderr and "Traceback" not in p.stderr


def test_a_run_without_controls_has_no_speed(host_scale, gen, tmp_path):
    runs = [str(gen.make_run(tmp_path, seed=70 + i, reps=6, cases="medium")) for i in range(2)]
    assert host_scale.speed_spread(runs) == {}
    assert math.isnan(host_scale._per_run(runs)[1][0]["cpu"])


def test_coverage_per_domain_on_fixed_rows(host_scale):
    """host_scale.coverage: per domain the cases, the median |log change|
    over the interval's half-width, how many intervals miss 1, the median
    mde; controls and rows without an interval left out."""
    def row(case, ratio, lo, hi, mde, control=False):
        return {"case": case, "ratio": ratio, "ci_low": lo, "ci_high": hi, "mde_pct": mde, "control": control}
    e = math.e
    rows = [row("a", e ** 0.01, e ** -0.01, e ** 0.03, 4.0),      # share 0.5, inside
            row("b", e ** 0.03, e ** 0.01, e ** 0.05, 6.0),       # share 1.5, outside
            row("c", e ** -0.02, e ** -0.04, e ** 0.0, 8.0),      # share 1.0, on the edge: inside
            row("m", e ** 0.01, e ** -0.09, e ** 0.11, 20.0),     # memory: share 0.1
            row("ctl", 2.0, 1.9, 2.1, 1.0, control=True), row("x", None, None, None, None)]
    got = host_scale.coverage({"rows": rows}, {"m": "memory"})
    assert set(got) == {"cpu", "memory"}
    n, share, out, mde = got["cpu"]
    assert (n, out, mde) == (3, 1, 6.0) and share == pytest.approx(1.0)
    n, share, out, mde = got["memory"]
    assert (n, out, mde) == (1, 0, 20.0) and share == pytest.approx(0.1)


def test_follows_memory_finds_the_case_that_moves_with_the_memory_control(host_scale, gen, tmp_path):
    """host_scale.follows_memory: over six runs whose memory control
    alternates 1.0/1.3, the one CPU-bound case made to follow it correlates
    with the memory speed (r > 0.95) and keeps its declared domain; the
    CLI refuses fewer than three runs."""
    runs = []
    for i, f in enumerate([1.0, 1.3, 1.0, 1.3, 1.0, 1.3]):
        d = gen.make_run(tmp_path, seed=200 + i, reps=6, cases="medium", scale={r"^lat_syscall null$": f})
        for k, v in enumerate(("chain", "alu", "copy")):
            gen.add_control(d, 1.0, seed=300 + 3 * i + k, variant=v)
        gen.add_control(d, f, seed=400 + i, variant="mem", ns=2.0)
        runs.append(str(d))
    got = host_scale.follows_memory(runs)
    dom, r = got["lat_syscall null"]
    assert dom == "cpu" and r > 0.95
    assert max(r for k, (_, r) in got.items() if k != "lat_syscall null") < r
    p = subprocess.run([sys.executable, str(SCRIPT), "--follows-memory", *runs[:2]], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and "three runs or more" in p.stderr


def test_cross_pairs_fits_the_cases_across_cpus_apart(host_scale, gen, tmp_path):
    """--cross-pairs: three runs whose cases across CPUs move 30% in the
    last while the rest stays: every pair gets a fit per group, and the
    cases across CPUs' median fit is well above the others'."""
    runs = []
    for i, f in enumerate((1.0, 1.0, 1.3)):
        d = gen.make_run(tmp_path, kernel="6.1.0-a", seed=20 + i, reps=6, cases="medium",
                         scale={r" @(cross|unpinned)$": f})
        gen.add_control(d, 1.0, seed=70 + i)
        runs.append(str(d))
    fits = host_scale.cross_pairs(runs)
    assert {"cpu", "cross", "all"} <= set(fits) and all(len(v) == 3 for v in fits.values())
    assert set(fits) <= {"cpu", "cross", "one-party", "same", "all"}
    assert sorted(fits["cross"])[1] > 3 * sorted(fits["cpu"])[1]
    assert sorted(fits["all"])[1] > sorted(fits["cpu"])[1]   # all together: pulled up by the cases across CPUs
    p = subprocess.run([sys.executable, str(SCRIPT), "--cross-pairs", runs[0]], capture_output=True, text=True)
    assert p.returncode == 2 and "two runs or more" in p.stderr


def test_robust_fit_puts_the_median_case_at_chi_square_1s_median(host_scale):
    """host_scale.py --pair-fits' factor on fixed points: w = 1, t2 = 4 and
    squared differences whose ratios to 1 + 0.25 * 4 have chi-square(1)'s
    median in the middle give s = 0.25; a case moved ten times as far
    (a kernel's change) leaves it; differences the reps alone explain
    give 0."""
    med = host_scale.CHI2_1_MEDIAN
    points = [(2.0 * m, 1.0, 4.0) for m in (0.1, 0.2, med, 1.5, 3.0)]
    assert host_scale.robust_fit(points) == pytest.approx(0.25, rel=1e-6)
    points[-1] = (600.0, 1.0, 4.0)
    assert host_scale.robust_fit(points) == pytest.approx(0.25, rel=1e-6)
    assert host_scale.robust_fit([(0.1, 1.0, 4.0), (0.3, 1.0, 4.0), (0.2, 1.0, 4.0)]) == 0.0
    assert host_scale.robust_fit([]) == 0.0


def test_thirds_judge_each_history_pair_against_the_third_run(host_scale, gen, tmp_path):
    """Three runs of one kernel: each pair of them is the history (copies
    under other run ids, so compare counts them at all) and each of the
    pair's runs is compared with the third: six comparisons, every one
    with the host's run level, and the copies' run ids renamed."""
    runs = _runs(gen, tmp_path / "runs", [1.0, 1.02, 0.99])
    figures, unmet = {}, []
    work = tmp_path / "work"
    work.mkdir()
    host_scale._thirds(work, runs, "t: ", False, figures, unmet)
    compared = sorted(k for k in figures if k.endswith(": median mde (%)") and ", run " in k and "history" in k)
    assert compared == sorted(f"t: history {h}, run {c}: median mde (%)" for h, c in (
        ("1-2", "1 v 3"), ("1-2", "2 v 3"), ("1-3", "1 v 2"), ("1-3", "3 v 2"), ("2-3", "2 v 1"), ("2-3", "3 v 1")))
    assert all(math.isfinite(figures[k]) and figures[k] > 0 for k in compared)
    assert sorted(k for k in figures if k.startswith("t: prior alone") and k.endswith("median mde (%)")) == \
        [f"t: prior alone, run {c}: median mde (%)" for c in ("1 v 2", "1 v 3", "2 v 3")]
    # the history measured a scale (a CPU-bound factor), which it would not if
    # compare had counted the history's runs as the compared ones
    assert all(math.isfinite(figures[f"t: history {h}: CPU-bound factor"]) for h in ("1-2", "1-3", "2-3"))
    copies = list(work.glob("t*/*/*/*-history/meta.json"))
    assert len(copies) == 6
    assert all(json.loads(p.read_text())["run_id"].endswith("-history") for p in copies)
    assert all((p.parent / "samples.jsonl").is_symlink() for p in copies)
