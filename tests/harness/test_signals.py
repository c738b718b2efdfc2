"""Interrupting real binaries: nothing may be left behind.

kill -TERM of a running lat_proc fork (children created by the operation
itself) and of lat_syscall stat (a temporary directory) must exit 143 and
leave no process and no file. Also a failing system call reports
"binary: what: strerror" and exits 1.
"""
import os
import signal
import subprocess
import time

import pytest

from bench_runner import drain, first_line, run_bench, stderr_of


def children_of(pid):
    """(pid, start time) of every child of pid: a pid reused later is not the same child."""
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        st = stat_of(int(entry))
        if st and st[0] == pid:
            kids.append((int(entry), st[1]))
    return kids


def stat_of(pid):
    """(ppid, start time) of pid, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[1]), int(fields[19])


def alive(child):
    st = stat_of(child[0])
    return st is not None and st[1] == child[1]


def start_and_wait_for_first_sample(args, env):
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    line = first_line(proc, 60)
    assert line.startswith(b"{"), stderr_of(proc)
    drain(proc.stdout)   # or it blocks on a full pipe before the test sees a fork child
    return proc


@pytest.mark.parametrize("case,forks", [(["lat_proc", "fork"], True), (["lat_proc", "shell"], True),
                                        (["lat_syscall", "stat"], False), (["lat_syscall", "open"], False)])
def test_sigterm_leaves_nothing(bin_dir, tmp_path, case, forks):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    proc = start_and_wait_for_first_sample(
        [str(bin_dir / case[0]), case[1], "--samples", "100000", "--min-sample-ms", "1", "--warmup-ms", "0"], env)
    try:
        seen = []
        if forks:
            # The operation's children come and go: wait until one exists and
            # signal at once, so that the signal lands while it runs.
            deadline = time.monotonic() + 60
            while not seen and time.monotonic() < deadline:
                seen = children_of(proc.pid)
            assert seen, "no child of the operation seen within 60 s"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, stderr_of(proc)
    # The binary waits for its children before it exits: none may outlive it.
    assert not [c for c in seen if alive(c)], "children left behind"
    assert list(tmp_path.iterdir()) == []


def test_normal_exit_removes_temp_dir(bin_dir, tmp_path):
    for variant in ("stat", "fstat", "open"):
        proc = run_bench(bin_dir, "lat_syscall", [variant, "--iters", "5", "--samples", "2"], tmpdir=tmp_path,
                         timeout=30)
        assert proc.returncode == 0
    assert list(tmp_path.iterdir()) == []


def test_missing_tmpdir_fails_cleanly(bin_dir, tmp_path):
    proc = run_bench(bin_dir, "lat_syscall", ["stat", "--iters", "5", "--samples", "2"],
                     tmpdir=tmp_path / "absent", timeout=30)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("lat_syscall: mkdtemp ")
    assert proc.stderr.rstrip().endswith(": No such file or directory")


def test_absent_cpu_is_skipped(bin_dir):
    proc = run_bench(bin_dir, "lat_syscall", ["null", "--cpu", "4095", "--iters", "5"], timeout=30)
    assert proc.returncode == 77
    assert "skipped: CPU 4095 is not available here" in proc.stderr


def test_exec_helper_missing_is_a_failure_not_a_number(bin_dir):
    proc = run_bench(bin_dir, "lat_proc", ["exec", "--iters", "2", "--samples", "1"],
                     env={"KBENCH_EXEC_HELPER": "/nonexistent/helper"}, timeout=30)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "lat_proc: exec helper /nonexistent/helper" in proc.stderr
