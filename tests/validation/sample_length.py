#!/usr/bin/python3
# Usage: tests/validation/sample_length.py [ROUNDS]   (after make; alone on the machine)
"""Sample length (--min-sample-ms): the evidence for the default.  Interleaved rounds of one process
per (case, --min-sample-ms), 3 samples each as the driver runs them; per
setting: median of process medians, between-process CV, within-process CV,
iterations per sample, wall time per process, and the precision per second
(CV_between^2 x wall time: lower is better)."""
import json, math, statistics, subprocess, sys, time
B = str(__import__("pathlib").Path(__file__).resolve().parent.parent.parent / "build" / "bin")
CASES = [("lat_syscall", ["null"]), ("lat_pipe", ["rt", "--partner-cpu", "1"]), ("lat_proc", ["fork"]),
         ("lat_syscall", ["stat"])]
MS = [1, 2, 5, 10]
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 12
res = {}
for r in range(ROUNDS):
    order = [(c, m) for c in range(len(CASES)) for m in MS]
    if r % 2:
        order.reverse()
    for ci, ms in order:
        b, args = CASES[ci]
        t0 = time.monotonic()
        p = subprocess.run([f"{B}/{b}", *args, "--cpu", "1", "--samples", "3", "--min-sample-ms", str(ms)],
                           capture_output=True, text=True, timeout=120)
        wall = time.monotonic() - t0
        s = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
        v = [x["ns_per_op"] for x in s]
        it = [x["iters"] for x in s]
        res.setdefault((ci, ms), []).append((statistics.median(v), v, it, wall))
for ci, (b, args) in enumerate(CASES):
    for ms in MS:
        rows = res[(ci, ms)]
        meds = [x[0] for x in rows]
        cvb = statistics.stdev(meds) / statistics.mean(meds)
        cvw = statistics.median(statistics.stdev(x[1]) / statistics.mean(x[1]) for x in rows)
        wall = statistics.median(x[3] for x in rows)
        its = statistics.median(i for x in rows for i in x[2])
        print(f"{b} {args[0]:5s} ms={ms:2d}: median {statistics.median(meds):9.1f} ns  between-CV {cvb*100:5.1f}%  "
              f"within-CV {cvw*100:5.1f}%  iters/sample {its:8.0f}  wall/process {wall*1000:6.0f} ms  "
              f"CV^2*wall {cvb*cvb*wall*1e4:7.3f}")
