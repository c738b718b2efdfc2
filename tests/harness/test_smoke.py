"""Smoke test: every binary in build/bin, every case of its --list.

Each case runs with --samples 2, a small --iters and --warmup-ms 0; it must
exit 0 (or 77, skipped, with a reason), and every line on stdout must be a
sample with the required keys, the case named in --list and the exact
iteration count. Also: --help exits 0 and a bad option exits 2.
"""
import concurrent.futures
import json
import os
import subprocess

import pytest

REQUIRED = {
    "schema": int, "run_id": str, "bench": str, "variant": str, "params": str,
    "placement": str, "case": str, "metric": str, "control": bool, "rep_idx": int,
    "sample_idx": int, "iters": int, "elapsed_ns": int, "ns_per_op": (int, float),
    "t_start_ns": int, "utime_ns": int, "stime_ns": int, "nvcsw": int,
    "nivcsw": int, "minflt": int, "majflt": int,
}
# Noise markers (src/harness/noise.hpp): an int where the kernel has the
# file they come from, else null.
NOISE = {"run_delay_ns": "/proc/self/schedstat", "steal_ns": "/proc/stat",
         "migrations": "/proc/self/sched"}
FORBIDDEN = {"sample", "count", "min", "size"}  # shadow pandas attributes
ITERS = 3
SAMPLES = 2


def bench_binaries(bin_dir):
    return sorted(p for p in bin_dir.iterdir()
                  if p.is_file() and os.access(p, os.X_OK) and not p.name.startswith("kbench-"))


def list_cases(binary):
    out = subprocess.run([str(binary), "--list"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, f"{binary.name} --list: {out.stderr}"
    cases = [json.loads(line) for line in out.stdout.splitlines()]
    assert cases, f"{binary.name} --list printed no case"
    return cases


def run_case(binary, case, tmp_path):
    args = [str(binary)] + case["args"] + [
        "--samples", str(SAMPLES), "--iters", str(ITERS), "--warmup-ms", "0",
        "--run-id", "smoke", "--rep", "1"]
    env = dict(os.environ, TMPDIR=str(tmp_path))
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    return args, proc


def check_result(case, args, proc):
    where = " ".join(args)
    assert proc.returncode in (0, 77), f"{where}: exit {proc.returncode}: {proc.stderr}"
    lines = proc.stdout.splitlines()
    if proc.returncode == 77:
        assert "skipped:" in proc.stderr, f"{where}: exit 77 without a reason"
        assert not lines, f"{where}: skipped case printed samples"
        return
    assert len(lines) == SAMPLES, f"{where}: {len(lines)} lines"
    for i, line in enumerate(lines):
        s = json.loads(line)
        for key, typ in REQUIRED.items():
            assert key in s, f"{where}: no {key}"
            assert isinstance(s[key], typ), f"{where}: {key}={s[key]!r}"
        for key, path in NOISE.items():
            assert key in s, f"{where}: no {key}"
            if os.path.exists(path):
                assert isinstance(s[key], int) and s[key] >= 0, f"{where}: {key}={s[key]!r}"
            else:
                assert s[key] is None, f"{where}: {key}={s[key]!r}"
        assert not FORBIDDEN & set(s), f"{where}: forbidden key"
        assert s["schema"] == 1
        assert s["case"] == case["case"] and s["bench"] == case["bench"]
        assert s["variant"] == case["variant"] and s["params"] == case["params"]
        assert s["placement"] == case["placement"] and s["metric"] == case["metric"]
        assert s["control"] is case["control"]
        assert s["run_id"] == "smoke" and s["rep_idx"] == 1 and s["sample_idx"] == i
        assert s["iters"] == ITERS
        assert s["elapsed_ns"] >= 0
        assert s["metric"] in ("latency", "bandwidth")
        if s["metric"] == "bandwidth":
            assert isinstance(s.get("bytes_per_op"), int) and s["bytes_per_op"] > 0


def test_every_case_of_every_binary(bin_dir, tmp_path):
    binaries = bench_binaries(bin_dir)
    assert binaries, "no benchmark binaries built"
    jobs = []
    for b in binaries:
        for c in list_cases(b):
            jobs.append((b, c))
    failures = []
    # Two at a time: the machine has two CPUs and nothing here is timed.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {pool.submit(run_case, b, c, tmp_path): c for b, c in jobs}
        for fut in concurrent.futures.as_completed(futures):
            case = futures[fut]
            args, proc = fut.result()
            try:
                check_result(case, args, proc)
            except AssertionError as e:
                failures.append(str(e))
    assert not failures, "\n".join(failures[:20])
    assert not list(tmp_path.iterdir()), f"left behind: {list(tmp_path.iterdir())}"


@pytest.mark.parametrize("flag", ["--help"])
def test_help_exits_zero(bin_dir, flag):
    for b in bench_binaries(bin_dir):
        proc = subprocess.run([str(b), flag], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, b.name
        assert proc.stdout.startswith(f"usage: {b.name} ")


def test_bad_option_exits_two_with_a_message(bin_dir):
    for b in bench_binaries(bin_dir):
        proc = subprocess.run([str(b), "--no-such-option"], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2, b.name
        assert proc.stderr.startswith(f"{b.name}: unknown option '--no-such-option'\nusage: "), proc.stderr
        assert proc.stdout == ""
        proc = subprocess.run([str(b), "--samples", "many"], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2, b.name


def test_list_names_cases_consistently(bin_dir):
    for b in bench_binaries(bin_dir):
        for c in list_cases(b):
            assert c["bench"] == b.name
            expect = f'{c["bench"]} {c["variant"]}'
            if c["params"]:
                expect += " " + c["params"]
            if c["two_party"]:
                expect += " @" + c["placement"]
            assert c["case"] == expect
            assert c["args"][0] == c["variant"]


# Controls (work no kernel can change, see src/bench/ctl_machine.cpp) are
# exactly ctl_machine's cases: the driver interleaves whatever says control.
CONTROLS = {"ctl_machine": {"chain", "alu", "copy"}}


def test_control_cases_are_exactly_the_machine_controls(bin_dir):
    names = {b.name for b in bench_binaries(bin_dir)}
    assert set(CONTROLS) <= names, "ctl_machine not built"
    for b in bench_binaries(bin_dir):
        cases = list_cases(b)
        for c in cases:
            assert isinstance(c.get("control"), bool), f"{b.name}: {c}"
        if b.name in CONTROLS:
            assert {c["variant"] for c in cases} == CONTROLS[b.name]
            assert all(c["control"] is True for c in cases), b.name
            assert all(not c["two_party"] and c["metric"] == "latency" for c in cases), b.name
        else:
            assert all(c["control"] is False for c in cases), b.name


@pytest.mark.parametrize("args", [
    ["lat_mem_rd", "stride", "--param", "stride=7"],
    ["bw_mem", "rd", "--param", "size_kb=0"],
    ["bw_mem", "rd", "--param", "size_kb=abc"],
    ["lat_fs", "create", "--param", "mode=bogus"],
    ["lat_pathwalk", "positive", "--param", "depth=0"],
    ["lat_select", "select", "--param", "fds=0"],
    ["lat_ctx", "ring", "--param", "procs=1"],
    ["lat_udp", "rt", "--param", "size=0"],
    ["lat_pipe", "rt", "--param", "x=1"],
])
def test_bad_parameter_value_is_a_usage_error(bin_dir, tmp_path, args):
    if not (bin_dir / args[0]).exists():
        pytest.fail(f"{args[0]} not built")
    proc = subprocess.run([str(bin_dir / args[0])] + args[1:] + ["--iters", "1", "--samples", "1"],
                          capture_output=True, text=True, timeout=30, env=dict(os.environ, TMPDIR=str(tmp_path)))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(args[0] + ": ")
    assert proc.stdout == ""
    assert list(tmp_path.iterdir()) == []
