#!/usr/bin/python3
"""Why process creation drifts between runs: per run, the fork/exec/shell
headline next to what could explain it (the CPU and memory controls, the
parent's size, faults and context switches per operation, time waiting to
run or stolen), and the spread within a run against the spread between runs.
With a first_comparison.sh calibration directory (cal/), also `lat_proc fork`
against the hand loop (handloop_fork) from a small parent and from one
grown by the harness's resident size, interleaved and pinned.

Usage: process_creation.py RUN_DIR_OR_ROOT... [--cal DIR]
"""
import argparse
import json
import math
import statistics as st
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))
from kbench.model import load  # noqa: E402

CASES = ("lat_proc fork", "lat_proc exec", "lat_proc shell", "lat_syscall null")
CONTROLS = ("ctl_machine alu", "ctl_machine mem")


def rep_medians(case):
    return [st.median(v) for v in case.reps.values() if v]


def per_op(run, name, key, per=True):
    """Median over the case's samples of counter key per operation (per=False: as recorded)."""
    path = load.run_file(run.path, load.SAMPLES)      # plain, or compressed as kbench-run leaves it
    vals = []
    for _, o, _ in load.iter_jsonl(path, lambda msg: None, wanted=lambda line: f'"case":"{name}"' in line):
        v, it = o.get(key), o.get("iters")
        if isinstance(v, (int, float)) and isinstance(it, int) and it > 0:
            vals.append(v / it if per else v)
    return st.median(vals) if vals else math.nan


def log_corr(x, y):
    """Pearson correlation of the logs of two lists (nan below 3 pairs)."""
    pairs = [(math.log(a), math.log(b)) for a, b in zip(x, y) if a > 0 and b > 0]
    if len(pairs) < 3:
        return math.nan
    mx = st.mean(p[0] for p in pairs)
    my = st.mean(p[1] for p in pairs)
    sxy = sum((a - mx) * (b - my) for a, b in pairs)
    sxx = sum((a - mx) ** 2 for a, _ in pairs)
    syy = sum((b - my) ** 2 for _, b in pairs)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else math.nan


RELATED = ("lat_syscall null", "lat_pagefault anon", "lat_mmap mmap size_kb=1024", "ctl_machine alu",
           "ctl_machine mem")


def correlations(runs):
    """Across runs: does a run's fork/exec level go with its null system
    call, page fault, mmap, CPU control, memory control?"""
    level = {}
    for r in runs:
        for c in CASES + RELATED:
            case = r.cases.get(c)
            if case and case.reps:
                level.setdefault(c, {})[r.run_id] = st.median(rep_medians(case))
    ids = [r.run_id for r in runs]
    print(f"correlation across {len(ids)} runs of the runs' log medians:")
    for c in ("lat_proc fork", "lat_proc exec"):
        cells = []
        for o in RELATED:
            if c in level and o in level:
                common = [i for i in ids if i in level[c] and i in level[o]]
                cells.append(f"{o} {log_corr([level[c][i] for i in common], [level[o][i] for i in common]):+.2f}")
        print(f"  {c}: " + ", ".join(cells))


def describe_runs(runs):
    print("run                       fork µs  exec µs  shell µs  null ns   alu ns  mem GB/s  parent RSS kB  "
          "faults/fork  nvcsw/fork  run_delay µs/fork")
    levels = {c: [] for c in CASES}
    within = {c: [] for c in CASES}
    for r in sorted(runs, key=lambda r: (r.meta or {}).get("started_utc", "")):
        row = []
        for c in CASES + CONTROLS:
            case = r.cases.get(c)
            m = st.median(rep_medians(case)) if case else math.nan
            if c in levels and case:
                levels[c].append(m)
                meds = rep_medians(case)
                if len(meds) >= 3:
                    within[c].append(st.pstdev([math.log(x) for x in meds]))
            row.append(m)
        fork = r.cases.get("lat_proc fork")
        rss = per_op(r, "lat_proc fork", "parent_rss_kb", per=False) if fork else math.nan
        faults = per_op(r, "lat_proc fork", "minflt") if fork else math.nan
        vcsw = per_op(r, "lat_proc fork", "nvcsw") if fork else math.nan
        delay = per_op(r, "lat_proc fork", "run_delay_ns") if fork else math.nan
        f, e, s, n, alu, mem = row
        print(f"{r.run_id:24s} {f / 1e3:8.0f} {e / 1e3:8.0f} {s / 1e3:9.0f} {n:8.0f} {alu:8.3f} {mem / 1e3:9.1f} "
              f"{rss:14.0f} {faults:12.1f} {vcsw:11.2f} {delay / 1e3:18.1f}")
    print("between runs (range of the runs' medians, max/min - 1) against within a run (median sd of log rep "
          "medians):")
    for c in CASES:
        v = levels[c]
        if len(v) >= 2:
            print(f"  {c:18s} between {100 * (max(v) / min(v) - 1):5.1f}%   within {100 * st.median(within[c]):5.1f}%")


def read_values(path):
    """ns per op of one calibration output: JSON lines (median of ns_per_op) or one number per line."""
    vals = []
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            vals.append(json.loads(line)["ns_per_op"])
        else:
            vals.append(float(line))
    return st.median(vals) if vals else math.nan


def describe_cal(cal):
    cal = Path(cal)
    rounds = sorted({p.suffix for p in cal.glob("fork-kbench.r*")}, key=lambda s: int(s[2:]))
    print("fork, interleaved rounds, pinned (µs per fork): kbench lat_proc fork / hand loop / hand loop with "
          "the harness's resident size added")
    ratios, ratios3 = [], []
    for r in rounds:
        k = read_values(cal / f"fork-kbench{r}")
        h = read_values(cal / f"fork-hand{r}")
        h3 = read_values(cal / f"fork-hand3m{r}")
        ratios.append(k / h)
        ratios3.append(k / h3)
        print(f"  round {r[2:]}: {k / 1e3:7.0f} {h / 1e3:7.0f} {h3 / 1e3:7.0f}   kbench/hand {k / h:.2f}, "
              f"kbench/hand+size {k / h3:.2f}")
    if ratios:
        print(f"  median kbench/hand {st.median(ratios):.2f}, kbench/hand with the harness's size "
              f"{st.median(ratios3):.2f}")
    for name in ("fork-hand.rss", "fork-hand3m.rss"):
        p = cal / name
        if p.exists():
            rss = [line.split()[-2] for line in p.read_text().splitlines() if "VmRSS" in line]
            print(f"  {name}: VmRSS {', '.join(sorted(set(rss)))} kB")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--cal")
    a = ap.parse_args()
    runs = [r for r in load.load_runs([Path(d) for d in a.dirs], load.Warnings()) if not r.quick]
    describe_runs(runs)
    correlations(runs)
    if a.cal:
        describe_cal(a.cal)
    return 0


if __name__ == "__main__":
    sys.exit(main())
