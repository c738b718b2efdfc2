"""kbench-run --profile on the fake benchmarks with a fake perf first on PATH
(tests/fake_perf/perf): the profile reduced from recorded `perf script`
output (tests/data/perf/), the kernel event counts per operation, the
measured reps never profiled, perf's files removed, and the paths without
perf or without permission (a message naming what is missing, the run goes
on, its exit status unchanged). tests/system/test_profile_perf.py does the same
with the real perf and real binaries."""
import json
import math
import os
import pathlib
import re

from driver_runner import FAKES, run_dir_of, run_driver, run_lines

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
FAKE_PERF = ROOT / "tests" / "fake_perf"
PERF_DATA = ROOT / "tests" / "data" / "perf"
HANDMADE = PERF_DATA / "handmade.perf-script.txt"
RECORDED = PERF_DATA / "lat_syscall_stat.perf-script.txt"


def _env(tmp_path, script=HANDMADE, **extra):
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {"PATH": f"{FAKE_PERF}:{os.environ['PATH']}", "KBENCH_FAKE_PERF_SCRIPT": str(script),
           "KBENCH_FAKE_PERF_LOG": str(tmp_path / "perf.log"), "TMPDIR": str(tmp)}
    env.update(extra)
    return env


def _profile_run(driver, tmp_path, *args, env=None, only="^fake_good a$"):
    proc = run_driver(driver, "--only", only, "--no-controls", "--reps", 2, "--no-table", "--profile",
                      "--out", tmp_path / "out", *args, env=env if env is not None else _env(tmp_path),
                      cwd=tmp_path)
    return proc


def _frequency():
    """The sampling rate the driver asks of perf: 4000 Hz, or less if the kernel allows less."""
    try:
        return min(4000, int(pathlib.Path("/proc/sys/kernel/perf_event_max_sample_rate").read_text()))
    except (OSError, ValueError):
        return 4000


def _lines(run_dir):
    return [json.loads(ln) for ln in (run_dir / "profiles.jsonl").read_text().splitlines()]


def _perf_calls(tmp_path):
    p = tmp_path / "perf.log"
    return p.read_text().splitlines() if p.exists() else []


def _nothing_left(tmp_path, run_dir):
    assert list((tmp_path / "tmp").iterdir()) == [], "private directories left in TMPDIR"
    assert not list(run_dir.rglob("perf.data*")) and not list(tmp_path.glob("perf.data*"))


def test_profile_of_handmade_perf_output(driver, tmp_path):
    proc = _profile_run(driver, tmp_path)
    assert proc.returncode == 0, proc.stderr
    run_dir = run_dir_of(proc)
    [ln] = _lines(run_dir)
    assert ln["case"] == "fake_good a" and ln["status"] == "ok" and ln["profile_missing"] is None
    p = ln["profile"]
    assert p["event"] == "cpu-clock"          # the fake's perf stat: cycles not supported
    assert (p["samples"], p["kernel_samples"], p["user_samples"]) == (4, 3, 1)
    # shares are period-weighted: 250000, 250000, 500000, 250000 of 1250000
    assert p["kernel_share"] == 0.8
    k = {s["symbol"]: s for s in p["kernel_symbols"]}
    assert k["link_path_walk.part.0"]["share"] == 0.4 and k["link_path_walk.part.0"]["samples"] == 2
    assert k["link_path_walk.part.0"]["inclusive_share"] == 0.4
    # an unresolved function is named after its nearest resolved caller
    assert k["[unknown] in do_syscall_64"]["share"] == 0.4 and k["[unknown] in do_syscall_64"]["samples"] == 1
    assert k["do_syscall_64"]["share"] == 0 and k["do_syscall_64"]["inclusive_share"] == 0.8
    assert k["path_lookupat"]["inclusive_share"] == 0.4
    assert [s["symbol"] for s in p["kernel_symbols"]][:2] == ["[unknown] in do_syscall_64", "link_path_walk.part.0"]
    u = {s["symbol"]: s for s in p["user_symbols"]}
    run = u["(anonymous namespace)::FileOps::run(unsigned long)"]
    assert run["share"] == 0.2 and run["dso"] == "lat_syscall"
    assert u["__GI___fstatat64"]["inclusive_share"] == 0.2 and u["__GI___fstatat64"]["dso"] == "libc.so.6"
    assert p["kernel_other_share"] == 0 and p["user_other_share"] == 0
    chains = {c["symbol"]: c for c in p["chains"]}
    assert chains["[unknown] in do_syscall_64"]["top_callers"] == [
        {"callers": ["do_syscall_64"], "share_of_symbol": 1}]
    assert chains["link_path_walk.part.0"]["top_callers"] == [
        {"callers": ["path_lookupat", "do_syscall_64"], "share_of_symbol": 0.5},
        {"callers": ["path_lookupat", "do_syscall_64", "__GI___fstatat64"], "share_of_symbol": 0.5}]
    assert chains["(anonymous namespace)::FileOps::run(unsigned long)"]["top_callers"] == [
        {"callers": ["main"], "share_of_symbol": 1}]
    assert p["min_samples"] == 2000 and p["enough_samples"] is False
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["profile"]["cases"] == ["fake_good a"] and meta["profile"]["unavailable"] is None
    assert meta["profile"]["event"] == "cpu-clock" and meta["options"]["profile"] is True
    _nothing_left(tmp_path, run_dir)


def test_measured_reps_are_never_profiled(driver, tmp_path):
    proc = _profile_run(driver, tmp_path)
    assert proc.returncode == 0, proc.stderr
    run_dir = run_dir_of(proc)
    records = run_lines(run_dir, "runs.jsonl")
    assert len(records) == 2 and all(r["args"][0] == "a" for r in records)
    records_calls = [c for c in _perf_calls(tmp_path) if c.startswith("record")]
    # the probe (`-- true`), then the profiled invocations only: no --rep
    assert records_calls[0].endswith("-- true")
    profiled = records_calls[1:]
    assert profiled and all("--rep" not in c.split() for c in profiled)
    assert all(re.search(r" -g .*-N .*-o \S+/kbench-profile-\w+/perf\.data -- \S+/fake_good a ", c) for c in profiled)
    # samples of the profiled invocation are not measurements
    samples = run_lines(run_dir, "samples.jsonl")
    assert {s["rep_idx"] for s in samples} == {0, 1} and len(samples) == 2 * 3


def test_events_per_operation_beside_the_profile(driver, tmp_path):
    proc = _profile_run(driver, tmp_path)
    [ln] = _lines(run_dir_of(proc))
    ev = ln["events"]
    # fake_good honours --samples (5 in a profiled invocation), 1000 iters each
    assert ln["ops"] == 5000 and ev["ops"] == 5000
    assert ln["args"][-4:-2] == ["--samples", "5"]
    for group in ("vmstat", "softirqs", "interrupts"):
        assert isinstance(ev[group], dict)
        assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in ev[group].values())
    assert "total" in ev["interrupts"]
    readable = os.access("/proc/slabinfo", os.R_OK)
    assert (ev["slab_active_objs"] is not None) == readable
    # a fake that makes no system call still sees the machine's page faults
    # (its shell's start): counted per op, so at most a few per op
    assert 0 < ev["vmstat"].get("pgfault", 0) < 100


def test_recorded_perf_output_parsed_like_an_independent_reading(driver, tmp_path):
    """The real recording (lat_syscall stat, perf 6.1, cpu-clock): the
    driver's shares equal those counted here from the text."""
    proc = _profile_run(driver, tmp_path, env=_env(tmp_path, script=RECORDED))
    assert proc.returncode == 0, proc.stderr
    p = _lines(run_dir_of(proc))[0]["profile"]
    leaves, n = {}, 0
    text = RECORDED.read_text()
    for block in text.split("\n\n"):
        lines = [x for x in block.splitlines() if x.strip()]
        if not lines:
            continue
        n += 1
        frames = [ln.strip().split(" ", 1)[1].rsplit(" (", 1) for ln in lines[1:]]
        sym, dso = frames[0]
        kernel = dso.startswith("[kernel")
        if sym == "[unknown]":
            sym = next((f"[unknown] in {s}" for s, _ in frames[1:] if s != "[unknown]"), sym)
        key = (kernel, sym)
        leaves[key] = leaves.get(key, 0) + 1
    assert p["samples"] == n
    assert p["kernel_samples"] == sum(v for (k, _), v in leaves.items() if k)
    for s in p["kernel_symbols"]:
        if s["samples"]:
            assert s["samples"] == leaves[(True, s["symbol"])]
            assert abs(s["share"] - s["samples"] / n) < 1e-6
    top = max((v, s) for (k, s), v in leaves.items() if k)[1]
    assert p["kernel_symbols"][0]["symbol"] == top


def test_too_few_samples_gives_a_longer_second_attempt(driver, tmp_path):
    proc = _profile_run(driver, tmp_path, "--profile-samples", "4000")
    assert proc.returncode == 0, proc.stderr
    [ln] = _lines(run_dir_of(proc))
    calls = [c for c in _perf_calls(tmp_path) if c.startswith("record")][1:]
    ms = [int(re.search(r"--min-sample-ms (\d+)", c).group(1)) for c in calls]
    # 1.5 x 4000 samples / F Hz of timed work over 5 samples, then 1.3 x
    # 4000/4 times longer, capped at 12 s; 4 samples of the fixture are never enough
    first = 1.5 * 4000 / _frequency()
    assert ms == [round(first * 200), round(min(12.0, first * 1.3 * 1000) * 200)] and ln["attempts"] == 2
    assert ln["profile"]["enough_samples"] is False and "fewer than 4000" in proc.stderr


def test_without_perf_the_run_goes_on_with_event_counts(driver, tmp_path):
    env = _env(tmp_path, PATH="/nonexistent-kbench")
    proc = _profile_run(driver, tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "perf not found on PATH" in proc.stderr and "linux-perf" in proc.stderr
    run_dir = run_dir_of(proc)
    [ln] = _lines(run_dir)
    assert ln["profile"] is None and "linux-perf" in ln["profile_missing"]
    assert ln["events"]["ops"] == 5000
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["profile"]["cases"] == [] and "perf not found" in meta["profile"]["unavailable"]
    assert any("no profiles" in w for w in meta["warnings"])
    _nothing_left(tmp_path, run_dir)


def test_perf_record_refused_names_perf_event_paranoid(driver, tmp_path):
    proc = _profile_run(driver, tmp_path, env=_env(tmp_path, KBENCH_FAKE_PERF_FAIL="record"))
    assert proc.returncode == 0, proc.stderr
    assert "perf record fails (Error: Access to performance monitoring" in proc.stderr
    assert "perf_event_paranoid" in proc.stderr and "the run goes on without them" in proc.stderr
    run_dir = run_dir_of(proc)
    [ln] = _lines(run_dir)
    assert ln["profile"] is None and "perf_event_paranoid" in ln["profile_missing"]
    # the probe only: no profiled invocation ran under perf
    assert [c.split()[0] for c in _perf_calls(tmp_path)] == ["--version", "stat", "record"]
    _nothing_left(tmp_path, run_dir)


def test_perf_that_does_not_run_names_the_package(driver, tmp_path):
    proc = _profile_run(driver, tmp_path, env=_env(tmp_path, KBENCH_FAKE_PERF_FAIL="version"))
    assert proc.returncode == 0, proc.stderr
    assert "does not run (E: perf not found for kernel 0.0)" in proc.stderr
    assert "install the linux-perf that matches this kernel" in proc.stderr


def test_exit_status_unchanged_by_profiling(driver, tmp_path):
    """A failing case still makes the run exit 1, with or without perf;
    its profiled invocation is recorded as failed."""
    for env in (_env(tmp_path), _env(tmp_path, PATH="/nonexistent-kbench")):
        proc = _profile_run(driver, tmp_path, env=env, only="^fake_(good a|fail)")
        assert proc.returncode == 1, proc.stderr
        lines = {ln["case"]: ln for ln in _lines(run_dir_of(proc))}
        assert lines["fake_good a"]["status"] == "ok"
        failed = [ln for c, ln in lines.items() if c.startswith("fake_fail")]
        assert failed and all(ln["status"] == "failed" and ln["profile"] is None for ln in failed)


def test_resume_profiles_only_what_is_missing(driver, tmp_path):
    proc = _profile_run(driver, tmp_path, only="^fake_good")
    run_dir = run_dir_of(proc)
    lines = _lines(run_dir)
    assert sorted(ln["case"] for ln in lines) == ["fake_good a", "fake_good b size=64"]
    # as if interrupted after the first profile
    (run_dir / "profiles.jsonl").write_text(json.dumps(lines[0]) + "\n")
    meta = json.loads((run_dir / "meta.json").read_text())
    meta["status"] = "interrupted"
    (run_dir / "meta.json").write_text(json.dumps(meta))
    (tmp_path / "perf.log").unlink()
    again = run_driver(driver, "--resume", run_dir, bin_dir=None, env=_env(tmp_path), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert sorted(ln["case"] for ln in _lines(run_dir)) == sorted(ln["case"] for ln in lines)
    profiled = [c for c in _perf_calls(tmp_path) if c.startswith("record") and "fake_good" in c]
    # (two attempts: the fixture's 4 samples are too few)
    assert profiled and all("/fake_good b --param size=64 " in c for c in profiled)
    meta = json.loads((run_dir / "meta.json").read_text())
    assert sorted(meta["profile"]["cases"]) == sorted(ln["case"] for ln in lines)


def test_bad_profile_samples_is_a_usage_error(driver, tmp_path):
    for bad in ("0", "x", "9"):
        proc = run_driver(driver, "--profile", "--profile-samples", bad, "--out", tmp_path)
        assert proc.returncode == 2 and "--profile-samples: expected an integer" in proc.stderr
    proc = run_driver(driver, "--profile=yes", "--out", tmp_path)
    assert proc.returncode == 2 and "--profile: takes no value" in proc.stderr
