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

from bench_runner import run_bench


def children_of(pid):
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            kids.append(int(entry))
    return kids


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return True
    except OSError:
        return False


def start_and_wait_for_first_sample(args, env):
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    line = proc.stdout.readline()
    assert line.startswith(b"{"), proc.stderr.read()
    return proc


@pytest.mark.parametrize("case", [["lat_proc", "fork"], ["lat_proc", "shell"], ["lat_syscall", "stat"],
                                  ["lat_syscall", "open"]])
def test_sigterm_leaves_nothing(bin_dir, tmp_path, case):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    proc = start_and_wait_for_first_sample(
        [str(bin_dir / case[0]), case[1], "--samples", "100000", "--min-sample-ms", "1", "--warmup-ms", "0"], env)
    seen = set()
    # Sample the children for a moment: fork children come and go.
    deadline = time.time() + 0.3
    while time.time() < deadline:
        seen.update(children_of(proc.pid))
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr.read()
    assert not [p for p in seen if alive(p)], "children left behind"
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
