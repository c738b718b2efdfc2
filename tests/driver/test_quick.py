"""make quick: its own results root, the quick flag in meta.json, and the
line saying where it wrote.

The Makefile's recipe is taken from `make -n` (so the test never rebuilds
anything) and run as make would run it, on the fake benchmarks' cheapest
case. Nothing here asserts on timings.
"""
import json
import os
import pathlib
import shlex
import subprocess

from driver_runner import FAKES, run_dir_of, run_driver

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def load_run(run_dir):
    meta = json.loads((run_dir / "meta.json").read_text())
    runs = [json.loads(ln) for ln in (run_dir / "runs.jsonl").read_text().splitlines()]
    return meta, runs, None


def make_n(*args):
    proc = subprocess.run(["make", "-n", "--no-print-directory", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def recipe(text):
    """The shell script of make run / make quick in `make -n` output."""
    lines = [ln for ln in text.splitlines() if "kbench-run $table" in ln]
    assert len(lines) == 1, text
    return lines[0]


def test_make_quick_writes_under_results_quick_and_make_run_does_not():
    quick = recipe(make_n("quick"))
    assert "--quick --out results/quick" in quick
    run = recipe(make_n("run"))
    assert "--quick" not in run and "--out" not in run      # results/, the driver's default
    assert "--quick --out /elsewhere" in recipe(make_n("quick", "QUICK_OUT=/elsewhere"))


def test_make_quick_on_a_cheap_case(build_dir, tmp_path):
    out = tmp_path / "quick"
    args = ["quick", f"BUILD={build_dir}", f"QUICK_OUT={out}",
            "RUN_ARGS=--bin-dir " + shlex.quote(str(FAKES)) + " --only '^fake_good a' --no-controls"]
    script = recipe(make_n(*args))
    proc = subprocess.run(["/bin/sh", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    run_dirs = [p.parent for p in out.rglob("meta.json")]
    assert len(run_dirs) == 1
    run_dir = run_dirs[0]
    host, kernel, _ = run_dir.relative_to(out).parts
    assert host == os.uname().nodename and kernel == os.uname().release
    # It says where it wrote, last, after the summary.
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("kbench: quick run") and "not a measurement" in last
    assert last.endswith(f"results in {run_dir}")
    meta, runs, _ = load_run(run_dir)
    assert meta["quick"] is True and meta["options"]["quick"] is True
    assert len(runs) == 2
    # The summary (when numpy is there) opens with the note that it is a check.
    try:
        import numpy  # noqa: F401
    except ImportError:
        return
    assert proc.stdout.splitlines()[0].startswith(f"note: {host}/{kernel} is a quick run")


def test_meta_says_whether_the_run_was_quick(driver, tmp_path):
    proc = run_driver(driver, "--only", "^fake_good a$", "--quick", "--out", tmp_path / "q")
    meta, _, _ = load_run(run_dir_of(proc))
    assert meta["quick"] is True
    proc = run_driver(driver, "--only", "^fake_good a$", "--reps", 1, "--out", tmp_path / "full")
    meta, _, _ = load_run(run_dir_of(proc))
    assert meta["quick"] is False and meta["options"]["quick"] is False
    assert json.loads((run_dir_of(proc) / "meta.json").read_text())["quick"] is False


def test_make_run_without_numpy_prints_the_driver_table_and_the_install_command(build_dir, tmp_path):
    """A fresh machine: python3 without numpy. make run still measures, prints
    the driver's own table and the exact command that installs the rest,
    and exits 0."""
    blocker = tmp_path / "blocker" / "numpy"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('no numpy on this machine')\n")
    args = ["run", f"BUILD={build_dir}", "BUDGET=1", "LABEL=fresh",
            "RUN_ARGS=--bin-dir " + shlex.quote(str(FAKES)) + " --only '^fake_good a' --no-controls --out "
            + shlex.quote(str(tmp_path / "res"))]
    script = recipe(make_n(*args))
    assert "--label 'fresh'" in script
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "blocker"))
    proc = subprocess.run(["/bin/sh", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "has no numpy" in proc.stderr and "apt-get install python3-numpy python3-matplotlib" in proc.stderr
    assert "fake_good a" in proc.stdout + proc.stderr          # the driver's own table
    assert "Traceback" not in proc.stderr
    (meta,) = list((tmp_path / "res").rglob("meta.json"))
    assert json.loads(meta.read_text())["label"] == "fresh"
