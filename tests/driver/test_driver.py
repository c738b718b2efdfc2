"""kbench-run, driven over the fake benchmarks in tests/fake_bench.

Every test runs the real driver binary on small shell-script benchmarks:
layout and schema of the run directory, status per invocation, exit codes,
the seeded shuffle, selection, --list, resume after SIGINT, two drivers at
once. Nothing here asserts on timings.
"""
import json
import os
import pathlib
import re
import signal
import subprocess
import time

import pytest

from driver_runner import FAKES, run_dir_of, run_driver, run_lines


META_KEYS = [
    "schema", "run_id", "suite_version", "host", "kernel_release", "kernel_version",
    "kernel_cmdline", "boot_id", "arch", "cpu_model", "cpu_count", "cpus_online", "mem_total_kb",
    "clocksource", "governor", "boost", "smt", "mitigations", "thp", "aslr",
    "virtualization", "perf_event_paranoid", "cache", "compiler", "cxxflags", "options",
    "seed", "started_utc", "ended_utc", "loadavg_before", "loadavg_after",
    "busy_processes", "swap_before", "swap_after", "warnings", "status",
]
RUN_KEYS = {
    "schema": int, "run_id": str, "case": str, "bench": str, "variant": str, "params": str,
    "placement": str, "metric": str, "rep_idx": int, "args": list, "status": str,
    "exit_code": (int, type(None)), "signal": (int, type(None)), "duration_ms": (int, float),
    "n_samples": int, "stderr_tail": str, "reason": str,
}
ALL_CASES = {"fake_good a", "fake_good b size=64", "fake_fail open", "fake_skip raw",
             "fake_hang pipe @same", "fake_crash null"}


def load_run(run_dir):
    run_dir = pathlib.Path(run_dir)
    meta = json.loads((run_dir / "meta.json").read_text())
    return meta, run_lines(run_dir, "runs.jsonl"), run_lines(run_dir, "samples.jsonl")


def order_by_rep(runs):
    reps = {}
    for r in runs:
        reps.setdefault(r["rep_idx"], []).append(r["case"])
    return reps


# fake_hang's invocations run into this; every other fake ends within
# moments, and this leaves them room on a loaded machine.
TIMEOUT_S = 5


@pytest.fixture(scope="module")
def full_run(driver, tmp_path_factory):
    """All six fakes, 2 reps, TIMEOUT_S timeout: shared by the schema tests."""
    out = tmp_path_factory.mktemp("full")
    proc = run_driver(driver, "--reps", 2, "--timeout", TIMEOUT_S, "--out", out)
    return out, proc


def test_layout_and_meta(full_run):
    out, proc = full_run
    run_dir = run_dir_of(proc)
    rel = run_dir.relative_to(out)
    host, kernel, run_id = rel.parts
    assert host == os.uname().nodename and kernel == os.uname().release
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{6}", run_id)
    assert sorted(p.name for p in run_dir.iterdir()) == ["cases.jsonl", "meta.json", "runs.jsonl.gz", "samples.jsonl.gz"]
    meta, _, _ = load_run(run_dir)
    for key in META_KEYS:
        assert key in meta, key
    assert meta["schema"] == 1 and meta["run_id"] == run_id
    assert meta["status"] == "complete"
    assert meta["ended_utc"] and meta["started_utc"]
    assert isinstance(meta["seed"], int)
    assert meta["options"]["reps"] == 2 and meta["options"]["timeout_s"] == TIMEOUT_S
    assert isinstance(meta["warnings"], list)
    assert all(isinstance(w, str) for w in meta["warnings"])
    for w in meta["warnings"]:
        assert "warning: " + w in proc.stderr
    assert meta["thp"] is None or set(meta["thp"]) == {"enabled", "defrag"}
    with open("/proc/sys/kernel/random/boot_id") as f:
        assert meta["boot_id"] == f.read().strip()
    for c in meta["cache"] or []:
        assert set(c) == {"level", "type", "size_kb", "line_bytes"}
    assert meta["list_failures"] == []


def test_runs_statuses_and_exit(full_run):
    _, proc = full_run
    assert proc.returncode == 1  # some cases failed
    meta, runs, _ = load_run(run_dir_of(proc))
    assert len(runs) == len(ALL_CASES) * 2
    for r in runs:
        for key, typ in RUN_KEYS.items():
            assert isinstance(r[key], typ), (key, r)
        assert r["run_id"] == meta["run_id"]
        # The driver's default of 3 samples per process (reps, not samples, buy power).
        assert r["args"][-6:] == ["--run-id", meta["run_id"], "--rep", str(r["rep_idx"]), "--samples", "3"]
        # One-party cases are pinned to the CPU the driver chose and recorded.
        one_party = " @" not in r["case"]
        assert ("--cpu" in r["args"]) == one_party
        if one_party:
            assert r["args"][r["args"].index("--cpu") + 1] == str(meta["options"]["pin_cpu"])
            assert r["placement"] == "pinned"
    by_case = {}
    for r in runs:
        by_case.setdefault(r["case"], []).append(r)
    assert set(by_case) == ALL_CASES
    for case, recs in by_case.items():
        assert sorted(r["rep_idx"] for r in recs) == [0, 1]
    expect = {"fake_good a": "ok", "fake_good b size=64": "ok", "fake_fail open": "failed",
              "fake_skip raw": "skipped", "fake_hang pipe @same": "timeout",
              "fake_crash null": "crashed"}
    for case, status in expect.items():
        assert {r["status"] for r in by_case[case]} == {status}, case
    for r in by_case["fake_fail open"]:
        assert r["exit_code"] == 1 and "open /nonexistent/file" in r["reason"]
        assert "fake_fail: starting" in r["stderr_tail"]
    for r in by_case["fake_skip raw"]:
        assert r["exit_code"] == 77 and r["reason"] == "needs root"
    for r in by_case["fake_crash null"]:
        assert r["signal"] == signal.SIGSEGV and r["exit_code"] is None
        assert r["dropped_partial_bytes"] > 0 and r["n_samples"] == 0
    for r in by_case["fake_hang pipe @same"]:
        assert r["exit_code"] is None or r["exit_code"] != 0
    assert "6 cases: 2 ok, 1 skipped, 3 failed" in proc.stderr


def test_samples(full_run):
    _, proc = full_run
    meta, runs, samples = load_run(run_dir_of(proc))
    # Only fake_good prints samples: 2 cases x 2 reps x 3 samples.
    assert len(samples) == 12
    assert {s["case"] for s in samples} == {"fake_good a", "fake_good b size=64"}
    assert all(s["run_id"] == meta["run_id"] for s in samples)
    keys = {(s["case"], s["rep_idx"], s["sample_idx"]) for s in samples}
    assert len(keys) == 12
    ok = {(r["case"], r["rep_idx"]): r["n_samples"] for r in runs if r["status"] == "ok"}
    for (case, rep), n in ok.items():
        assert n == sum(1 for s in samples if s["case"] == case and s["rep_idx"] == rep)
    # The table on stderr: the median of the rep medians and their range
    # (ns = 2 + rep: 2 and 3 ns; bandwidth 64 bytes / 2 ns = 32000 MB/s and
    # 64 / 3 = 21333 MB/s); the values themselves: test_fallback_table_values.
    assert re.search(r"^fake_good b size=64 +26667 +21333\.\.32000 +MB/s +2$", proc.stderr, re.M), proc.stderr
    assert re.search(r"^fake_good a +2\.5 +2\.\.3 +ns/op +2$", proc.stderr, re.M), proc.stderr


def test_every_rep_runs_every_case_once(full_run):
    _, proc = full_run
    _, runs, _ = load_run(run_dir_of(proc))
    for rep, cases in order_by_rep(runs).items():
        assert sorted(cases) == sorted(ALL_CASES), rep


def test_skipped_only_is_success_and_no_table(driver, tmp_path):
    proc = run_driver(driver, "--reps", 1, "--only", "fake_good|fake_skip", "--out", tmp_path,
                      "--no-table")
    assert proc.returncode == 0, proc.stderr
    assert "3 cases: 2 ok, 1 skipped, 0 failed" in proc.stderr
    assert "reps min..max" not in proc.stderr


def test_seed_reproducible(driver, tmp_path):
    """The recorded seed gives the same order of every rep again; another
    seed gives other orders; and inside one run the reps' orders differ (a
    driver that never shuffles, or shuffles every rep alike, fails here).
    Fixed seeds: deterministic, not a matter of chance."""
    args = ["--reps", 4, "--only", "fake_good|fake_skip|fake_fail", "--out", tmp_path]
    first = run_driver(driver, *args)
    seed = load_run(run_dir_of(first))[0]["seed"]
    again = run_driver(driver, *args, "--seed", seed)
    orders = [order_by_rep(load_run(run_dir_of(p))[1]) for p in (first, again)]
    assert orders[0] == orders[1]
    assert load_run(run_dir_of(again))[0]["seed"] == seed
    one, two = (order_by_rep(load_run(run_dir_of(run_driver(driver, *args, "--seed", s)))[1]) for s in (1, 2))
    assert one != two
    for by_rep in (one, two):
        assert sorted(by_rep) == [0, 1, 2, 3]
        assert len({tuple(cases) for cases in by_rep.values()}) >= 3, by_rep
    assert len({run_dir_of(p) for p in (first, again)}) == 2


def test_shuffle_gives_every_order_evenly(driver, tmp_path):
    """120 reps of 3 cases (seed 1): each of the 6 orders about 20 times,
    and every case about 40 times in each position. A biased shuffle
    (Sattolo's off-by-one gives only the 2 cyclic orders; a modulo bias or
    a stuck first pick skews the positions) fails here."""
    proc = run_driver(driver, "--reps", 120, "--seed", 1, "--only", "fake_good|fake_skip", "--no-table",
                      "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    by_rep = order_by_rep(load_run(run_dir_of(proc))[1])
    assert len(by_rep) == 120
    orders = {}
    at = {}
    for cases in by_rep.values():
        assert sorted(cases) == ["fake_good a", "fake_good b size=64", "fake_skip raw"]
        orders[tuple(cases)] = orders.get(tuple(cases), 0) + 1
        for pos, case in enumerate(cases):
            at[(case, pos)] = at.get((case, pos), 0) + 1
    assert len(orders) == 6 and all(8 <= n <= 32 for n in orders.values()), orders
    assert len(at) == 9 and all(25 <= n <= 55 for n in at.values()), at


def test_only_and_skip(driver, tmp_path):
    proc = run_driver(driver, "--reps", 1, "--only", "^fake_good", "--skip", "size=",
                      "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    meta, runs, _ = load_run(run_dir_of(proc))
    assert [r["case"] for r in runs] == ["fake_good a"]
    assert meta["options"]["only"] == "^fake_good" and meta["options"]["skip"] == "size="
    proc = run_driver(driver, "--only", "no such case", "--out", tmp_path)
    assert proc.returncode == 1 and "no cases to run" in proc.stderr


def test_samples_and_quick_are_passed_on(driver, tmp_path):
    proc = run_driver(driver, "--only", "fake_good a", "--samples", 5, "--reps", 1,
                      "--out", tmp_path)
    _, runs, samples = load_run(run_dir_of(proc))
    assert runs[0]["args"][-2:] == ["--samples", "5"] and len(samples) == 5
    proc = run_driver(driver, "--only", "fake_good a", "--quick", "--out", tmp_path)
    meta, runs, _ = load_run(run_dir_of(proc))
    assert len(runs) == 2 and meta["options"]["quick"] is True
    assert meta["options"]["timeout_s"] == 20
    assert runs[0]["args"][-6:] == ["--samples", "3", "--min-sample-ms", "1", "--warmup-ms", "1"]


def test_counters_are_passed_on(driver, tmp_path):
    proc = run_driver(driver, "--only", "fake_good a", "--counters=task_clock_ns,cycles", "--reps", 1,
                      "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    meta, runs, _ = load_run(run_dir_of(proc))
    assert runs[0]["args"][-1] == "--counters=task_clock_ns,cycles"
    assert meta["options"]["counters"] == "task_clock_ns,cycles"
    proc = run_driver(driver, "--only", "fake_good a", "--counters", "--reps", 1, "--out", tmp_path)
    _, runs, _ = load_run(run_dir_of(proc))
    assert runs[0]["args"][-1] == "--counters"
    proc = run_driver(driver, "--counters=cycles;rm", "--out", tmp_path)
    assert proc.returncode == 2 and "--counters: expected a comma-separated list" in proc.stderr


def test_list(driver, tmp_path):
    proc = run_driver(driver, "--list", "--skip", "hang", "--reps", 3, "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert sorted(lines[:-1]) == sorted(ALL_CASES - {"fake_hang pipe @same"})
    assert re.match(r"# 5 cases x 3 reps = 15 invocations; estimated \S+ \(rough", lines[-1])
    assert list(tmp_path.iterdir()) == []  # --list runs and writes nothing


def test_list_failure_is_recorded_not_fatal(driver, tmp_path):
    bins = tmp_path / "bin"
    bins.mkdir()
    (bins / "fake_good").symlink_to(FAKES / "fake_good")
    (bins / "fake_badlist").symlink_to(FAKES / "broken" / "fake_badlist")
    (bins / "kbench-helper").symlink_to(FAKES / "fake_fail")  # never run: kbench- prefix
    (bins / "notes.txt").write_text("not executable\n")
    proc = run_driver(driver, "--reps", 1, "--out", tmp_path / "out", bin_dir=bins)
    assert proc.returncode == 1
    assert "fake_badlist --list: failed" in proc.stderr
    meta, runs, _ = load_run(run_dir_of(proc))
    assert [f["binary"] for f in meta["list_failures"]] == ["fake_badlist"]
    assert "cannot enumerate" in meta["list_failures"][0]["reason"]
    assert {r["case"] for r in runs} == {"fake_good a", "fake_good b size=64"}
    assert {r["status"] for r in runs} == {"ok"}
    # A binary whose --list failed declares nothing.
    assert [json.loads(ln)["bench"] for ln in (run_dir_of(proc) / "cases.jsonl").read_text().splitlines()] == [
        "fake_good", "fake_good"]


def list_output(binary):
    out = subprocess.run([str(binary), "--list"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return [ln for ln in out.stdout.splitlines() if ln.strip()]


def check_cases_jsonl(run_dir, binaries):
    """cases.jsonl holds every --list line of `binaries` (in name order),
    verbatim, and one line for every case the driver ran."""
    lines = (run_dir / "cases.jsonl").read_text().splitlines()
    assert lines == [ln for b in sorted(binaries, key=lambda p: p.name) for ln in list_output(b)]
    names = [json.loads(ln)["case"] for ln in lines]
    _, runs, _ = load_run(run_dir)
    assert runs
    for r in runs:
        assert names.count(r["case"]) == 1, r["case"]
    return lines


def test_cases_jsonl_records_every_declaration(driver, tmp_path):
    proc = run_driver(driver, "--only", "^fake_good a$", "--reps", 1, "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    run_dir = run_dir_of(proc)
    fakes = [p for p in FAKES.iterdir() if p.is_file()]
    lines = check_cases_jsonl(run_dir, fakes)
    # Every discovered case, not only the ones --only selected.
    assert {json.loads(ln)["case"] for ln in lines} == ALL_CASES
    # A resume rewrites it when it is missing and keeps it otherwise.
    (run_dir / "cases.jsonl").unlink()
    assert run_driver(driver, "--resume", run_dir, bin_dir=None).returncode == 0
    assert (run_dir / "cases.jsonl").read_text().splitlines() == lines
    (run_dir / "cases.jsonl").write_text("kept\n")
    assert run_driver(driver, "--resume", run_dir, bin_dir=None).returncode == 0
    assert (run_dir / "cases.jsonl").read_text() == "kept\n"


def test_cases_jsonl_of_the_real_binaries(driver, bin_dir, tmp_path):
    proc = run_driver(driver, "--only", "^lat_syscall null$", "--no-controls", "--quick", "--reps", 1,
                      "--no-table", "--out", tmp_path, bin_dir=bin_dir)
    assert proc.returncode == 0, proc.stderr
    run_dir = run_dir_of(proc)
    binaries = [p for p in bin_dir.iterdir()
                if p.is_file() and os.access(p, os.X_OK) and not p.name.startswith("kbench-")]
    lines = check_cases_jsonl(run_dir, binaries)
    _, runs, _ = load_run(run_dir)
    assert [r["case"] for r in runs] == ["lat_syscall null"]
    for ln in lines:
        d = json.loads(ln)
        assert {"category", "category_rank", "rank", "direction", "unit", "summary", "curve"} <= set(d)


def wait_for(pred, limit=20.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_resume_after_sigint(driver, tmp_path):
    """SIGINT while an invocation runs: every fake_good invocation of rep 1
    or later blocks and says so (KBENCH_FAKE_BLOCK_FROM_REP), so the signal
    is sent on that event, inside an invocation, never on a guess of time."""
    blocked = tmp_path / "blocked"
    out = tmp_path / "out"
    env = dict(os.environ, KBENCH_FAKE_BLOCK_FROM_REP="1", KBENCH_FAKE_BLOCKED=str(blocked))
    cmd = [str(driver), "--bin-dir", str(FAKES), "--only", "fake_good|fake_skip", "--reps", "3", "--seed", "1",
           "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert wait_for(lambda: blocked.exists() or proc.poll() is not None, limit=60)
        assert blocked.exists(), proc.communicate(timeout=60)
        run_dir = next(out.glob("*/*/*"))
        # While it runs, the directory is locked against a concurrent resume.
        busy = run_driver(driver, "--resume", run_dir, bin_dir=None)
        assert busy.returncode == 1 and "in use by another kbench-run" in busy.stderr
        proc.send_signal(signal.SIGINT)
        stdout, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert pathlib.Path(stdout.strip()) == run_dir
    assert "--resume " + str(run_dir) in err
    # Interrupted or not, the run's JSON Lines end compressed, nothing half-done beside them.
    compressed = ["cases.jsonl", "meta.json", "runs.jsonl.gz", "samples.jsonl.gz"]
    assert sorted(p.name for p in run_dir.iterdir()) == compressed
    meta, runs, samples = load_run(run_dir)
    assert meta["status"] == "interrupted" and meta["ended_utc"]
    finished_before = {(r["case"], r["rep_idx"]) for r in runs if r["status"] != "interrupted"}
    # All of rep 0, and of rep 1 at most fake_skip (it never blocks).
    assert {(c, 0) for c in ("fake_good a", "fake_good b size=64", "fake_skip raw")} <= finished_before
    assert finished_before - {(c, 0) for c in ("fake_good a", "fake_good b size=64")} <= {
        ("fake_skip raw", 0), ("fake_skip raw", 1)}
    interrupted = [r for r in runs if r["status"] == "interrupted"]
    assert len(interrupted) == 1, runs
    assert interrupted[0]["case"].startswith("fake_good ") and interrupted[0]["rep_idx"] == 1
    assert interrupted[0]["n_samples"] == 0

    proc2 = run_driver(driver, "--resume", run_dir, bin_dir=None)  # no blocking now
    assert proc2.returncode == 0, proc2.stderr
    assert run_dir_of(proc2) == run_dir
    assert sorted(p.name for p in run_dir.iterdir()) == compressed
    meta, runs, samples = load_run(run_dir)
    assert meta["status"] == "complete" and len(meta["resumed_utc"]) == 1
    done = [(r["case"], r["rep_idx"]) for r in runs if r["status"] != "interrupted"]
    assert len(done) == len(set(done)) == 9  # 3 cases x 3 reps, each exactly once
    assert len(runs) == 9 + len(interrupted)
    keys = [(s["case"], s["rep_idx"], s["sample_idx"]) for s in samples]
    assert len(keys) == len(set(keys)) == 2 * 3 * 3
    # The resumed part ran only what was missing, with the recorded options.
    resumed = runs[len(runs) - (9 - len(finished_before)):]
    assert {(r["case"], r["rep_idx"]) for r in resumed} == set(done) - finished_before
    # A complete run resumes to nothing more.
    proc3 = run_driver(driver, "--resume", run_dir, bin_dir=None)
    assert proc3.returncode == 0 and len(load_run(run_dir)[1]) == len(runs)


def process_group(pgid):
    """The processes of a process group that are still running (not zombies)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members


def test_timeout_kills_the_whole_process_group(driver, tmp_path):
    """fake_hang runs in its own process group with a `sleep 300` partner:
    after its timeout nothing of that group runs on (SIGTERM, then SIGKILL
    to the group; a partner the binary left behind must not keep running
    into the next measurement)."""
    proc = run_driver(driver, "--reps", 1, "--timeout", 1, "--only", "fake_hang", "--out", tmp_path)
    assert proc.returncode == 1, proc.stderr
    _, runs, _ = load_run(run_dir_of(proc))
    assert [r["status"] for r in runs] == ["timeout"]
    m = re.search(r"fake_hang: pid (\d+), partner (\d+) started", runs[0]["stderr_tail"])
    assert m, runs[0]["stderr_tail"]
    pgid, partner = int(m.group(1)), int(m.group(2))
    try:
        # Signals take effect at once; the bound is for a loaded machine.
        assert wait_for(lambda: not process_group(pgid), limit=60), f"still running in group {pgid}: {process_group(pgid)}"
        assert partner not in process_group(pgid)
    finally:
        try:
            os.killpg(pgid, signal.SIGKILL)  # what a failing driver left behind
        except ProcessLookupError:
            pass


def test_two_drivers_at_once(driver, tmp_path):
    cmd = [str(driver), "--bin-dir", str(FAKES), "--only", "fake_good", "--reps", "2",
           "--out", str(tmp_path)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    dirs = {pathlib.Path(out.strip()) for out, _ in results}
    assert len(dirs) == 2
    for d in dirs:
        meta, runs, samples = load_run(d)
        assert meta["status"] == "complete"
        assert len(runs) == 4 and len(samples) == 12
        assert {s["run_id"] for s in samples} == {meta["run_id"]}


@pytest.mark.parametrize("args", [
    ["--reps", "0"], ["--reps", "x"], ["--reps"], ["--bogus"], ["--only", "("],
    ["--timeout", "-1"], ["--seed", "-3"], ["--quick=1"], ["stray"],
    ["--resume", "somewhere", "--reps", "3"],
])
def test_bad_options_exit_2(driver, tmp_path, args):
    proc = run_driver(driver, *args, "--out", tmp_path, bin_dir=None)
    assert proc.returncode == 2
    assert proc.stdout == ""
    first = proc.stderr.splitlines()[0]
    assert first.startswith("kbench-run: ") and "usage: kbench-run" in proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("regex", ["a" + "+" * 40, ".*{32767}", "((x{255}){255}){255}"])
def test_regex_too_costly_to_compile_is_refused(driver, tmp_path, regex):
    """glibc's regcomp can need gigabytes for stacked repetitions: such a
    pattern is tried in a memory-limited child and refused, exit 2."""
    proc = run_driver(driver, "--list", "--only", regex, "--out", tmp_path, bin_dir=None)
    assert proc.returncode == 2
    assert proc.stderr.startswith("kbench-run: --only: regular expression too costly to compile")


def test_help(driver):
    proc = run_driver(driver, "--help", bin_dir=None)
    assert proc.returncode == 0 and "--resume" in proc.stdout


def test_json_reading_and_args_intact(driver, tmp_path):
    proc = run_driver(driver, "--reps", 1, "--out", tmp_path, bin_dir=FAKES / "odd")
    assert proc.returncode == 0, proc.stderr
    _, runs, samples = load_run(run_dir_of(proc))
    assert len(runs) == 1
    r = runs[0]
    assert r["case"] == 'fake_odd q name=a"b \u00e9\U0001F600'
    assert r["params"] == 'name=a"b'
    assert r["args"][:3] == ["q", "with space", "tab\there"]
    # "hello..." and "[1,2,3]" are not sample objects; the blank line is ignored.
    assert r["status"] == "ok" and r["n_samples"] == 1 and r["dropped_lines"] == 2
    assert [s["case"] for s in samples] == [r["case"]]


# ---------------------------------------------------------------- controls and budget

FAKE_TEMPLATE = r'''#!/bin/sh
# A fake for the control/budget/table tests: cases from $LIST, ns/op from
# $VALUE (an expression of the rep index r and the sample index i).
if [ "$1" = "--list" ]; then
  cat <<'LIST'
@LIST@
LIST
  exit 0
fi
variant=$1; shift
run_id=""; rep=0; samples=3
while [ $# -gt 0 ]; do
  case $1 in
    --run-id) run_id=$2; shift ;;
    --rep) rep=$2; shift ;;
    --samples) samples=$2; shift ;;
  esac
  shift
done
r=$rep
i=0
while [ $i -lt "$samples" ]; do
  ns=$((@VALUE@))
  echo "{\"schema\":1,\"run_id\":\"$run_id\",\"bench\":\"@BENCH@\",\"variant\":\"$variant\",\"params\":\"\",\"placement\":\"pinned\",\"case\":\"@BENCH@ $variant\",\"metric\":\"@METRIC@\",\"control\":@CONTROL@,\"rep_idx\":$rep,\"sample_idx\":$i,\"iters\":1000,\"elapsed_ns\":$((ns * 1000)),\"ns_per_op\":$ns,@BYTES@\"cpu\":0,\"partner_cpu\":null,\"t_start_ns\":$i}"
  i=$((i + 1))
done
exit 0
'''


def write_fake(bin_dir, bench, variants, control, value, bytes_per_op=None):
    """bin_dir/bench: cases `bench VARIANT`, ns/op = the shell expression
    `value` of r (rep) and i (sample); bandwidth if bytes_per_op."""
    metric = "bandwidth" if bytes_per_op else "latency"
    lines = "\n".join(json.dumps({"bench": bench, "variant": v, "params": "", "placement": "unpinned",
                                  "case": f"{bench} {v}", "metric": metric, "control": control,
                                  "args": [v]}) for v in variants)
    text = (FAKE_TEMPLATE.replace("@LIST@", lines).replace("@VALUE@", value).replace("@BENCH@", bench)
            .replace("@CONTROL@", "true" if control else "false").replace("@METRIC@", metric)
            .replace("@BYTES@", f'\\"bytes_per_op\\":{bytes_per_op},' if bytes_per_op else ""))
    path = bin_dir / bench
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture
def ctl_bins(tmp_path):
    """Two measured cases (m a, m b; their value grows with the rep) and two
    control cases (ctl x, ctl y)."""
    bins = tmp_path / "bin"
    bins.mkdir()
    write_fake(bins, "m", ["a", "b"], False, "100 + r")
    write_fake(bins, "ctl", ["x", "y"], True, "50")
    return bins


def test_controls_threaded_through_every_rep(driver, ctl_bins, tmp_path):
    proc = run_driver(driver, "--reps", 3, "--control-every", 1, "--seed", 7, "--out", tmp_path / "o",
                      "--headline-reps", 33, bin_dir=ctl_bins)
    assert proc.returncode == 0, proc.stderr
    meta, runs, samples = load_run(run_dir_of(proc))
    assert meta["options"]["control_every"] == 1
    assert meta["options"]["headline_reps"] == 33     # recorded, for --resume
    seq = [(r["case"], r["rep_idx"], r["control"], r["round"]) for r in runs]
    measured = [s for s in seq if not s[2]]
    controls = [s for s in seq if s[2]]
    assert sorted(measured) == sorted((c, rep, False, 0) for c in ("m a", "m b") for rep in range(3))
    # 2 cases per rep, one control before each and one after the last:
    # 3 slots per rep, numbered 0..8 through the run, cycling x, y.
    assert [s[1] for s in controls] == list(range(9))
    assert [s[0] for s in controls] == ["ctl x" if i % 2 == 0 else "ctl y" for i in range(9)]
    # In the order they ran: control, case, control, case, control per rep.
    kinds = ["c" if s[2] else "m" for s in seq]
    assert kinds == ["c", "m", "c", "m", "c"] * 3
    # Their samples carry the flag and are in samples.jsonl like any case's.
    assert {s["case"] for s in samples if s.get("control")} == {"ctl x", "ctl y"}
    # Progress counts reps of the first pass, controls inside their rep.
    assert [ln.split(",")[0] for ln in proc.stderr.splitlines() if " done, " in ln] == [
        f"kbench-run: rep {i}/3 done" for i in (1, 2, 3)]


def test_only_keeps_controls_and_no_controls_drops_them(driver, ctl_bins, tmp_path):
    proc = run_driver(driver, "--reps", 1, "--only", "^m a$", "--out", tmp_path / "o", bin_dir=ctl_bins)
    assert proc.returncode == 0, proc.stderr
    _, runs, _ = load_run(run_dir_of(proc))
    assert {r["case"] for r in runs} == {"m a", "ctl x", "ctl y"}
    proc = run_driver(driver, "--reps", 1, "--no-controls", "--out", tmp_path / "p", bin_dir=ctl_bins)
    assert proc.returncode == 0, proc.stderr
    meta, runs, _ = load_run(run_dir_of(proc))
    assert {r["case"] for r in runs} == {"m a", "m b"}
    assert meta["options"]["control_every"] is None


def test_pin_cpu_none_leaves_one_party_cases_unpinned(driver, ctl_bins, tmp_path):
    proc = run_driver(driver, "--reps", 1, "--pin-cpu", "none", "--out", tmp_path / "o", bin_dir=ctl_bins)
    assert proc.returncode == 0, proc.stderr
    meta, runs, _ = load_run(run_dir_of(proc))
    assert meta["options"]["pin_cpu"] is None
    assert all("--cpu" not in r["args"] for r in runs)


def test_budget_adds_reps_to_noisy_cases_only(driver, tmp_path):
    bins = tmp_path / "bin"
    bins.mkdir()
    # "noisy a" alternates 100 / 150 ns between reps: it can never detect 3%
    # with few reps; "steady s" gives 100 ns every rep: nothing to gain.
    write_fake(bins, "noisy", ["a"], False, "100 + (r % 2) * 50")
    write_fake(bins, "steady", ["s"], False, "100")
    # 10 s: the first pass (6 shell fakes) leaves a round's second even on a
    # loaded machine; the rounds end sooner, at 60 reps of "noisy a".
    proc = run_driver(driver, "--reps", 3, "--budget", 10, "--no-controls", "--out", tmp_path / "o",
                      bin_dir=bins)
    assert proc.returncode == 0, proc.stderr
    meta, runs, _ = load_run(run_dir_of(proc))
    reps = {}
    for r in runs:
        reps.setdefault(r["case"], []).append(r["rep_idx"])
    assert len(reps["noisy a"]) >= len(reps["steady s"]) >= 3
    assert sorted(reps["noisy a"]) == list(range(len(reps["noisy a"])))
    assert len(reps["steady s"]) <= 10   # steady: never past the 10 reps a precise case gets
    assert meta["budget_rounds"] >= 1 and meta["options"]["budget_s"] == 10
    assert {r["round"] for r in runs if r["case"] == "noisy a"} == set(range(meta["budget_rounds"] + 1))
    assert re.search(r"round 1: \d+ more reps of 2 cases", proc.stderr)


def test_budget_stops_when_every_case_is_precise(driver, tmp_path):
    """Steady cases get reps up to 10 (tight reps may all come from one
    stretch of the machine), then no more: each round a third of the 7
    planned, rounded up (3 of 7, 2 of 4, 1 of 2, the last one)."""
    bins = tmp_path / "bin"
    bins.mkdir()
    write_fake(bins, "steady", ["s", "t"], False, "100")
    proc = run_driver(driver, "--reps", 3, "--budget", 60, "--no-controls", "--out", tmp_path / "o",
                      bin_dir=bins)
    assert proc.returncode == 0, proc.stderr
    meta, runs, _ = load_run(run_dir_of(proc))
    assert sorted(r["rep_idx"] for r in runs if r["case"] == "steady s") == list(range(10))
    assert len(runs) == 20 and meta["budget_rounds"] == 4
    per_round = [sum(1 for r in runs if r["case"] == "steady s" and r["round"] == k) for k in range(5)]
    assert per_round == [3, 3, 2, 1, 1]
    assert "round 1: 6 more reps of 2 cases" in proc.stderr
    assert "no more rounds" in proc.stderr


def test_fallback_table_values(driver, tmp_path):
    """The driver's own table on data with a known answer. Latency, 4 reps
    of 3 samples: [10 10 10] [20 20 1] [30 30 2] [90 90 90]; rep medians
    10 20 30 90, so the median of the rep medians is 25 (the median of all
    samples is 20, the mean of the rep medians 37.5, the middle ones 20 and
    30). Bandwidth, 1000 bytes per op: ns [1 2 4] [8 8 8] [1 1 1] [4 4 4],
    MB/s = 1000 / ns * 1000: rep medians 500000 125000 1000000 250000, so
    375000 (converting the median ns of 3 instead gives 333333)."""
    bins = tmp_path / "bin"
    bins.mkdir()
    write_fake(bins, "lat", ["k"], False, "r == 3 ? 90 : (r > 0 && i == 2 ? r : 10 * (r + 1))")
    write_fake(bins, "bw", ["k"], False, "r == 0 ? 1 << i : (r == 1 ? 8 : (r == 2 ? 1 : 4))", bytes_per_op=1000)
    proc = run_driver(driver, "--reps", 4, "--no-controls", "--seed", 1, "--out", tmp_path / "o", bin_dir=bins)
    assert proc.returncode == 0, proc.stderr
    rows = [ln.split() for ln in proc.stderr.splitlines() if ln.startswith(("lat k ", "bw k "))]
    assert sorted(rows) == [["bw", "k", "375000", "125000..1000000", "MB/s", "4"],
                            ["lat", "k", "25", "10..90", "ns/op", "4"]], proc.stderr
    assert "MB/s = 10^6 bytes per second" in proc.stderr   # which MB: said under the table


@pytest.mark.parametrize("args,msg", [
    (["--budget", "0"], "--budget: expected a number of seconds > 0"),
    (["--budget", "x"], "--budget: expected a number of seconds > 0"),
    (["--pin-cpu", "-1"], "--pin-cpu: expected an integer"),
    (["--control-every", "0"], "--control-every: expected an integer"),
    (["--headline-reps", "61"], "--headline-reps: expected an integer in 2..60, got '61'"),
    (["--headline-reps", "1"], "--headline-reps: expected an integer in 2..60, got '1'"),
    (["--no-controls=1"], "--no-controls: takes no value"),
])
def test_new_option_errors(driver, args, msg, tmp_path):
    proc = run_driver(driver, *args, "--out", tmp_path)
    assert proc.returncode == 2 and msg in proc.stderr


def test_label_names_the_kernel_in_meta(driver, tmp_path):
    proc = run_driver(driver, "--reps", "1", "--only", "^fake_good", "--no-controls", "--no-table", "--out",
                      tmp_path, "--label", "patched-2.1")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((run_dir_of(proc) / "meta.json").read_text())
    assert meta["label"] == "patched-2.1" and meta["options"]["label"] == "patched-2.1"
    assert "kernel_config" in meta   # an object {source, fnv1a64}, or null without a config file
    kc = meta["kernel_config"]
    assert kc is None or (kc["source"] and re.fullmatch(r"[0-9a-f]{16}", kc["fnv1a64"]))
    plain = run_driver(driver, "--reps", "1", "--only", "^fake_good", "--no-controls", "--no-table", "--out",
                       tmp_path / "plain")
    assert json.loads((run_dir_of(plain) / "meta.json").read_text())["label"] is None
    for bad in ("", "has space", "a/b", "x" * 41):
        r = run_driver(driver, "--label", bad, "--out", tmp_path / "bad")
        assert r.returncode == 2 and "--label:" in r.stderr, (bad, r.stderr)
