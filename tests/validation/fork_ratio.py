#!/usr/bin/python3
"""lat_proc fork against a hand-written fork + _exit + waitpid loop
(handloop_fork.c, built static: the smallest parent), interleaved and
pinned: each round runs `lat_proc fork`, the hand loop, then the
neighbours `lat_proc fork_harness` (fork from the harness's own process)
and `lat_proc exec`, each as a fresh process with the same iteration count
per sample (at least --min-ms of forks) and the same number of samples.
Prints per round each one's median µs per operation and fork/hand, then the
median and range of fork/hand over the rounds (and of the neighbours').

Run it on a quiet machine (flock -x /tmp/kbench-quiet.lock here), after make:
  tests/validation/fork_ratio.py [--rounds 7] [--samples 11] [--min-ms 20] [--cpu C]
"""
import argparse
import json
import math
import os
import statistics as st
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def pinned(cpu):
    return lambda: os.sched_setaffinity(0, {cpu})


def kbench(bin_dir, variant, iters, samples, cpu):
    """Median ns per op of one lat_proc process (--iters, a warm-up of
    about one sample first, as the hand loop's)."""
    out = subprocess.run([str(bin_dir / "lat_proc"), variant, "--cpu", str(cpu), "--iters", str(iters),
                          "--samples", str(samples), "--warmup-ms", "20"],
                         capture_output=True, text=True, check=True).stdout
    return st.median(json.loads(line)["ns_per_op"] for line in out.splitlines())


def hand(exe, iters, samples, cpu):
    out = subprocess.run([str(exe), str(iters), str(samples)], capture_output=True, text=True, check=True,
                         preexec_fn=pinned(cpu)).stdout
    return st.median(float(x) for x in out.split())


def iters_for(bin_dir, min_ms, cpu):
    """Forks per sample: lat_proc's own calibration to --min-ms."""
    out = subprocess.run([str(bin_dir / "lat_proc"), "fork", "--cpu", str(cpu), "--samples", "1",
                          "--min-sample-ms", str(min_ms)], capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[0])["iters"]


def spread(values):
    return f"median {st.median(values):.3f}, range {min(values):.3f}-{max(values):.3f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--samples", type=int, default=11)
    ap.add_argument("--min-ms", type=int, default=20)
    ap.add_argument("--cpu", type=int, default=None, help="the CPU every process runs on (default: the last allowed)")
    ap.add_argument("--bin", default=str(ROOT / "build" / "bin"), help="the benchmarks (default build/bin)")
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.samples < 1 or a.min_ms < 1:
        ap.error("--rounds, --samples and --min-ms are at least 1")
    bin_dir = Path(a.bin)
    if not (bin_dir / "lat_proc").is_file():
        ap.error(f"{bin_dir}/lat_proc: not found (make first)")
    cpu = a.cpu if a.cpu is not None else max(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "handloop_fork"
        subprocess.run(["cc", "-O2", "-static", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                        str(ROOT / "tests" / "validation" / "handloop_fork.c")], check=True)
        iters = iters_for(bin_dir, a.min_ms, cpu)
        print(f"CPU {cpu}, {a.rounds} rounds of {a.samples} samples of {iters} forks (at least {a.min_ms} ms); "
              f"µs per operation, each the median of one process's samples")
        print("round     fork    hand  fork_harness     exec   fork/hand  harness/hand  exec/fork")
        ratios, harness, exec_ = [], [], []
        for r in range(1, a.rounds + 1):
            k = kbench(bin_dir, "fork", iters, a.samples, cpu)
            h = hand(exe, iters, a.samples, cpu)
            kh = kbench(bin_dir, "fork_harness", iters, a.samples, cpu)
            e = kbench(bin_dir, "exec", max(1, iters // 5), a.samples, cpu)
            ratios.append(k / h)
            harness.append(kh / h)
            exec_.append(e / k)
            print(f"{r:5d} {k / 1e3:8.1f} {h / 1e3:7.1f} {kh / 1e3:13.1f} {e / 1e3:8.1f} {k / h:11.3f} "
                  f"{kh / h:13.3f} {e / k:10.2f}")
    print(f"fork/hand: {spread(ratios)}")
    print(f"fork_harness/hand: {spread(harness)}")
    print(f"exec/fork: {spread(exec_)}")
    return 0 if all(math.isfinite(x) for x in ratios) else 1


if __name__ == "__main__":
    sys.exit(main())
