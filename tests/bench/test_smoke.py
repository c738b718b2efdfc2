"""Smoke test: every binary in build/bin, every case of its --list (in two
tests: each variant's first and last case, which both passes of make test
run, and the cases between them, which only the plain pass runs).

Each case runs with --samples 2, a small --iters and --warmup-ms 0; it must
exit 0 (or 77, skipped, only where bench_runner.ALLOWED_SKIPS names the
case and its reason holds on this machine), and every line on stdout must be a
sample with the required keys, the case named in --list and the exact
iteration count, and the arithmetic of every sample must hold
(bench_runner.check_sample_invariants: ns_per_op = elapsed_ns / iters,
bytes_per_op from the parameters, ...), as must the stderr line's figures
(check_human_line). Also: --help exits 0 and a bad option exits 2.
"""
import concurrent.futures
import json
import os
import re
import socket
import subprocess

import pytest

from bench_runner import (allowed_skip, check_human_line, check_sample_invariants, fixed, list_cases,
                          ran_or_allowed_skip, run_bench)

REQUIRED = {
    "schema": int, "run_id": str, "bench": str, "variant": str, "params": str,
    "placement": str, "case": str, "metric": str, "control": bool, "rep_idx": int,
    "sample_idx": int, "iters": int, "elapsed_ns": int, "ns_per_op": (int, float),
    "cpu": (int, type(None)), "partner_cpu": (int, type(None)), "t_start_ns": int, "utime_ns": int, "stime_ns": int, "nvcsw": int,
    "nivcsw": int, "minflt": int, "majflt": int,
}
# Noise markers (src/harness/internal/noise.hpp): an int where the kernel has the
# file they come from, else null.
NOISE = {"run_delay_ns": "/proc/self/schedstat", "steal_ns": "/proc/stat",
         "migrations": "/proc/self/sched"}
FORBIDDEN = {"sample", "count", "min", "size"}  # shadow pandas attributes
ITERS = 3
SAMPLES = 2
NUM = r"\d+(?:\.\d+)?"
TIME = rf"{NUM} (?:ns|µs|ms|s)"
RATE = rf"{NUM} (?:B|kB|MB|GB|TB)/s"
HUMAN = {"latency": rf"{TIME} per op, min {TIME}", "bandwidth": rf"{RATE}(?: \(10\^\d+ B/s\))?, max {RATE}"}


def bench_binaries(bin_dir):
    return sorted(p for p in bin_dir.iterdir()
                  if p.is_file() and os.access(p, os.X_OK) and not p.name.startswith("kbench-"))


def run_case(binary, case, tmp_path):
    args = case["args"] + fixed(ITERS, SAMPLES) + ["--run-id", "smoke", "--rep", "1"]
    proc = run_bench(binary.parent, binary.name, args, tmpdir=tmp_path)
    return [str(binary)] + args, proc


def check_result(case, args, proc):
    where = " ".join(args)
    # Exit 77 only for a case named in bench_runner.ALLOWED_SKIPS, with its
    # reason, when that reason holds here (no second CPU, no IPv6, ...).
    if not ran_or_allowed_skip(case, proc, where):
        return
    lines = proc.stdout.splitlines()
    assert len(lines) == SAMPLES, f"{where}: {len(lines)} lines"
    samples = [json.loads(line) for line in lines]
    for i, s in enumerate(samples):
        check_sample_invariants(s, f"{where}: sample {i}")
        for key, typ in REQUIRED.items():
            assert key in s, f"{where}: no {key}"
            assert isinstance(s[key], typ), f"{where}: {key}={s[key]!r}"
        for key, path in NOISE.items():
            assert key in s, f"{where}: no {key}"
            if os.path.exists(path):
                assert isinstance(s[key], int) and s[key] >= 0, f"{where}: {key}={s[key]!r}"
            else:
                assert s[key] is None, f"{where}: {key}={s[key]!r}"
        # Live partner processes' CPU time (schedstat, ns): null without one.
        assert "partner_cpu_ns" in s, f"{where}: no partner_cpu_ns"
        if not case["two_party"]:
            assert s["partner_cpu_ns"] is None, f"{where}: partner_cpu_ns={s['partner_cpu_ns']!r}"
        elif s["partner_cpu_ns"] is not None:
            assert isinstance(s["partner_cpu_ns"], int) and s["partner_cpu_ns"] >= 0, where
        assert not FORBIDDEN & set(s), f"{where}: forbidden key"
        assert s["schema"] == 1
        assert s["case"] == case["case"] and s["bench"] == case["bench"]
        assert s["variant"] == case["variant"] and s["params"] == case["params"]
        assert s["placement"] == case["placement"] and s["metric"] == case["metric"]
        assert s["control"] is case["control"]
        assert s["run_id"] == "smoke" and s["rep_idx"] == 1 and s["sample_idx"] == i
        assert s["iters"] == ITERS
        assert s["metric"] in ("latency", "bandwidth")
        if s["metric"] == "bandwidth":
            assert isinstance(s.get("bytes_per_op"), int) and s["bytes_per_op"] > 0
    check_human_line(case["case"], samples, proc.stderr, where)
    # the line for people on stderr: the case's name, its times in human
    # units (bandwidth in decimal units, the unit's size said), the counts
    assert re.search(rf"^{re.escape(case['case'])}: median {HUMAN[case['metric']]}, spread \d+\.\d% of median, "
                     rf"{SAMPLES} samples x {ITERS} iters$", proc.stderr, re.M), f"{where}: {proc.stderr}"


def ends_and_middles(bin_dir):
    """Every (binary, case) of the build in two lists: the ends, each binary's
    variant and placement at its first and last parameters in --list order
    (the smallest and the largest size, the fewest and the most processes),
    and the middles, every other case. Between them, every case once."""
    binaries = bench_binaries(bin_dir)
    assert binaries, "no benchmark binaries built"
    groups = {}
    for b in binaries:
        for c in list_cases(b.parent, b.name):
            groups.setdefault((b.name, c["variant"], c["placement"]), []).append((b, c))
    ends, middles = [], []
    for jobs in groups.values():
        ends += [jobs[0]] + jobs[1:][-1:]
        middles += jobs[1:-1]
    return ends, middles


@pytest.mark.plain_pass
def test_ends_and_middles_are_every_case_once(bin_dir):
    ends, middles = ends_and_middles(bin_dir)
    every = [(b.name, c["case"]) for b in bench_binaries(bin_dir) for c in list_cases(b.parent, b.name)]
    got = [(b.name, c["case"]) for b, c in ends + middles]
    assert sorted(got) == sorted(every) and len(set(got)) == len(got)
    assert {("bw_mem", "bw_mem rd size_kb=4"), ("bw_mem", "bw_mem rd size_kb=262144")} <= {
        (b.name, c["case"]) for b, c in ends}
    assert ("bw_mem", "bw_mem rd size_kb=64") in {(b.name, c["case"]) for b, c in middles}


def test_every_variant_at_its_first_and_last_parameters(bin_dir, tmp_path):
    """Every variant and placement of every binary at its smallest and its
    largest parameters: the code of every case, run by both passes of make
    test (under ASan+UBSan too)."""
    run_jobs(ends_and_middles(bin_dir)[0], tmp_path)


@pytest.mark.plain_pass
def test_every_other_case(bin_dir, tmp_path):
    """The cases between each variant's first and last (sizes and counts in
    between): the same code as those, so make test runs them in its plain pass
    only; under ASan each one is a sanitized process (the 181 of them took
    23 s of CPU there, 8.5 s in the plain build)."""
    run_jobs(ends_and_middles(bin_dir)[1], tmp_path)


def run_jobs(jobs, tmp_path):
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


# A few cheap cases of each kind (a plain call, process creation, file
# creation, a bandwidth), at one, two and three iterations a sample: where an
# off-by-one in the harness's division is largest (ns_per_op = elapsed_ns /
# (iters + 1) passed every other test once; tests/mutants/run plants it).
FEW_ITERS_CASES = ["lat_syscall null", "lat_proc fork", "lat_fs create dir=default,mode=fresh,size_kb=0",
                   "bw_mem rd size_kb=4"]


@pytest.mark.parametrize("iters", [1, 2, 3])
def test_samples_keep_their_arithmetic_at_few_iterations(bin_dir, tmp_path, iters):
    for name in FEW_ITERS_CASES:
        bench = name.split()[0]
        case = next((c for c in list_cases(bin_dir, bench) if c["case"] == name), None)
        assert case is not None, f"{bench} --list has no case {name!r}"
        args = case["args"] + fixed(iters, SAMPLES) + ["--run-id", "few", "--rep", "0"]
        proc = run_bench(bin_dir, bench, args, tmpdir=tmp_path)
        assert proc.returncode == 0, f"{name}: exit {proc.returncode}: {proc.stderr}"
        samples = [json.loads(line) for line in proc.stdout.splitlines()]
        assert [s["iters"] for s in samples] == [iters] * SAMPLES, name
        for i, s in enumerate(samples):
            check_sample_invariants(s, f"{name} --iters {iters}: sample {i}")
        check_human_line(name, samples, proc.stderr, f"{name} --iters {iters}")
    assert not list(tmp_path.iterdir())


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
        for c in list_cases(b.parent, b.name):
            assert c["bench"] == b.name
            expect = f'{c["bench"]} {c["variant"]}'
            if c["params"]:
                expect += " " + c["params"]
            if c["two_party"]:
                expect += " @" + c["placement"]
            assert c["case"] == expect
            assert c["args"][0] == c["variant"]


# The declaration each --list line carries besides the case's identity
# (src/harness/bench.hpp; what the reports build their tables from).
DECLARATION = {"category": str, "category_rank": int, "rank": int, "direction": str, "unit": str,
               "summary": (dict, type(None)), "curve": (dict, type(None))}
SUMMARY = {"column": str, "note": str, "order": int, "combine": str, "placement": (str, type(None)),
           "minus": (str, type(None)), "size_param": (str, type(None)), "prefer": (int, type(None)),
           "per": (str, type(None))}
CURVE = {"chart": str, "title": str, "panel": str, "x": str, "log_y": bool, "cache_lines": bool}
IDENTITY = ["bench", "variant", "params", "placement", "case", "metric", "two_party", "control", "domain", "args"]


def all_list_cases(bin_dir):
    return [c for b in bench_binaries(bin_dir) for c in list_cases(b.parent, b.name)]


def params_of(case):
    return dict(kv.split("=", 1) for kv in case["params"].split(",")) if case["params"] else {}


def check_types(obj, spec, where):
    assert list(obj) == list(spec), f"{where}: keys {list(obj)}"
    for key, typ in spec.items():
        # bool is an int in Python: an int key must not be a bool.
        assert isinstance(obj[key], typ) and not (typ is int and isinstance(obj[key], bool)), \
            f"{where}: {key}={obj[key]!r}"


def test_list_lines_declare_every_case(bin_dir):
    previous = {}
    for c in all_list_cases(bin_dir):
        where = c["case"]
        assert list(c) == IDENTITY + list(DECLARATION), where
        check_types({k: c[k] for k in DECLARATION}, DECLARATION, where)
        assert (c["direction"], c["unit"]) == (("higher", "MB/s") if c["metric"] == "bandwidth" else ("lower", "ns"))
        assert c["category"] and c["rank"] >= 0
        # Ranks follow the declaration: placements of one spec share one, the next spec's is higher.
        last = previous.get(c["bench"])
        if last is not None:
            same_spec = c["two_party"] and last[1] == (c["variant"], c["params"]) and c["placement"] != "same"
            assert c["rank"] == last[0] if same_spec else c["rank"] > last[0], where
        previous[c["bench"]] = (c["rank"], (c["variant"], c["params"]))
        if c["summary"] is not None:
            col = c["summary"]
            check_types(col, SUMMARY, where)
            assert col["column"] and col["order"] >= 1, where
            assert col["combine"] in {"one", "mean", "minus", "pick", "cache_levels", "largest"}, where
            assert col["placement"] == ("same" if c["two_party"] else None), where
            assert (col["minus"] is not None) == (col["combine"] == "minus"), where
            sized = col["combine"] in {"pick", "cache_levels", "largest"}
            assert (col["size_param"] is not None) == sized, where
            assert not sized or col["size_param"] in params_of(c), where
            assert col["prefer"] is None or col["combine"] == "pick", where
        if c["curve"] is not None:
            check_types(c["curve"], CURVE, where)
            assert c["curve"]["chart"] and c["curve"]["title"], where
            assert c["curve"]["x"] in params_of(c), where


def test_every_category_has_one_rank(bin_dir):
    ranks = {}
    for c in all_list_cases(bin_dir):
        ranks.setdefault(c["category"], set()).add(c["category_rank"])
    assert all(len(r) == 1 for r in ranks.values()), ranks
    by_rank = sorted((next(iter(r)), name) for name, r in ranks.items())
    assert len({r for r, _ in by_rank}) == len(by_rank), f"two categories share a rank: {by_rank}"
    # Controls are in a category of their own.
    controls = {c["category"] for c in all_list_cases(bin_dir) if c["control"]}
    others = {c["category"] for c in all_list_cases(bin_dir) if not c["control"]}
    assert not controls & others


def test_summary_columns_are_consistent(bin_dir):
    cases = all_list_cases(bin_dir)
    columns = {}  # (category, label) -> set of (order, combine, note)
    for c in cases:
        col = c["summary"]
        if col is None:
            continue
        assert not c["control"], f'{c["case"]}: a control in a summary table'
        columns.setdefault((c["category"], col["column"]), set()).add((col["order"], col["combine"], col["note"]))
        if col["combine"] == "minus":
            others = [o for o in cases if o["bench"] == c["bench"] and o["variant"] == col["minus"]
                      and o["params"] == c["params"]]
            assert others, f'{c["case"]}: no {col["minus"]} case to subtract'
    used = {}  # (category, order) -> label
    for (cat, label), shapes in columns.items():
        assert len(shapes) == 1, f"{cat} / {label}: {shapes}"
        order, combine, _ = next(iter(shapes))
        # cache_levels fills four columns (L1, L2, L3, main memory).
        for o in range(order, order + (4 if combine == "cache_levels" else 1)):
            assert (cat, o) not in used, f"{cat}: order {o} of {label} and {used[(cat, o)]}"
            used[(cat, o)] = label


# Controls (work no kernel can change, see src/bench/ctl_machine.cpp) are
# exactly ctl_machine's cases: the driver interleaves whatever says control.
CONTROLS = {"ctl_machine": {"chain", "alu", "copy", "mem", "llc"}}
# memory-bound ("domain": "memory"): the DRAM bandwidth and the cache-sized chase
MEMORY_CONTROLS = {"mem": "bandwidth", "llc": "latency"}


def test_control_cases_are_exactly_the_machine_controls(bin_dir):
    names = {b.name for b in bench_binaries(bin_dir)}
    assert set(CONTROLS) <= names, "ctl_machine not built"
    for b in bench_binaries(bin_dir):
        cases = list_cases(b.parent, b.name)
        for c in cases:
            assert isinstance(c.get("control"), bool), f"{b.name}: {c}"
        if b.name in CONTROLS:
            assert {c["variant"] for c in cases} == CONTROLS[b.name]
            assert all(c["control"] is True for c in cases), b.name
            assert all(not c["two_party"] for c in cases), b.name
            for c in cases:
                mem = MEMORY_CONTROLS.get(c["variant"])
                assert (c["metric"], c["domain"]) == ((mem, "memory") if mem else ("latency", "cpu")), c
        else:
            assert all(c["control"] is False for c in cases), b.name


def test_declared_domains_are_what_the_scripts_read_for_older_runs(bin_dir):
    """Every case's declared domain is the one scripts/kbench/model/legacy.py
    gives a run that did not declare it (or declared it before the case
    changed domain): lat_proc fork_mem memory-bound, lat_fs fs."""
    from kbench.model import legacy     # scripts/ is on the path (tests/conftest.py)
    cases = all_list_cases(bin_dir)
    assert {c["domain"] for c in cases} == {"cpu", "memory", "fs"}
    wrong = [(c["case"], c["domain"]) for c in cases if c["domain"] != legacy.domain(c["bench"], c["variant"])]
    assert not wrong
    assert {c["domain"] for c in cases if c["bench"] == "lat_proc" and c["variant"] == "fork_mem"} == {"memory"}


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


@pytest.mark.parametrize("feature,case", [
    ("ipv6", {"bench": "lat_udp", "variant": "rt", "params": "family=ipv6,size=1", "placement": "same",
              "case": "lat_udp rt family=ipv6,size=1 @same"}),
    ("loopback", {"bench": "lat_tcp", "variant": "rt", "params": "family=ipv4,size=1", "placement": "same",
                  "case": "lat_tcp rt family=ipv4,size=1 @same"}),
])
def test_a_skip_is_accepted_only_where_its_reason_holds(bin_dir, feature, case):
    """The skip policy itself: the same exit 77 (the absence simulated with
    KBENCH_MISSING) is refused on a machine that has the feature, and
    accepted on one that lacks it."""
    args = [case["variant"], "--param", case["params"].split(",")[0]] + fixed(ITERS, SAMPLES)
    proc = run_bench(bin_dir, case["bench"], args, env={"KBENCH_MISSING": feature})
    assert proc.returncode == 77 and "skipped: no IPv" in proc.stderr, proc.stderr
    family, address = (socket.AF_INET6, "::1") if feature == "ipv6" else (socket.AF_INET, "127.0.0.1")
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.bind((address, 0))
        here = True
    except OSError:
        here = False
    assert (allowed_skip(case, proc) is None) == here
    proc = run_bench(bin_dir, case["bench"], ["--bogus"])
    assert allowed_skip(case, proc) is None  # exit 2 is never a skip
