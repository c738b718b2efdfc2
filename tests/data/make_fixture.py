#!/usr/bin/python3
"""Synthetic kbench run directories in the README's format, for tests.

The values are made up but shaped like a real machine's (a 2-CPU VM):
per case a true value, a multiplicative between-rep offset (the noise that
matters when kernels are compared), within-rep noise and a few slow
outliers.  Everything is drawn from a seeded generator, so a run is
reproducible from (seed, options).

    make_fixture.py OUT_ROOT [--host H] [--kernel K] [--seed N] [--reps R]
                    [--samples S] [--cases small|medium|full] [--scale REGEX=F]

writes OUT_ROOT/<host>/<kernel>/<run-id>/{meta.json,samples.jsonl,runs.jsonl}.
The committed runs under tests/data/runs/ were made with `regen` below.
"""
import argparse
import json
import math
import pathlib
import re
import sys

import numpy as np

CACHE = [
    {"level": 1, "type": "Data", "size_kb": 48, "line_bytes": 64},
    {"level": 1, "type": "Instruction", "size_kb": 32, "line_bytes": 64},
    {"level": 2, "type": "Unified", "size_kb": 2048, "line_bytes": 64},
    {"level": 3, "type": "Unified", "size_kb": 266240, "line_bytes": 64},
]


def _pow2(lo, hi, step=2):
    out = []
    v = lo
    while v <= hi:
        out.append(v)
        v *= step
    return out


def suite_cases(which="full"):
    """List of case dicts: bench, variant, params, placement, metric, value
    (ns per op, or MB/s for bandwidth), bcv/wcv (between/within-rep CV as a
    fraction), bytes (bytes per op for bandwidth)."""
    thin = which != "full"
    cases = []

    def add(bench, variant, params="", placement="unpinned", value=1.0, bcv=0.01, wcv=0.01,
            metric="latency", nbytes=None, two=False):
        cases.append(dict(bench=bench, variant=variant, params=params, placement=placement,
                          metric=metric, value=value, bcv=bcv, wcv=wcv, bytes=nbytes, two=two))

    for v, ns in (("null", 62), ("read", 118), ("write", 96), ("stat", 460), ("fstat", 150), ("open", 980)):
        add("lat_syscall", v, value=ns, bcv=0.008, wcv=0.01)
    for v, ns in (("install", 85), ("catch", 640), ("prot", 920)):
        add("lat_sig", v, value=ns, bcv=0.01, wcv=0.015)
    for v, ns in (("fork", 72000), ("exec", 260000), ("shell", 820000)):
        add("lat_proc", v, value=ns, bcv=0.025, wcv=0.03)
    add("lat_harness", "empty", value=0.31, bcv=0.004, wcv=0.005)
    add("lat_harness", "clock", value=21.0, bcv=0.005, wcv=0.005)
    if which == "small":
        placements = (("same", 1.0, 0.015),)
    else:
        placements = (("same", 1.0, 0.015), ("cross", 2.3, 0.06), ("unpinned", 1.8, 0.05))
    for pl, f, bcv in placements:
        add("lat_pipe", "rt", "", pl, 4100 * f, bcv, 0.03, two=True)
        add("lat_unix", "rt", "", pl, 5200 * f, bcv, 0.03, two=True)
        add("lat_udp", "rt", "family=ipv4,size=1", pl, 9300 * f, bcv, 0.03, two=True)
        add("lat_tcp", "rt", "family=ipv4,size=1", pl, 12500 * f, bcv, 0.03, two=True)
        add("lat_connect", "connect", "family=ipv4", pl, 26000 * f, bcv * 1.5, 0.04, two=True)
        add("lat_futex", "thread", "", pl, 3100 * f, bcv, 0.03, two=True)
        if which != "small":
            add("lat_futex", "process", "", pl, 3300 * f, bcv, 0.03, two=True)
        for name, mbs in (("bw_pipe", 3100), ("bw_unix", 5300), ("bw_tcp", 2600)):
            add(name, "stream", "chunk_kb=64", pl, mbs / f, bcv, 0.02, "bandwidth", 65536, two=True)
        if which != "small":
            for size in (1024, 8192):
                add("lat_udp", "rt", f"family=ipv4,size={size}", pl, (9300 + size * 0.6) * f, bcv, 0.03, two=True)
            add("lat_udp", "rt", "family=ipv6,size=1", pl, 9800 * f, bcv, 0.03, two=True)
            add("lat_tcp", "rt", "family=ipv6,size=1", pl, 13100 * f, bcv, 0.03, two=True)
        procs = (2,) if which == "small" else (2, 4, 8, 16)
        for p in procs:
            for s in ((0, 16) if which == "small" else (0, 16, 64)):
                work = s * 28.0 + 3
                add("lat_ctx", "ring", f"procs={p},size_kb={s}", pl, (1900 + 40 * p) * f + work,
                    bcv, 0.03, two=True)
                if pl == "same":
                    add("lat_ctx", "work", f"procs={p},size_kb={s}", "unpinned", work, 0.01, 0.02)
    if which == "small":
        add("lat_select", "select", "fds=100,type=tcp", value=640, bcv=0.01, wcv=0.015)
        for v, s, ns in (("create", 0, 6200), ("delete", 0, 4100), ("create", 10, 10400), ("delete", 10, 5600)):
            add("lat_fs", v, f"mode=fresh,size_kb={s}", value=ns, bcv=0.02, wcv=0.04)
        add("lat_pathwalk", "positive", "depth=4,name_len=8", value=360, bcv=0.01, wcv=0.015)
        add("lat_mmap", "mmap", "size_kb=1024", value=62000, bcv=0.02, wcv=0.03)
        add("lat_pagefault", "file", value=260, bcv=0.015, wcv=0.02)
        add("bw_file_rd", "io_only", "size_kb=512", value=9000, bcv=0.015, wcv=0.02, metric="bandwidth",
            nbytes=512 * 1024)
        add("bw_mmap_rd", "mmap_only", "size_kb=512", value=11700, bcv=0.015, wcv=0.02, metric="bandwidth",
            nbytes=512 * 1024)
        for v, mbs in (("rd", 11000), ("wr", 6600), ("cp", 4400), ("bcopy", 5500)):
            add("bw_mem", v, "size_kb=65536", value=mbs, bcv=0.012, wcv=0.02, metric="bandwidth",
                nbytes=65536 * 1024)
        for s, ns in ((16, 1.25), (512, 3.9), (16384, 11.5), (262144, 62.0)):  # L1, L2, L3, memory
            add("lat_mem_rd", "stride", f"size_kb={s},stride=128", value=ns, bcv=0.01, wcv=0.01)
        add("lat_mem_rd", "random", "size_kb=262144", value=98.0, bcv=0.01, wcv=0.01)
        return cases
    for call, base in (("select", 2.9), ("poll", 2.6), ("epoll", 0.0)):
        for typ, tf in (("file", 1.0), ("tcp", 1.6)):
            for n in ((100,) if thin else (10, 100, 250)):
                add("lat_select", call, f"fds={n},type={typ}", value=180 + base * n * tf + (25 if call == "epoll" else 0),
                    bcv=0.01, wcv=0.015)
    for mode, mf in (("fresh", 1.0), ("reuse", 1.25)):
        for s in ((0, 10) if thin else (0, 1, 4, 10)):
            add("lat_fs", "create", f"mode={mode},size_kb={s}", value=(6200 + 420 * s) * mf, bcv=0.02, wcv=0.04)
            add("lat_fs", "delete", f"mode={mode},size_kb={s}", value=(4100 + 150 * s) * mf, bcv=0.02, wcv=0.04)
    for kind, kf in (("positive", 1.0), ("negative", 0.9)):
        for d in ((1, 4, 16) if thin else (1, 2, 4, 8, 16)):
            add("lat_pathwalk", kind, f"depth={d},name_len=8", value=(140 + 55 * d) * kf, bcv=0.01, wcv=0.015)
    for s in _pow2(4, 65536, 16 if thin else 4):
        add("lat_mmap", "mmap", f"size_kb={s}", value=2500 + 95 * s / 4, bcv=0.02, wcv=0.03)
    add("lat_pagefault", "file", value=260, bcv=0.015, wcv=0.02)
    add("lat_pagefault", "anon", value=170, bcv=0.015, wcv=0.02)
    for s in _pow2(512, 65536, 8 if thin else 2):
        mbs = 9000 if s <= 2048 else 6500
        for v, f in (("io_only", 1.0), ("open2close", 0.93)):
            add("bw_file_rd", v, f"size_kb={s}", value=mbs * f, bcv=0.015, wcv=0.02, metric="bandwidth",
                nbytes=s * 1024)
        for v, f in (("mmap_only", 1.3), ("open2close", 0.85)):
            add("bw_mmap_rd", v, f"size_kb={s}", value=mbs * f, bcv=0.015, wcv=0.02, metric="bandwidth",
                nbytes=s * 1024)
    for s in _pow2(4, 262144, 16 if thin else 2):
        level = 0 if s <= 48 else 1 if s <= 2048 else 2 if s <= 266240 else 3
        rd = (60000, 38000, 21000, 11000)[level]
        for v, f in (("rd", 1.0), ("wr", 0.6), ("rdwr", 0.55), ("cp", 0.4), ("bcopy", 0.5), ("bzero", 0.8)):
            add("bw_mem", v, f"size_kb={s}", value=rd * f, bcv=0.012, wcv=0.02, metric="bandwidth",
                nbytes=s * 1024)
    for s in _pow2(1, 262144, 8 if thin else 2):
        level = 0 if s <= 48 else 1 if s <= 2048 else 2 if s <= 266240 else 3
        for stride in (64, 128):
            ns = (1.25, 3.9, 11.5, 62.0 if stride == 128 else 41.0)[level]
            add("lat_mem_rd", "stride", f"size_kb={s},stride={stride}", value=ns, bcv=0.01, wcv=0.01)
        add("lat_mem_rd", "random", f"size_kb={s}", value=(1.25, 5.2, 24.0, 98.0)[level], bcv=0.01, wcv=0.01)
    return cases


def case_name(c):
    name = f"{c['bench']} {c['variant']}"
    if c["params"]:
        name += " " + c["params"]
    if c["two"]:
        name += " @" + c["placement"]
    return name


def make_meta(host, kernel, run_id, seed, reps, samples, **extra):
    meta = {
        "schema": 1, "run_id": run_id, "suite_version": "0.1.0", "host": host,
        "kernel_release": kernel, "kernel_version": f"#1 SMP PREEMPT_DYNAMIC {kernel}",
        "kernel_cmdline": "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet",
        "arch": "x86_64", "cpu_model": "Intel(R) Xeon(R) Processor", "cpu_count": 2,
        "cpus_online": "0-1", "mem_total_kb": 4026500, "clocksource": "kvm-clock",
        "governor": None, "boost": None, "smt": "notsupported",
        "mitigations": {"spectre_v2": "Mitigation: Enhanced IBRS", "meltdown": "Not affected"},
        "thp": {"enabled": "madvise", "defrag": "madvise"}, "aslr": 2, "virtualization": "kvm",
        "perf_event_paranoid": 2, "cache": CACHE, "compiler": "g++ (Debian 12.2.0-14) 12.2.0",
        "cxxflags": "-O2 -g -std=c++17 -Wall -Wextra -Werror", "options": {"reps": reps, "samples": samples},
        "seed": seed, "started_utc": "2025-01-01T00:00:00Z", "ended_utc": "2025-01-01T00:04:00Z",
        "loadavg_before": [0.05, 0.1, 0.1], "loadavg_after": [1.2, 0.6, 0.3], "busy_processes": [],
        "swap_before": 0, "swap_after": 0, "warnings": ["governor unknown (no cpufreq in this VM)"],
        "status": "complete",
    }
    meta.update(extra)
    return meta


def make_run(root, host="testhost", kernel="6.1.0-test", seed=1, reps=5, samples=8, cases="medium",
             scale=None, run_id=None, meta_extra=None, failures=True):
    """Write one run directory under root; returns its path.

    scale: {regex: factor}: multiply ns_per_op of matching case names
    (so a factor > 1 makes latency worse and bandwidth worse alike).
    """
    rng = np.random.default_rng(seed)
    run_id = run_id or f"20250101T000000Z-{seed:06x}"
    d = pathlib.Path(root) / host / kernel / run_id
    d.mkdir(parents=True, exist_ok=True)
    all_cases = suite_cases(cases) if isinstance(cases, str) else cases
    meta = make_meta(host, kernel, run_id, seed, reps, samples, **(meta_extra or {}))
    with open(d / "meta.json", "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    lines = []
    runs = []
    t = 10_000_000_000
    for rep in range(reps):
        order = rng.permutation(len(all_cases))
        for ci in order:
            c = all_cases[ci]
            name = case_name(c)
            if failures and c["bench"] == "lat_udp" and "ipv6" in c["params"]:
                runs.append(_inv(run_id, c, name, rep, "skipped", 77, "no IPv6 on this machine", 0))
                continue
            f = 1.0
            for pat, fac in (scale or {}).items():
                if re.search(pat, name):
                    f *= fac
            if c["metric"] == "bandwidth":
                ns_true = c["bytes"] / c["value"] * 1000.0
            else:
                ns_true = c["value"]
            rep_mu = ns_true * f * math.exp(rng.normal(0.0, c["bcv"]))
            iters = max(1, int(2e6 / max(ns_true, 1e-3)))
            for s in range(samples):
                ns = rep_mu * math.exp(rng.normal(0.0, c["wcv"]))
                if rng.random() < 0.03:
                    ns *= 1.0 + rng.exponential(0.3)
                elapsed = max(1, int(round(ns * iters)))
                line = {
                    "schema": 1, "run_id": run_id, "bench": c["bench"], "variant": c["variant"],
                    "params": c["params"], "placement": c["placement"], "case": name,
                    "metric": c["metric"], "rep_idx": rep, "sample_idx": s, "iters": iters,
                    "elapsed_ns": elapsed, "ns_per_op": round(elapsed / iters, 4),
                }
                if c["metric"] == "bandwidth":
                    line["bytes_per_op"] = c["bytes"]
                line.update({
                    "cpu": 0 if c["placement"] != "unpinned" else None,
                    "partner_cpu": (0 if c["placement"] == "same" else 1 if c["placement"] == "cross" else None)
                    if c["two"] else None,
                    "t_start_ns": t, "utime_ns": elapsed // 3, "stime_ns": elapsed // 2,
                    "nvcsw": 0, "nivcsw": int(rng.random() < 0.1), "minflt": 0, "majflt": 0,
                })
                t += elapsed + 1000
                lines.append(json.dumps(line, separators=(",", ":")))
            runs.append(_inv(run_id, c, name, rep, "ok", 0, "", samples))
    if failures:
        fake = dict(bench="lat_fs", variant="create", params="mode=fresh,size_kb=1000", placement="unpinned",
                    metric="latency", two=False)
        runs.append(_inv(run_id, fake, "lat_fs create mode=fresh,size_kb=1000", 0, "failed", 1,
                         "", 0, "lat_fs: write: No space left on device"))
    with open(d / "samples.jsonl", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + ("\n" if lines else ""))
    with open(d / "runs.jsonl", "w", encoding="utf-8") as f:
        for r in runs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    return d


def _inv(run_id, c, name, rep, status, code, reason, n, tail=""):
    return {"schema": 1, "run_id": run_id, "case": name, "bench": c["bench"], "variant": c["variant"],
            "params": c["params"], "placement": c["placement"], "metric": c["metric"], "rep_idx": rep,
            "args": [c["variant"]], "status": status, "exit_code": code, "signal": None,
            "duration_ms": 120.0, "n_samples": n, "stderr_tail": tail or reason, "reason": reason}


def regen(out):
    """The committed fixtures: two kernels of one host, small case set."""
    out = pathlib.Path(out)
    make_run(out, "testhost", "6.1.0-base", seed=101, reps=5, samples=3, cases="small")
    make_run(out, "testhost", "6.6.0-new", seed=202, reps=5, samples=3, cases="small",
             scale={r"^lat_syscall ": 1.10, r"^bw_pipe ": 0.8})


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--host", default="testhost")
    ap.add_argument("--kernel", default="6.1.0-test")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--cases", choices=("small", "medium", "full"), default="medium")
    ap.add_argument("--scale", action="append", default=[], metavar="REGEX=F")
    ap.add_argument("--regen", action="store_true", help="write the committed fixture runs into OUT")
    a = ap.parse_args(argv)
    if a.regen:
        regen(a.out)
        return 0
    scale = {}
    for s in a.scale:
        k, _, v = s.rpartition("=")
        scale[k] = float(v)
    print(make_run(a.out, a.host, a.kernel, a.seed, a.reps, a.samples, a.cases, scale))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def add_control(run_dir, factor, seed, variant="alu", ns=1.2):
    """Append a control case to a run made by make_run (its samples.jsonl):
    ctl_machine VARIANT, NS an operation times factor (the machine's
    speed), 0.5% noise, three samples in each of the run's reps."""
    rng = np.random.default_rng(seed)
    run_dir = pathlib.Path(run_dir)
    samples = run_dir / "samples.jsonl"
    reps = sorted({json.loads(x)["rep_idx"] for x in samples.read_text().splitlines() if x.strip()})
    lines = []
    for rep in reps:
        for k in range(3):
            v = ns * factor * math.exp(rng.normal(0, 0.005))
            lines.append(json.dumps({
                "schema": 1, "run_id": run_dir.name, "bench": "ctl_machine", "variant": variant, "params": "",
                "placement": "pinned", "case": f"ctl_machine {variant}", "metric": "latency", "control": True,
                "rep_idx": rep, "sample_idx": k, "iters": 1000000, "elapsed_ns": int(v * 1e6), "ns_per_op": v,
                "cpu": 0, "t_start_ns": 10_000_000_000 + rep * 1_000_000_000 + k}))
    with samples.open("a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def add_scaling(run_dir, base, ns, seed, copies=(1, 2), disturbed_every=0):
    """Append a scaling case to a run made by make_run: BASE xN for each N
    of copies (kbench-run --scaling), every copy NS an operation with 1%
    noise, three samples in each of the run's reps.  disturbed_every: every
    so many samples is >10% stolen (steal_ns), so its rep counts as
    disturbed (load._disturbed)."""
    rng = np.random.default_rng(seed)
    run_dir = pathlib.Path(run_dir)
    samples = run_dir / "samples.jsonl"
    reps = sorted({json.loads(x)["rep_idx"] for x in samples.read_text().splitlines() if x.strip()})
    bench, variant = base.split()[:2]
    lines = []
    k = 0
    for n in copies:
        for rep in reps:
            for s in range(3):
                for c in range(n):
                    el = int(ns * 1000 * math.exp(rng.normal(0, 0.01)))
                    k += 1
                    line = {"schema": 1, "run_id": run_dir.name, "bench": bench, "variant": variant, "params": "",
                            "placement": "pinned", "case": f"{base} x{n}", "metric": "latency", "rep_idx": rep,
                            "sample_idx": s, "iters": 1000, "elapsed_ns": el, "ns_per_op": el / 1000, "cpu": c,
                            "copies": n, "copy_idx": c, "copy_mode": "processes"}
                    if disturbed_every and k % disturbed_every == 0:
                        line["steal_ns"] = el // 4
                    lines.append(json.dumps(line))
    with samples.open("a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
