#!/usr/bin/python3
"""Explore a machine-speed covariate: divide each rep of a case by the speed
of the machine measured by the control cases nearest to it in time, and see
whether that makes comparisons better.  Usage:

    control_correction.py BASE_RUN OTHER_RUN [K]

For every non-control case on both sides: the ratio other/base of the low
estimator (Harrell-Davis 20th percentile of the rep medians) raw and
corrected, where a rep's correction is the median, over the K controls
nearest in time (default 3), of control value / that control's median over
both runs.  Prints the distribution of |ratio - 1| raw and corrected and
the ratios of chosen cases.  For an A/A pair both should be near 1; for a
pair with a known delta, the corrected ratio should keep it."""
import math
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))
from kbench.model import load, stats  # noqa: E402


def control_points(run, pooled_median):
    pts = []
    for c in run.cases.values():
        if not c.control:
            continue
        for k, v in c.reps.items():
            if k in c.rep_start:
                pts.append((c.rep_start[k], float(np.median(v)) / pooled_median[c.name]))
    pts.sort()
    return np.array([p[0] for p in pts], dtype=float), np.array([p[1] for p in pts])


def estimate(values, metric):
    y = stats.to_log_time(values, metric)
    return float(stats.estimate(y, "low"))


def main(argv):
    a_run, b_run = (load.load_runs([Path(p)], load.Warnings())[0] for p in argv[1:3])
    k = int(argv[3]) if len(argv) > 3 else 3
    pooled = {}
    for name in {n for r in (a_run, b_run) for n, c in r.cases.items() if c.control}:
        vals = [float(np.median(v)) for r in (a_run, b_run) if name in r.cases for v in r.cases[name].reps.values()]
        pooled[name] = float(np.median(vals))
    pts = {r.run_id: control_points(r, pooled) for r in (a_run, b_run)}

    def values(run, case, correct):
        t, s = pts[run.run_id]
        out = []
        for key, v in case.reps.items():
            x = float(np.median(v))
            if correct and key in case.rep_start and len(t):
                near = np.argsort(np.abs(t - case.rep_start[key]))[:k]
                f = float(np.median(s[near]))
                x = x / f if case.metric != "bandwidth" else x * f
            out.append(x)
        return out

    raw, cor, rows = [], [], []
    for name, ca in a_run.cases.items():
        cb = b_run.cases.get(name)
        if ca.control or cb is None or ca.n_reps < 3 or cb.n_reps < 3:
            continue
        r0 = math.exp(estimate(values(b_run, cb, False), cb.metric) - estimate(values(a_run, ca, False), ca.metric))
        r1 = math.exp(estimate(values(b_run, cb, True), cb.metric) - estimate(values(a_run, ca, True), ca.metric))
        raw.append(abs(r0 - 1))
        cor.append(abs(r1 - 1))
        rows.append((name, r0, r1))
    for label, d in (("raw", raw), ("corrected", cor)):
        d = sorted(d)
        print(f"{label:>9}: |time ratio - 1| median {statistics.median(d) * 100:.1f}%, p90 "
              f"{d[int(0.9 * len(d))] * 100:.1f}%, within 5%: {sum(x <= 0.05 for x in d)}/{len(d)}")
    for name, r0, r1 in rows:
        if name.startswith(("lat_syscall", "lat_sig install", "lat_mem_rd random size_kb=1 ", "bw_mem rd size_kb=64")) \
                or name == "lat_mem_rd random size_kb=1":
            print(f"  {name:<40} raw {r0:.3f}  corrected {r1:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
