"""The memory sweeps' largest size follows the machine (src/harness/memory.hpp):
lat_mem_rd and bw_mem keep their fixed ladder of powers of two up to 256 MB
and add one power of two of at least 4x the last-level cache where memory
allows it (at most an eighth of MemAvailable); meta.json's memory_sizes says
how it was chosen and which sizes the run planned.

This machine's cache is small (an 8 MB L3), so a large one is faked:
KBENCH_CACHE_SYSFS names a directory shaped like
/sys/devices/system/cpu/cpu0/cache, which the binaries and the driver read
instead (tests only). Nothing here runs a large array: --list, and driver
runs of the smallest sizes."""
import json

import pytest

from bench_runner import list_cases, run_bench
from driver_runner import run_dir_of, run_driver

KB = 1
MB = 1024 * KB
GB = 1024 * MB
LADDER_TOP = 256 * MB
LADDER_X2 = [str(1 << i) for i in range(19)]                 # lat_mem_rd stride=64: 1 KB .. 256 MB
LADDER_X4_FROM_1 = [str(1 << i) for i in range(0, 19, 2)]    # lat_mem_rd stride=128, random
LADDER_X4_FROM_4 = [str(1 << i) for i in range(2, 19, 2)]    # bw_mem


def fake_cache(root, levels):
    """A cache directory of `levels` [(level, type, size text)]."""
    root.mkdir()
    for i, (level, kind, size) in enumerate(levels):
        d = root / f"index{i}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
        (d / "coherency_line_size").write_text("64\n")
    return root


def big_l3(tmp_path, l3="491520K"):   # 480 MB: a VM reporting a large host's L3
    return fake_cache(tmp_path / "cache", [(1, "Data", "32K"), (1, "Instruction", "32K"),
                                           (2, "Unified", "1024K"), (3, "Unified", l3)])


def small_l3(tmp_path):
    return fake_cache(tmp_path / "cache", [(1, "Data", "32K"), (1, "Instruction", "32K"),
                                           (2, "Unified", "512K"), (3, "Unified", "8192K")])


def mem_available_kb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    raise AssertionError("no MemAvailable in /proc/meminfo")


def floor_pow2(v):
    return 1 << (v.bit_length() - 1) if v > 0 else 0


def expected_largest(llc_kb, avail_kb):
    """The rule, written out again: the first power of two >= 4x the cache,
    at most the largest power of two <= MemAvailable / 8, never below 256 MB."""
    want = 4 * llc_kb
    if want <= LADDER_TOP:
        return LADDER_TOP
    return max(LADDER_TOP, min(1 << (want - 1).bit_length(), floor_pow2(avail_kb // 8)))


def sizes(bin_dir, bench, env, variant=None, stride=None):
    """The size_kb values of a bench's --list under env, per (variant, stride)."""
    r = run_bench(bin_dir, bench, ["--list"], env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    out = {}
    for line in r.stdout.splitlines():
        c = json.loads(line)
        p = dict(kv.split("=", 1) for kv in c["params"].split(","))
        out.setdefault((c["variant"], p.get("stride")), []).append(p["size_kb"])
    return out


def ladders(bin_dir, env):
    mem = sizes(bin_dir, "lat_mem_rd", env)
    bw = sizes(bin_dir, "bw_mem", env)
    assert set(mem) == {("stride", "64"), ("stride", "128"), ("random", None)}
    assert set(bw) == {(v, None) for v in ("rd", "wr", "rdwr", "cp", "bcopy", "bzero")}
    # one ladder per binary: every bw_mem variant has the same sizes
    assert len({tuple(v) for v in bw.values()}) == 1
    return mem[("stride", "64")], mem[("stride", "128")], mem[("random", None)], bw[("rd", None)]


def test_a_small_cache_keeps_the_fixed_ladder(bin_dir, tmp_path):
    """8 MB of L3 (this machine's), or no cache reported at all: 256 MB is
    already 4x beyond, the sizes are those of every earlier run."""
    for env in ({"KBENCH_CACHE_SYSFS": str(small_l3(tmp_path))},
                {"KBENCH_CACHE_SYSFS": str(tmp_path / "no-such-dir")}):
        assert ladders(bin_dir, env) == (LADDER_X2, LADDER_X4_FROM_1, LADDER_X4_FROM_1, LADDER_X4_FROM_4), env


def test_a_480_mb_cache_adds_a_main_memory_size_to_both_benches(bin_dir, tmp_path):
    """480 MB of L3: 4x is 1920 MB, so 2 GB where memory allows it (an eighth
    of MemAvailable), else the largest power of two memory allows; the fixed
    sizes stay, so a 256 MB case still compares with a smaller host's."""
    env = {"KBENCH_CACHE_SYSFS": str(big_l3(tmp_path))}
    before = expected_largest(480 * MB, mem_available_kb())
    got = ladders(bin_dir, env)
    after = expected_largest(480 * MB, mem_available_kb())
    extra = {got[0][-1]}
    assert extra <= {str(before), str(after)}, (extra, before, after)
    for ladder, base in zip(got, (LADDER_X2, LADDER_X4_FROM_1, LADDER_X4_FROM_1, LADDER_X4_FROM_4)):
        assert ladder[:-1] == base and ladder[-1] == got[0][-1]
    if mem_available_kb() >= 8 * 2 * GB * 1.1:   # this machine has room (23 GB available): 2 GB
        assert got[0][-1] == str(2 * GB)


def test_meta_json_says_which_sizes_ran_and_whether_they_reach_main_memory(driver, bin_dir, tmp_path):
    env = {"KBENCH_CACHE_SYSFS": str(big_l3(tmp_path))}
    out = tmp_path / "out"
    r = run_driver(driver, "--only", "^(lat_mem_rd random|bw_mem rd) size_kb=(4|16)$", "--no-controls",
                   "--reps", "1", "--samples", "2", "--seed", "3", "--out", out, "--no-table",
                   bin_dir=bin_dir, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    meta = json.loads((run_dir_of(r) / "meta.json").read_text())
    m = meta["memory_sizes"]
    assert list(m) == ["llc_kb", "cache_dir", "main_memory_kb", "cap_kb", "largest_kb", "reaches_main_memory",
                       "sizes_kb"]
    assert (m["llc_kb"], m["cache_dir"], m["main_memory_kb"]) == (480 * MB, env["KBENCH_CACHE_SYSFS"], 1920 * MB)
    assert m["cap_kb"] == floor_pow2(m["cap_kb"]) and m["cap_kb"] > 0
    assert m["largest_kb"] == max(LADDER_TOP, min(2 * GB, m["cap_kb"]))
    assert m["reaches_main_memory"] is (m["largest_kb"] >= 1920 * MB)
    # what the plan held (after --only), per bench of memory-bound cases
    assert m["sizes_kb"] == {"bw_mem": [4, 16], "lat_mem_rd": [4, 16]}
    # meta.cache reads the same directory: the scripts label the rows by it
    assert {c["level"]: c["size_kb"] for c in meta["cache"] if c["type"] != "Instruction"} == \
        {1: 32, 2: 1024, 3: 480 * MB}


def test_a_cache_memory_cannot_dwarf_is_not_called_main_memory(driver, bin_dir, tmp_path):
    """64 GB of L3: 256 GB wanted, no machine here has an eighth of that
    free; the largest is what memory allows and meta.json says it is not
    main memory."""
    env = {"KBENCH_CACHE_SYSFS": str(big_l3(tmp_path, "64G"))}
    got = ladders(bin_dir, env)
    top = int(got[0][-1])
    assert top == floor_pow2(top) and LADDER_TOP <= top <= max(LADDER_TOP, floor_pow2(mem_available_kb() * 12 // 80))
    r = run_driver(driver, "--only", "^lat_mem_rd random size_kb=1$", "--no-controls", "--reps", "1",
                   "--samples", "2", "--out", tmp_path / "out", "--no-table", bin_dir=bin_dir, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    m = json.loads((run_dir_of(r) / "meta.json").read_text())["memory_sizes"]
    assert m["main_memory_kb"] == 256 * GB and m["largest_kb"] < m["main_memory_kb"]
    assert m["reaches_main_memory"] is False and m["sizes_kb"] == {"lat_mem_rd": [1]}
    # no cache reported: no answer, rather than a guess
    env = {"KBENCH_CACHE_SYSFS": str(tmp_path / "none")}
    r = run_driver(driver, "--only", "^lat_mem_rd random size_kb=1$", "--no-controls", "--reps", "1",
                   "--samples", "2", "--out", tmp_path / "out2", "--no-table", bin_dir=bin_dir, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    meta = json.loads((run_dir_of(r) / "meta.json").read_text())
    m = meta["memory_sizes"]
    assert (m["llc_kb"], m["main_memory_kb"], m["reaches_main_memory"], m["largest_kb"]) == (None, None, None, LADDER_TOP)
    assert meta["cache"] is None


@pytest.mark.parametrize("bench", ["lat_mem_rd", "bw_mem"])
def test_every_variant_ends_at_the_same_size(bin_dir, bench):
    """Every variant of one --list ends at the same size, this machine's (the
    machine is read once per process)."""
    cases = list_cases(bin_dir, bench)
    tops = {}
    for c in cases:
        key = (c["variant"], "stride=64" in c["params"])
        tops[key] = max(tops.get(key, 0), int(dict(kv.split("=") for kv in c["params"].split(","))["size_kb"]))
    assert len(set(tops.values())) == 1, tops
