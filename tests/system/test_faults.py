"""Faults (issue 8): what the binaries and the driver do when the machine
does not cooperate. Each must end with a clear message and a defined exit
status (never a crash, a traceback or a hang), keep what was already
recorded, and leave nothing behind.

- the results directory cannot be written (permissions; a read-only file
  system; a file system cannot be remounted read-only under the driver's
  open files, so the mid-run write failure is the disk-full test's);
- the disk is full (a 1 MB tmpfs as the driver's --out, and as TMPDIR);
- $TMPDIR does not exist;
- the descriptor limit is too low for lat_select fds=250 (the binary's
  own skip is tested in tests/bench/test_fsvm.py; here the driver's record of it);
- a benchmark is killed with SIGKILL (partners die with it; the driver
  records a crash);
- fork fails (RLIMIT_NPROC, as an unprivileged user: root ignores it).

Tests that mount a tmpfs need root and are skipped otherwise; the
unprivileged ones use uid 65534 when run as root, else the caller.
"""
import json
import os
import pathlib
import resource
import signal
import subprocess
import time

import pytest

import driver_runner
from bench_runner import allowed_skip, first_line, ran_or_allowed_skip, stderr_of
from faultlib import (IS_ROOT, children_of, descendants_of, list_cases, one_case_per_variant,
                      read_jsonl_lenient, running)

QUICK = ["--iters", "2", "--samples", "1", "--warmup-ms", "0"]


def run_driver(driver, *args, **kw):
    """The shared runner, with no table at the end."""
    return driver_runner.run_driver(driver, "--no-table", *args, **kw)


def assert_clean_failure(proc, *needles):
    """Exit 1 with a one-line 'kbench-run: ...' reason, no crash, no C++ abort."""
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "terminate called" not in proc.stderr and "Aborted" not in proc.stderr, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("kbench-run: "), proc.stderr
    for n in needles:
        assert n in last, (n, proc.stderr)


def snapshot(root):
    """Every file under root with its bytes, to prove nothing changed."""
    root = pathlib.Path(root)
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def the_run_dir(out):
    dirs = [p for p in pathlib.Path(out).glob("*/*/*") if p.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def check_consistent(run_dir):
    """meta.json valid; every complete line valid; every record's samples present."""
    meta = json.loads((run_dir / "meta.json").read_text())
    runs, runs_partial = read_jsonl_lenient(run_dir / "runs.jsonl")
    samples, _ = read_jsonl_lenient(run_dir / "samples.jsonl")
    assert not list(run_dir.glob("*.tmp.*")), "a temporary meta.json was left behind"
    per_inv = {}
    for s in samples:
        per_inv[(s["case"], s["rep_idx"])] = per_inv.get((s["case"], s["rep_idx"]), 0) + 1
    for r in runs:
        if r["status"] == "ok":
            assert per_inv.get((r["case"], r["rep_idx"]), 0) >= r["n_samples"] > 0, r
    return meta, runs, runs_partial, samples


def with_leak_check_off(env):
    """LeakSanitizer (ASan builds) needs a thread of its own at exit; the
    RLIMIT_NPROC tests count every process, so they run without it."""
    env = dict(env)
    opts = env.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = ":".join([o for o in opts.split(":") if o and not o.startswith("detect_leaks=")]
                                   + ["detect_leaks=0"])
    return env


# ---- the results directory cannot be written --------------------------------------

def test_unwritable_results_dir(driver, user_dir, as_nobody):
    out = user_dir / "results"
    out.mkdir()
    (out / "keep.txt").write_text("an earlier result\n")
    if IS_ROOT:
        os.chown(out, 65534, 65534)
    os.chmod(out, 0o555)
    before = snapshot(out)
    proc = run_driver(driver, "--no-controls", "--only", "^fake_good a$", "--reps", "1", "--out", out, preexec_fn=as_nobody())
    assert_clean_failure(proc, "mkdir", "Permission denied")
    assert proc.stdout == ""
    assert snapshot(out) == before


def test_readonly_filesystem_keeps_earlier_runs(driver, tmpfs):
    out = tmpfs.path / "results"
    first = run_driver(driver, "--no-controls", "--only", "^fake_good", "--reps", "2", "--out", out)
    assert first.returncode == 0, first.stderr
    run_dir = the_run_dir(out)
    tmpfs.remount("ro")
    try:
        before = snapshot(tmpfs.path)
        proc = run_driver(driver, "--no-controls", "--only", "^fake_good", "--reps", "2", "--out", out)
        assert_clean_failure(proc, "Read-only file system")
        resumed = run_driver(driver, "--resume", run_dir)
        assert_clean_failure(resumed, "Read-only file system")
        assert snapshot(tmpfs.path) == before
    finally:
        tmpfs.remount("rw")


def wait_for_lines(path, n, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count("\n") >= n:
            return
        assert proc.poll() is None, proc.communicate(timeout=60)
        time.sleep(0.05)
    pytest.fail(f"{path} did not reach {n} lines")


def finish_with_resume(driver, run_dir, reps, samples_per_inv=3):
    """--resume completes the run: every rep exactly once, no lost or doubled sample."""
    proc = run_driver(driver, "--resume", run_dir)
    assert proc.returncode == 0, proc.stderr
    meta, runs, partial, samples = check_consistent(run_dir)
    assert partial == ""
    assert meta["status"] == "complete"
    assert sorted(r["rep_idx"] for r in runs if r["status"] != "interrupted") == list(range(reps))
    keys = [(s["case"], s["rep_idx"], s["sample_idx"]) for s in samples]
    assert len(keys) == len(set(keys)) == reps * samples_per_inv


# ---- the disk is full ---------------------------------------------------------------

def test_disk_full_results_kept_and_resumable(driver, tmpfs):
    out = tmpfs.path / "results"
    out.mkdir()
    filler = tmpfs.fill(leave_bytes=24 * 1024)
    reps = 150
    proc = run_driver(driver, "--no-controls", "--only", "^fake_good a$", "--reps", reps, "--out", out)
    assert_clean_failure(proc, "No space left on device")
    run_dir = the_run_dir(out)
    meta, runs, _, _ = check_consistent(run_dir)
    assert meta["status"] == "running"
    assert 0 < len(runs) < reps
    filler.unlink()
    finish_with_resume(driver, run_dir, reps)


def test_disk_full_tmpdir(bin_dir, driver, tmpfs, tmp_path):
    tmpfs.fill(leave_bytes=0)
    env = dict(os.environ, TMPDIR=str(tmpfs.path))
    for args in (["lat_fs", "create", "--param", "size_kb=10"], ["bw_file_rd", "io_only"]):
        assert (bin_dir / args[0]).exists(), f"{args[0]} not built"
        proc = subprocess.run([str(bin_dir / args[0])] + args[1:] + QUICK, capture_output=True, text=True,
                              env=env, timeout=120)
        assert proc.returncode == 1, (args, proc.returncode, proc.stderr)
        assert proc.stdout == ""
        assert proc.stderr.strip().endswith("No space left on device"), proc.stderr
    # Through the driver: recorded as failed with the reason; the others run.
    out = tmp_path / "out"
    proc = run_driver(driver, "--no-controls", "--only", r"^(lat_fs create dir=default,mode=fresh,size_kb=10|lat_syscall null)$",
                      "--reps", "1", "--samples", "2", "--out", out, env=env, bin_dir=bin_dir)
    assert proc.returncode == 1, proc.stderr
    _, runs, _, _ = check_consistent(the_run_dir(out))
    status = {r["case"]: r for r in runs}
    assert status["lat_syscall null"]["status"] == "ok"
    fs = status["lat_fs create dir=default,mode=fresh,size_kb=10"]
    assert fs["status"] == "failed" and fs["reason"].endswith("No space left on device"), fs
    assert sorted(p.name for p in tmpfs.path.iterdir()) == ["filler"], "a temporary directory was left"


# ---- $TMPDIR does not exist ---------------------------------------------------------

def test_missing_tmpdir_every_variant(bin_dir, tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path / "absent"))
    bad, used = [], []
    for binary, case in one_case_per_variant(bin_dir):
        proc = subprocess.run([str(binary)] + case["args"] + QUICK, capture_output=True, text=True, env=env,
                              timeout=120)
        if proc.returncode == 1:
            used.append(case["case"])
            if not ("mkdtemp" in proc.stderr and proc.stderr.strip().endswith("No such file or directory")
                    and proc.stdout == ""):
                bad.append(f"{case['case']}: exit 1: {proc.stderr.strip()[-300:]}")
            continue
        try:
            ran_or_allowed_skip(case, proc)
        except AssertionError as e:
            bad.append(str(e))
    assert not bad, "\n".join(bad)
    assert used, "no binary used the temporary directory?"
    assert not (tmp_path / "absent").exists()


def test_missing_tmpdir_driver(driver, bin_dir, tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path / "absent"))
    out = tmp_path / "out"
    proc = run_driver(driver, "--no-controls", "--only", r"^lat_syscall (null|stat)$", "--reps", "1", "--samples", "2",
                      "--out", out, env=env, bin_dir=bin_dir)
    assert proc.returncode == 1, proc.stderr
    meta, runs, _, _ = check_consistent(the_run_dir(out))
    assert meta["status"] == "complete"
    status = {r["case"]: r for r in runs}
    assert status["lat_syscall null"]["status"] == "ok"
    assert status["lat_syscall stat"]["status"] == "failed"
    assert "mkdtemp" in status["lat_syscall stat"]["reason"]
    assert "failed: lat_syscall stat: exit 1: lat_syscall: mkdtemp" in proc.stderr


# ---- descriptor limit too low --------------------------------------------------------

def test_fd_limit_too_low_recorded_as_skip(driver, bin_dir, tmp_path):
    """The binary's exit 77 is tested in tests/bench/test_fsvm.py; here the driver's record of it."""
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    out = tmp_path / "out"
    proc = run_driver(driver, "--no-controls", "--only", r"^lat_select select fds=250,type=file$", "--reps", "1",
                      "--out", out, bin_dir=bin_dir, preexec_fn=limit)
    assert proc.returncode == 0, proc.stderr  # a skip is not a failure
    _, runs, _, _ = check_consistent(the_run_dir(out))
    assert len(runs) == 1 and runs[0]["status"] == "skipped" and runs[0]["exit_code"] == 77, runs
    assert "descriptors" in runs[0]["reason"]


# ---- SIGKILL ----------------------------------------------------------------------------

def start_until_first_sample(args, env=None, timeout=60):
    """(process, its first line), or (process, None) when it exited without
    a sample (then it has been waited for)."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    line = first_line(p, timeout)
    if not line.startswith(b"{"):
        p.wait(timeout=timeout)
        return p, None
    return p, line


# Every wait for processes to go is bounded by this; they are expected to be
# gone at once (PR_SET_PDEATHSIG, the driver's SIGKILL of the group): the
# margin is for a loaded machine, and costs nothing when they do go.
GONE_WITHIN = 60

# Two-party cases whose partner is a thread, not a process.
THREAD_PARTNERS = {("lat_futex", "thread")}


def wait_gone(pids, seconds=GONE_WITHIN):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(running(p) for p in pids):
        time.sleep(0.01)
    return [p for p in pids if running(p)]


def test_sigkill_partners_die_with_the_binary(bin_dir, tmp_path):
    """PR_SET_PDEATHSIG: every partner process dies with its binary's SIGKILL."""
    env = dict(os.environ, TMPDIR=str(tmp_path))
    tried, bad = [], []
    for binary in sorted(p for p in bin_dir.iterdir() if p.is_file() and not p.name.startswith("kbench-")):
        two_party = [c for c in list_cases(binary) if c.get("two_party")]
        if not two_party:
            continue
        case = two_party[0]
        p, line = start_until_first_sample([str(binary)] + case["args"] +
                                           ["--samples", "1000000", "--min-sample-ms", "1", "--warmup-ms", "0"],
                                           env=env)
        if line is None:  # it ended before a sample: only an allowed skip may
            err = stderr_of(p).decode(errors="replace")
            done = subprocess.CompletedProcess(p.args, p.returncode, "", err)
            assert p.returncode == 77 and allowed_skip(case, done), f"{case['case']}: exit {p.returncode}: {err}"
            continue
        kids = descendants_of(p.pid)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=GONE_WITHIN)
        p.stdout.close()
        p.stderr.close()
        if not kids:
            assert (case["bench"], case["variant"]) in THREAD_PARTNERS, f"{case['case']}: no partner process seen"
            continue
        tried.append(case["case"])
        left = wait_gone(kids)
        if left:
            bad.append(f"{case['case']}: partners {left} still running {GONE_WITHIN} s after SIGKILL")
            for k in left:
                os.kill(k, signal.SIGKILL)
    assert not bad, "\n".join(bad)
    assert any(c.startswith("lat_pipe ") for c in tried), tried


def start_driver_and_get_child(driver, bin_dir, only, out, env, ready):
    """The driver running `only` with endless samples, and its child (the
    binary) once ready(child) says the invocation is under way: events, not
    a sleep."""
    proc = subprocess.Popen([str(driver), "--no-table", "--bin-dir", str(bin_dir), "--no-controls", "--only", only, "--reps", "1",
                             "--samples", "1000000", "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate(timeout=60)
        # The invocation (not discovery's --list) runs once the run dir exists.
        if list(pathlib.Path(out).glob("*/*/*/samples.jsonl")):
            for child in children_of(proc.pid):
                if ready(child):
                    return proc, child, descendants_of(child)
        time.sleep(0.02)
    proc.kill()
    proc.communicate(timeout=60)
    pytest.fail("the benchmark did not start")


def test_driver_records_sigkilled_benchmark(driver, bin_dir, tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    out = tmp_path / "out"
    # ready once its partner process exists
    proc, child, partners = start_driver_and_get_child(driver, bin_dir, r"^lat_pipe rt @unpinned$", out, env,
                                                       lambda child: descendants_of(child))
    try:
        os.kill(child, signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    assert proc.returncode == 1, err
    assert partners and not wait_gone(partners), "a partner survived"
    meta, runs, _, _ = check_consistent(the_run_dir(out))
    assert meta["status"] == "complete"
    assert len(runs) == 1
    r = runs[0]
    assert r["status"] == "crashed" and r["signal"] == 9 and r["exit_code"] is None, r
    assert r["reason"] == "killed by signal 9 (Killed)"
    assert "crashed: lat_pipe rt @unpinned" in err


def test_driver_sigkill_leaves_no_temp_dir(driver, bin_dir, tmp_path):
    """Nothing can clean up after SIGKILL in the binary itself: the driver's
    private per-invocation TMPDIR is removed, and what was in it counted."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    out = tmp_path / "out"
    # ready once the binary's own temporary directory exists (made in its setup)
    proc, child, _ = start_driver_and_get_child(driver, bin_dir, r"^lat_syscall stat$", out, env,
                                                lambda child: list(tmp.glob("kbench-run-*/kbench-lat_syscall-*")))
    try:
        os.kill(child, signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    assert list(tmp.iterdir()) == []
    runs = [r for p in out.rglob("meta.json") for r in driver_runner.run_lines(p.parent, "runs.jsonl")]
    killed = [r for r in runs if r["signal"] == signal.SIGKILL]
    assert killed and killed[0]["temp_left_behind"] >= 1


# ---- fork fails (RLIMIT_NPROC) --------------------------------------------------------------

ROOT_ONLY = pytest.mark.skipif(not IS_ROOT, reason="needs root: RLIMIT_NPROC=2 must count a fresh uid's processes only")


@pytest.mark.parametrize("bench,variant,nproc,what", [
    # lat_proc's helper (the process its operations fork from) cannot start, or starts and cannot fork
    ("lat_proc", "fork", 1, "fork (fork helper)"), ("lat_proc", "exec", 1, "fork (fork helper)"),
    ("lat_proc", "shell", 1, "fork (fork helper)"), pytest.param("lat_proc", "fork", 2, "fork", marks=ROOT_ONLY),
    ("lat_pipe", "rt", 1, "fork (partner)")])
def test_fork_fails_under_rlimit_nproc(bin_dir, user_dir, as_nobody, bench, variant, nproc, what):
    binary = bin_dir / bench
    assert binary.exists(), f"{bench} not built"
    env = with_leak_check_off(dict(os.environ, TMPDIR=str(user_dir)))
    proc = subprocess.run([str(binary), variant] + QUICK, capture_output=True, text=True, env=env, timeout=60,
                          preexec_fn=as_nobody(nproc=nproc))
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines()[-1] == f"{bench}: {what}: Resource temporarily unavailable", proc.stderr
    assert list(user_dir.iterdir()) == []


@ROOT_ONLY
def test_driver_records_fork_failure(driver, bin_dir, user_dir, as_nobody):
    """The driver (1 process) may start a binary (2) and the binary its fork
    helper (3); the helper's fork (4), the operation, fails."""
    only_dir = user_dir / "bin"
    only_dir.mkdir()
    (only_dir / "lat_proc").symlink_to(bin_dir.resolve() / "lat_proc")
    out = user_dir / "out"
    env = with_leak_check_off(dict(os.environ, TMPDIR=str(user_dir)))
    proc = run_driver(driver, "--no-controls", "--only", "^lat_proc fork$", "--reps", "1", "--out", out, env=env,
                      bin_dir=only_dir, preexec_fn=as_nobody(nproc=3))
    assert proc.returncode == 1, proc.stderr
    _, runs, _, _ = check_consistent(the_run_dir(out))
    assert len(runs) == 1 and runs[0]["status"] == "failed", runs
    assert runs[0]["reason"] == "exit 1: lat_proc: fork: Resource temporarily unavailable", runs[0]
