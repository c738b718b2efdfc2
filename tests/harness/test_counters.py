"""--counters on real binaries: keys, nulls for missing counters, errors.

No assertion depends on the machine having hardware counters: a hardware
counter is either a whole number or null; a forced failure
(KBENCH_FAIL_COUNTERS) must give null and one line on stderr.
"""
import json
import os

import pytest

from bench_runner import run_samples

ALL = ["instructions", "cycles", "branches", "branch_misses", "cache_references", "cache_misses",
       "l1d_read_misses", "dtlb_misses", "task_clock_ns", "context_switches", "cpu_migrations",
       "page_faults"]


def perf_usable():
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            return int(f.read()) < 3 or os.geteuid() == 0
    except OSError:
        return False


def run(bin_dir, args, env=None):
    return run_samples(bin_dir, "lat_syscall", args, env=env, timeout=60)


def test_all_counters_present_as_number_or_null(bin_dir):
    proc, samples = run(bin_dir, ["null", "--counters", "--iters", "200", "--samples", "3"])
    assert proc.returncode == 0, proc.stderr
    assert len(samples) == 3
    for s in samples:
        assert s["counter_scope"] in ("user", "user+kernel", "none")
        for name in ALL:
            assert name in s
            assert s[name] is None or (isinstance(s[name], int) and s[name] >= 0)
    if samples[0]["counter_scope"] == "none":  # no perf events at all: said once
        assert proc.stderr.count("counters not available: perf_event_open") == 1
        return
    missing = [n for n in ALL if samples[0][n] is None]
    for name in missing:  # each missing counter named once, not per sample
        assert proc.stderr.count(f"counter {name} not available") == 1
    if perf_usable():
        assert isinstance(samples[0]["task_clock_ns"], int)


def test_forced_failure_is_null_and_reported_once(bin_dir):
    proc, samples = run(bin_dir, ["null", "--counters=task_clock_ns,page_faults", "--iters", "50",
                                  "--samples", "2"], env={"KBENCH_FAIL_COUNTERS": "page_faults"})
    assert proc.returncode == 0, proc.stderr
    assert all(s["page_faults"] is None for s in samples)
    assert proc.stderr.count("counter page_faults not available") == 1
    assert set(ALL) - {"task_clock_ns", "page_faults"} & set(samples[0]) == set()


def test_without_counters_no_counter_keys(bin_dir):
    proc, samples = run(bin_dir, ["null", "--iters", "50", "--samples", "1"])
    assert proc.returncode == 0
    assert not set(ALL) & set(samples[0])
    assert "counter_scope" not in samples[0]


def test_unknown_counter_is_a_usage_error(bin_dir):
    proc, samples = run(bin_dir, ["null", "--counters=cycles,nope", "--iters", "5"])
    assert proc.returncode == 2
    assert proc.stderr.startswith("lat_syscall: --counters: unknown counter 'nope'")
    assert samples == []


def test_fork_children_are_counted(bin_dir):
    """inherit=1: page faults of forked children are in the parent's counts."""
    if not perf_usable():
        pytest.skip("perf events not usable: perf_event_paranoid is 3 or more and not root")
    proc, _ = run_samples(bin_dir, "lat_proc", ["fork", "--counters=page_faults", "--iters", "20", "--samples", "2"],
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    for line in proc.stdout.splitlines():
        s = json.loads(line)
        # Every child writes to at least one copy-on-write page (its stack).
        assert s["page_faults"] >= 20


def test_kernel_without_perf_events_all_null_said_once(bin_dir):
    """CONFIG_PERF_EVENTS=n (simulated: KBENCH_MISSING=perf_events): the case
    runs, every counter is null, counter_scope is "none", one line says why."""
    proc, samples = run(bin_dir, ["null", "--counters", "--iters", "50", "--samples", "2"],
                        env={"KBENCH_MISSING": "perf_events"})
    assert proc.returncode == 0, proc.stderr
    assert len(samples) == 2
    for s in samples:
        assert s["counter_scope"] == "none"
        assert all(s[name] is None for name in ALL)
    assert proc.stderr.count("lat_syscall: counters not available: perf_event_open: Function not implemented "
                             "(every counter null)") == 1
    assert "counter instructions not available" not in proc.stderr


def test_kernel_counts_refused_gives_user_scope(bin_dir):
    """perf_event_paranoid >= 2 for an unprivileged user (simulated:
    KBENCH_MISSING=perf_kernel refuses kernel-mode counting with EACCES):
    user-mode counts, recorded as counter_scope "user"."""
    proc, samples = run(bin_dir, ["null", "--counters=task_clock_ns,page_faults", "--iters", "50", "--samples", "2"],
                        env={"KBENCH_MISSING": "perf_kernel"})
    assert proc.returncode == 0, proc.stderr
    if not perf_usable():
        assert all(s["counter_scope"] == "none" for s in samples)
        return
    assert all(s["counter_scope"] == "user" for s in samples)
    assert all(isinstance(s["task_clock_ns"], int) for s in samples)


def test_failing_task_clock_alone_does_not_fail_the_probe(bin_dir):
    """KBENCH_FAIL_COUNTERS=task_clock_ns fails that counter only, not the
    probe that decides the scope."""
    proc, samples = run(bin_dir, ["null", "--counters=task_clock_ns,page_faults", "--iters", "50", "--samples", "1"],
                        env={"KBENCH_FAIL_COUNTERS": "task_clock_ns"})
    assert proc.returncode == 0, proc.stderr
    assert samples[0]["task_clock_ns"] is None
    if perf_usable():
        assert samples[0]["counter_scope"] in ("user", "user+kernel")
        assert isinstance(samples[0]["page_faults"], int)
