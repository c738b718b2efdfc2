"""kbench-run --profile with the real perf on a real benchmark, and as an
ordinary user (whom perf_event_paranoid may deny the kernel): profiles of
kernel functions, nothing left behind (no perf.data anywhere, no build-id
cache in $HOME), and a clear message where perf may not look."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
FAKE_PERF = ROOT / "tests" / "fake_perf"
FAKES = ROOT / "tests" / "fake_bench"
HANDMADE = ROOT / "tests" / "data" / "perf" / "handmade.perf-script.txt"


def _sysctl(name):
    try:
        return int(pathlib.Path(f"/proc/sys/kernel/{name}").read_text())
    except (OSError, ValueError):
        return None


def perf_sees_the_kernel():
    """perf installed, allowed to sample the kernel (root or
    perf_event_paranoid <= 1), kernel symbols visible, and a recording works
    (tests/conftest.py MAY_SKIP asks the same)."""
    perf = shutil.which("perf")
    paranoid = _sysctl("perf_event_paranoid")
    if not perf or (os.geteuid() != 0 and (paranoid is None or paranoid >= 2)):
        return False
    try:
        with open("/proc/kallsyms") as f:
            if set(f.readline().split(" ")[0]) <= {"0"}:
                return False
        with tempfile.TemporaryDirectory() as d:
            return subprocess.run([perf, "record", "-e", "cpu-clock", "-N", "-q", "-o", f"{d}/p.data", "--",
                                   "true"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def test_real_perf_profiles_kernel_functions_and_leaves_nothing(driver, bin_dir, tmp_path):
    if not perf_sees_the_kernel():
        pytest.skip("perf cannot sample the kernel here (not installed, or perf_event_paranoid/kptr_restrict)")
    tmp, home, cwd = tmp_path / "tmp", tmp_path / "home", tmp_path / "cwd"
    for d in (tmp, home, cwd):
        d.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), HOME=str(home))
    proc = subprocess.run([str(driver), "--bin-dir", str(bin_dir), "--only", "^lat_syscall stat$", "--no-controls",
                           "--quick", "--reps", "1", "--no-table", "--profile", "--profile-samples", "300",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    run_dir = pathlib.Path(proc.stdout.strip())
    [ln] = [json.loads(x) for x in (run_dir / "profiles.jsonl").read_text().splitlines()]
    p = ln["profile"]
    assert ln["status"] == "ok" and p is not None, ln
    assert p["samples"] > 0 and p["kernel_samples"] > 0 and p["event"] in ("cycles", "cpu-clock")
    names = {s["symbol"] for s in p["kernel_symbols"]}
    # the stat path, by inclusive share if not by self
    assert any("stat" in n for n in names), sorted(names)
    assert ln["ops"] > 0 and ln["events"]["ops"] == ln["ops"]
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["profile"]["cases"] == ["lat_syscall stat"] and meta["profile"]["perf_version"].startswith("perf")
    # nothing left: perf's private directory, perf.data, a build-id cache
    assert list(tmp.iterdir()) == [] and list(cwd.iterdir()) == [] and list(home.iterdir()) == []
    assert not list(run_dir.rglob("perf.data*"))


def test_profile_as_ordinary_user(driver, user_dir, as_nobody):
    """perf (here the fake, so that the test does not depend on perf being
    installed) as uid 65534: the driver's own checks of perf_event_paranoid
    and kptr_restrict decide, as they would for the real one."""
    env = dict(os.environ, TMPDIR=str(user_dir), PATH=f"{FAKE_PERF}:{os.environ['PATH']}",
               KBENCH_FAKE_PERF_SCRIPT=str(HANDMADE))
    env.pop("KBENCH_FAKE_PERF_LOG", None)
    out = user_dir / "results"
    proc = subprocess.run([str(driver), "--bin-dir", str(FAKES), "--only", "^fake_good a$", "--no-controls",
                           "--reps", "1", "--no-table", "--profile", "--out", str(out)], capture_output=True,
                          text=True, env=env, cwd=user_dir, timeout=300, preexec_fn=as_nobody())
    assert proc.returncode == 0, proc.stderr
    run_dir = pathlib.Path(proc.stdout.strip())
    [ln] = [json.loads(x) for x in (run_dir / "profiles.jsonl").read_text().splitlines()]
    paranoid, kptr = _sysctl("perf_event_paranoid"), _sysctl("kptr_restrict")
    if paranoid is None or paranoid >= 2:
        assert f"perf_event_paranoid is {paranoid}" in proc.stderr
        assert "sysctl kernel.perf_event_paranoid=1" in proc.stderr
        assert ln["profile"] is None and "perf_event_paranoid" in ln["profile_missing"]
    elif kptr is not None and kptr >= 1:
        assert f"kptr_restrict is {kptr}" in proc.stderr and ln["profile"] is None
    else:
        assert ln["profile"] is not None and ln["profile"]["samples"] == 4
    assert ln["events"]["ops"] == 5000          # the event counts need no perf
    assert sorted(p.name for p in user_dir.iterdir()) == ["results"]
