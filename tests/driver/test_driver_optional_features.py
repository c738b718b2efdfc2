"""kbench-run on kernels and systems without optional features: its end lines
and table name every skip and failure of every case with its reason, and
the features a case ran without; meta.json is written, with nulls, where
/proc and /sys are missing.

Absences are simulated with KBENCH_MISSING (the names are listed at
simulated_missing in src/harness/sys.hpp), one CPU with an affinity mask. Nothing here asserts on timings.
"""
import json
import os

from driver_runner import FAKES, run_dir_of, run_driver, run_lines


def said(proc):
    """The driver's own lines on stderr, without the 'kbench-run: ' prefix."""
    return [ln[len("kbench-run: "):] for ln in proc.stderr.splitlines() if ln.startswith("kbench-run: ")]


def test_end_lines_name_every_skip_and_failure_with_its_reason(driver, tmp_path):
    # fake_hang runs into the timeout; the other fakes end within moments (5 s: room on a loaded machine).
    proc = run_driver(driver, "--reps", 2, "--timeout", 5, "--out", tmp_path, "--seed", 1, bin_dir=FAKES)
    assert proc.returncode == 1
    lines = said(proc)
    assert "skipped: fake_skip raw: needs root (2 of 2 invocations)" in lines
    assert ("failed: fake_fail open: exit 1: fake_fail: open /nonexistent/file: No such file or directory "
            "(2 of 2 invocations)") in lines
    assert any(ln.startswith("timeout: fake_hang pipe @same: still running after 5 s") for ln in lines), lines
    assert any(ln.startswith("crashed: fake_crash null: killed by signal") for ln in lines), lines
    # failures first, then skips; then the counts
    order = [ln.split(":")[0] for ln in lines if ln.split(":")[0] in ("failed", "timeout", "crashed", "skipped")]
    assert order.index("skipped") == len(order) - 1
    # the table too
    assert any(ln.startswith("fake_skip raw") and "skipped: needs root" in ln for ln in proc.stderr.splitlines())


FLAKY = """#!/bin/sh
# skips on rep 1 only (a CPU that went away), ok otherwise
if [ "$1" = "--list" ]; then
  echo '{"bench":"flaky","variant":"x","params":"","placement":"unpinned","case":"flaky x","metric":"latency","args":["x"]}'
  exit 0
fi
rep=0
while [ $# -gt 0 ]; do [ "$1" = --rep ] && rep=$2; shift; done
if [ "$rep" = 1 ]; then echo "flaky: skipped: CPU 7 went offline (sched_setaffinity: EINVAL)" >&2; exit 77; fi
echo "{\\"schema\\":1,\\"run_id\\":\\"\\",\\"bench\\":\\"flaky\\",\\"variant\\":\\"x\\",\\"params\\":\\"\\",\\"placement\\":\\"pinned\\",\\"case\\":\\"flaky x\\",\\"metric\\":\\"latency\\",\\"control\\":false,\\"rep_idx\\":$rep,\\"sample_idx\\":0,\\"iters\\":10,\\"elapsed_ns\\":100,\\"ns_per_op\\":10,\\"thp\\":\\"unavailable\\"}"
"""


def test_a_case_skipped_in_some_reps_only_is_named_too(driver, tmp_path):
    bins = tmp_path / "bin"
    bins.mkdir()
    (bins / "flaky").write_text(FLAKY)
    (bins / "flaky").chmod(0o755)
    proc = run_driver(driver, "--reps", 3, "--no-controls", "--out", tmp_path / "o", bin_dir=bins)
    assert proc.returncode == 0, proc.stderr
    lines = said(proc)
    assert "skipped: flaky x: CPU 7 went offline (sched_setaffinity: EINVAL) (1 of 3 invocations; 2 ok)" in lines
    assert 'ran without thp: flaky x (every sample says "thp": "unavailable")' in lines
    assert "1 case: 1 ok, 0 skipped, 0 failed" in lines


def test_ran_without_thp_is_in_the_end_lines_and_the_table(driver, bin_dir, tmp_path):
    """The PREEMPT_RT kernel's case: lat_pagefault anon without THP."""
    proc = run_driver(driver, "--quick", "--no-controls", "--only", "^lat_pagefault anon$", "--out", tmp_path,
                      bin_dir=bin_dir, env={"KBENCH_MISSING": "thp", "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert 'ran without thp: lat_pagefault anon (every sample says "thp": "unavailable")' in said(proc)
    row = [ln for ln in proc.stderr.splitlines() if ln.startswith("lat_pagefault anon ")]
    assert len(row) == 1 and row[0].endswith("(without thp)"), row


def test_one_cpu_guest_cross_cases_skip_with_the_reason(driver, bin_dir, tmp_path):
    """A one-CPU machine: @cross is listed with a second CPU that is not
    there; it skips with the reason, everything else runs, exit 0."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    proc = run_driver(driver, "--quick", "--no-controls", "--only", "^lat_pipe rt", "--out", tmp_path,
                      bin_dir=bin_dir, env={"TMPDIR": str(tmp_path)},
                      preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    assert proc.returncode == 0, proc.stderr
    runs = run_lines(run_dir_of(proc), "runs.jsonl")
    by_case = {}
    for r in runs:
        by_case.setdefault(r["case"], set()).add(r["status"])
    assert by_case == {"lat_pipe rt @same": {"ok"}, "lat_pipe rt @unpinned": {"ok"}, "lat_pipe rt @cross": {"skipped"}}
    assert (f"skipped: lat_pipe rt @cross: CPU {cpu + 1} is not available here (online and allowed: {cpu}) "
            "(2 of 2 invocations)") in said(proc)
    assert "3 cases: 2 ok, 1 skipped, 0 failed" in said(proc)


def test_without_proc_and_sys_meta_is_null_and_the_run_completes(driver, bin_dir, tmp_path):
    """An initramfs or container without /proc and /sys mounted: every meta
    key read from them is null, the warnings that need them are not made,
    the benchmarks run with null noise markers."""
    proc = run_driver(driver, "--quick", "--no-controls", "--only", "^lat_syscall null$|^lat_pipe rt @same$",
                      "--out", tmp_path, bin_dir=bin_dir,
                      env={"KBENCH_MISSING": "procfs,sysfs", "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    run_dir = run_dir_of(proc)
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "complete"
    for key in ("kernel_cmdline", "cpu_model", "cpus_online", "mem_total_kb", "clocksource", "governor", "boost",
                "smt", "mitigations", "aslr", "perf_event_paranoid", "cache", "loadavg_before", "loadavg_after",
                "busy_processes", "busy_processes_after", "swap_before", "swap_after"):
        assert meta[key] is None, (key, meta[key])
    assert meta["thp"] == {"enabled": None, "defrag": None}
    assert meta["virtualization"]["vm"] is None
    assert meta["kernel_release"] and meta["host"]          # uname needs neither
    samples = run_lines(run_dir, "samples.jsonl")
    assert samples and all(s["run_delay_ns"] is None and s["migrations"] is None for s in samples)
