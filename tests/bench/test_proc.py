"""lat_proc's fork, fork_mem, exec and shell fork from a small static helper
(src/helper/fork_helper.c), not from the harness's process: the helper makes
exactly the operations asked (--iters), is the only process lat_proc itself
forks, is smaller than lat_proc, never outlives it, and a helper that is
missing, speaks another protocol or dies is a failure with its reason, never
a number. fork_harness still forks from lat_proc itself."""
import os
import re
import signal
import subprocess

import pytest

from bench_runner import drain, first_line, fixed, run_bench, run_samples, stderr_of, strace_works

needs_strace = pytest.mark.skipif(not strace_works(), reason="strace missing or not allowed")
CREATED = re.compile(r"^lat_proc: fork helper created (\d+) processes$", re.M)


@pytest.mark.parametrize("args", [["fork"], ["exec"], ["shell"], ["fork_mem", "--param", "parent_mb=1"]])
def test_the_helper_makes_exactly_the_operations_asked(bin_dir, tmp_path, args):
    iters, samples = 3, 4
    proc, got = run_samples(bin_dir, "lat_proc", args + fixed(iters, samples), tmpdir=tmp_path)
    if proc.returncode == 77:
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, proc.stderr
    assert [s["iters"] for s in got] == [iters] * samples
    # the setup probe's one operation, then every sample's
    assert CREATED.findall(proc.stderr) == [str(1 + iters * samples)]


def test_the_helper_reports_only_in_iters_mode(bin_dir, tmp_path):
    proc = run_bench(bin_dir, "lat_proc", ["fork", "--samples", "2", "--min-sample-ms", "1"], tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not CREATED.search(proc.stderr)


def _clones(trace_dir):
    """[number of fork/clone calls that made a process] of each process that
    made one, from strace -ff's files (one per process: no line of one is
    split by another's)."""
    out = []
    for f in trace_dir.iterdir():
        n = sum(1 for line in f.read_text().splitlines()
                if re.match(r"(clone3?|fork|vfork)\(.*\)\s+=\s+\d+$", line) and "CLONE_THREAD" not in line)
        if n:
            out.append(n)
    return sorted(out)


@needs_strace
def test_strace_the_operations_fork_from_the_helper_not_from_lat_proc(bin_dir, tmp_path):
    trace = tmp_path / "trace"
    trace.mkdir()
    iters, samples = 4, 3
    proc = subprocess.run(["strace", "-ff", "-qq", "-e", "trace=clone,clone3,fork,vfork", "-o", str(trace / "t"),
                           str(bin_dir / "lat_proc"), "fork"] + fixed(iters, samples),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # lat_proc forks once (the helper); the helper forks every operation
    assert _clones(trace) == [1, 1 + iters * samples]


def test_the_helper_is_smaller_than_lat_proc(bin_dir, tmp_path):
    _, small = run_samples(bin_dir, "lat_proc", ["fork"] + fixed(2, 3), tmpdir=tmp_path)
    _, big = run_samples(bin_dir, "lat_proc", ["fork_harness"] + fixed(2, 3), tmpdir=tmp_path)
    assert small and big
    assert max(s["parent_rss_kb"] for s in small) < min(s["parent_rss_kb"] for s in big)
    assert max(s["parent_vm_kb"] for s in small) < min(s["parent_vm_kb"] for s in big)


def test_the_sample_holds_the_helpers_cpu_time(bin_dir, tmp_path):
    """lat_proc itself only waits for the helper's answer: a sample's CPU
    time and faults are the helper's and its children's (so the case is
    never taken for one that waits on something)."""
    proc, got = run_samples(bin_dir, "lat_proc", ["fork"] + fixed(20, 3), tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for s in got:
        # each child writes to a copy-on-write page (its stack): its fault is the helper's child's
        assert s["minflt"] >= 20 and s["utime_ns"] + s["stime_ns"] > 0 and s["partner_cpu_ns"] is None, s


def _children(pid):
    kids = []
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                with open(f"/proc/{e}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        kids.append(int(e))
            except (OSError, IndexError, ValueError):
                pass
    return kids


def test_a_helper_killed_mid_run_is_a_failure_with_its_reason(bin_dir, tmp_path):
    p = subprocess.Popen([str(bin_dir / "lat_proc"), "fork", "--samples", "100000", "--min-sample-ms", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, TMPDIR=str(tmp_path)))
    try:
        assert first_line(p).startswith(b"{"), stderr_of(p)
        drain(p.stdout)
        (helper,) = _children(p.pid)
        os.kill(helper, signal.SIGKILL)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=60)
    err = p.stderr.read().decode()
    assert p.returncode == 1, err
    assert re.search(r"lat_proc: fork helper \S+ killed by signal 9", err), err


@pytest.mark.parametrize("script, words", [
    ("", "no such file"),                                            # missing
    ("#!/bin/sh\nexit 3\n", "exited with status 3"),                  # dies before it is ready
    ("#!/bin/sh\nhead -c 96 /dev/zero >&4\n", "speaks another protocol"),   # another version
])
def test_a_helper_that_is_not_right_is_a_failure(bin_dir, tmp_path, script, words):
    helper = tmp_path / "helper"
    if script:
        helper.write_text(script)
        helper.chmod(0o755)
    proc = run_bench(bin_dir, "lat_proc", ["fork"] + fixed(2, 2), env={"KBENCH_FORK_HELPER": str(helper)})
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith(f"lat_proc: fork helper {helper}") and words in proc.stderr.lower(), proc.stderr
