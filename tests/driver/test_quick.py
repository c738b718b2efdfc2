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

import pytest

from driver_runner import FAKES, run_dir_of, run_driver, run_lines

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def load_run(run_dir):
    meta = json.loads((run_dir / "meta.json").read_text())
    runs = run_lines(run_dir, "runs.jsonl")
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
        pytest.skip("no numpy: the driver printed its own table, the summary's first line is not there to check")
    assert proc.stdout.splitlines()[0].startswith(f"note: {host}/{kernel} is a quick run")


def test_meta_says_whether_the_run_was_quick(driver, tmp_path):
    proc = run_driver(driver, "--only", "^fake_good a$", "--quick", "--out", tmp_path / "q")
    meta, _, _ = load_run(run_dir_of(proc))
    assert meta["quick"] is True
    proc = run_driver(driver, "--only", "^fake_good a$", "--reps", 1, "--out", tmp_path / "full")
    meta, _, _ = load_run(run_dir_of(proc))
    assert meta["quick"] is False and meta["options"]["quick"] is False
    assert json.loads((run_dir_of(proc) / "meta.json").read_text())["quick"] is False


# ---- make run on a fresh machine: python3 without numpy (a blocker module
# on PYTHONPATH stands for it). Fake apt-get, id and sudo come first on PATH,
# so that nothing is ever installed: the fake apt-get writes its arguments to
# a log and "installs" numpy by removing the blocker.

def fresh_machine(tmp_path, uid=0, sudo=None, apt_fails=False):
    """(env, apt-get log): uid for `id -u`; sudo: None (no sudo), "refuses"
    (asks for a password) or "allows"."""
    blocker = tmp_path / "blocker"
    (blocker / "numpy").mkdir(parents=True)
    (blocker / "numpy" / "__init__.py").write_text("raise ImportError('no numpy on this machine')\n")
    fake = tmp_path / "fakebin"
    fake.mkdir()
    log = tmp_path / "apt-get.log"
    scripts = {
        "id": f'[ "$1" = -u ] && echo {uid} || exit 1\n',
        "apt-get": (f'echo "$*" >> {shlex.quote(str(log))}\n'
                    + ('[ "$1" = install ] && exit 100\n' if apt_fails else
                       f'[ "$1" = install ] && rm -rf {shlex.quote(str(blocker))}\n')
                    + "exit 0\n"),
        "sudo": {None: "exit 127\n", "refuses": 'echo "sudo: a password is required" >&2; exit 1\n',
                 "allows": '[ "$1" = -n ] && shift\nexec "$@"\n'}[sudo],
    }
    for name, body in scripts.items():
        (fake / name).write_text("#!/bin/sh\n" + body)
        (fake / name).chmod(0o755)
    if sudo is None:
        (fake / "sudo").unlink()
    env = dict(os.environ, PYTHONPATH=str(blocker), PATH=f"{fake}:{os.environ['PATH']}")
    return env, log


def make_run(build_dir, tmp_path, env, *make_args):
    args = ["run", f"BUILD={build_dir}", "BUDGET=1", "LABEL=fresh", *make_args,
            "RUN_ARGS=--bin-dir " + shlex.quote(str(FAKES)) + " --only '^fake_good a' --no-controls --out "
            + shlex.quote(str(tmp_path / "res"))]
    script = recipe(make_n(*args))
    assert "--label 'fresh'" in script
    proc = subprocess.run(["/bin/sh", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    (meta,) = list((tmp_path / "res").rglob("meta.json"))
    assert json.loads(meta.read_text())["label"] == "fresh"
    return proc


def apt_calls(log):
    return log.read_text().splitlines() if log.exists() else []


def assert_driver_table_and_hint(proc):
    assert "has no numpy" in proc.stderr and "apt-get install python3-numpy python3-matplotlib" in proc.stderr
    assert "fake_good a" in proc.stdout + proc.stderr          # the driver's own table
    assert proc.stdout == ""                                   # no summary


def assert_summary(proc):
    host, kernel = os.uname().nodename, os.uname().release
    assert proc.stdout.startswith(f"{host}/{kernel}[fresh]: 1 run"), proc.stdout[:300]
    assert "has no numpy" not in proc.stderr


INSTALL = "apt-get install -y --no-install-recommends python3-numpy python3-matplotlib"


def test_make_run_as_root_installs_numpy_and_prints_the_summary(build_dir, tmp_path):
    env, log = fresh_machine(tmp_path, uid=0)
    proc = make_run(build_dir, tmp_path, env)
    assert apt_calls(log) == ["update -q", "install -y --no-install-recommends python3-numpy python3-matplotlib"]
    assert f"kbench: running: apt-get update && {INSTALL}" in proc.stderr
    assert_summary(proc)


def test_make_run_with_passwordless_sudo_installs_through_it(build_dir, tmp_path):
    env, log = fresh_machine(tmp_path, uid=1000, sudo="allows")
    proc = make_run(build_dir, tmp_path, env)
    assert apt_calls(log) == ["update -q", "install -y --no-install-recommends python3-numpy python3-matplotlib"]
    assert f"kbench: running: sudo apt-get update && sudo {INSTALL}" in proc.stderr
    assert_summary(proc)


@pytest.mark.parametrize("sudo", [None, "refuses"])
def test_make_run_that_may_not_install_prints_the_driver_table_and_the_install_command(build_dir, tmp_path,
                                                                                        sudo):
    """Not root, no password-less sudo: make run still measures, prints the
    driver's own table and the exact command that installs the rest, and
    exits 0."""
    env, log = fresh_machine(tmp_path, uid=1000, sudo=sudo)
    proc = make_run(build_dir, tmp_path, env)
    assert apt_calls(log) == []
    assert f"kbench: not root and no password-less sudo; run: sudo apt-get update && sudo {INSTALL}" in proc.stderr
    assert_driver_table_and_hint(proc)


def test_make_run_whose_install_fails_prints_the_driver_table(build_dir, tmp_path):
    env, log = fresh_machine(tmp_path, uid=0, apt_fails=True)
    proc = make_run(build_dir, tmp_path, env)
    assert apt_calls(log) == ["update -q", "install -y --no-install-recommends python3-numpy python3-matplotlib"]
    assert f"kbench: installation failed; run: apt-get update && {INSTALL}" in proc.stderr
    assert_driver_table_and_hint(proc)


def test_make_run_auto_install_0_installs_nothing(build_dir, tmp_path):
    env, log = fresh_machine(tmp_path, uid=0)
    proc = make_run(build_dir, tmp_path, env, "AUTO_INSTALL=0")
    assert apt_calls(log) == []
    assert_driver_table_and_hint(proc)


def test_install_packages_without_apt_get_prints_the_command(tmp_path):
    """scripts/install-packages.sh where there is no apt-get at all (PATH: a
    fake id only)."""
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "id").write_text("#!/bin/sh\necho 0\n")
    (fake / "id").chmod(0o755)
    proc = subprocess.run([str(ROOT / "scripts" / "install-packages.sh"), "who", "pkg-a", "pkg-b"],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ, PATH=str(fake)))
    assert proc.returncode == 1
    assert proc.stderr == "who: no apt-get here; install the equivalent of: apt-get install -y --no-install-recommends pkg-a pkg-b\n"
    proc = subprocess.run([str(ROOT / "scripts" / "install-packages.sh"), "who"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and proc.stderr.startswith("usage: install-packages.sh WHO PACKAGE...")
