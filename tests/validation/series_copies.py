#!/usr/bin/python3
"""A series of KERNELS kernels x RUNS runs made from the recorded run
(tests/data/recorded), for the speed of report --series and a look at its
page: each copy gets its own run id, kernel release (6.1.0, 6.2.0, ...)
and a seeded jitter of every rep (1% lognormal, so that runs differ);
`--step CASE_REGEX=KERNEL_INDEX:FACTOR` plants a step (the case's times
times FACTOR from that kernel on; `:FACTOR:UNTIL` up to UNTIL, excluded).

Usage: series_copies.py OUT [--kernels 20] [--runs 2] [--step REGEX=3:1.15] ...
then: time scripts/report --series OUT --out OUT/index.html
"""
import argparse
import json
import math
import random
import re
import sys
from pathlib import Path

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--kernels", type=int, default=20)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--step", action="append", default=[], metavar="REGEX=K:F[:UNTIL]")
    a = ap.parse_args(argv)
    steps = []
    for s in a.step:
        pat, _, spec = s.rpartition("=")
        parts = spec.split(":")
        steps.append((re.compile(pat), int(parts[0]), float(parts[1]), int(parts[2]) if len(parts) > 2 else None))
    src = next(p.parent for p in RECORDED.rglob("meta.json"))
    meta0 = json.loads((src / "meta.json").read_text())
    lines0 = [json.loads(x) for x in (src / "samples.jsonl").read_text().splitlines() if x.strip()]
    runs0 = (src / "runs.jsonl").read_text().splitlines()
    host = meta0["host"]
    for k in range(1, a.kernels + 1):
        kernel = f"6.{k}.0"
        for r in range(a.runs):
            rng = random.Random(k * 1000 + r)
            run_id = f"20250101T{k:02d}{r:02d}00Z-{k:03d}{r:03d}"
            d = Path(a.out) / host / kernel / run_id
            d.mkdir(parents=True, exist_ok=True)
            meta = dict(meta0, run_id=run_id, kernel_release=kernel, kernel_version=f"#1 SMP {kernel}",
                        boot_id=f"boot-{k}-{r}")
            (d / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
            jitter = {}
            out = []
            for obj in lines0:
                key = (obj.get("case"), obj.get("rep_idx"))
                if key not in jitter:
                    f = math.exp(rng.gauss(0.0, 0.01))
                    for pat, at, fac, until in steps:
                        if pat.search(str(obj.get("case"))) and k >= at and (until is None or k < until):
                            f *= fac
                    jitter[key] = f
                o = dict(obj, run_id=run_id)
                o["elapsed_ns"] = max(1, int(round(obj["elapsed_ns"] * jitter[key])))
                o["ns_per_op"] = o["elapsed_ns"] / obj["iters"]
                out.append(json.dumps(o, separators=(",", ":")))
            (d / "samples.jsonl").write_text("\n".join(out) + "\n")
            (d / "runs.jsonl").write_text("\n".join(json.dumps(dict(json.loads(x), run_id=run_id))
                                                    for x in runs0 if x.strip()) + "\n")
    print(f"{a.kernels} kernels x {a.runs} runs under {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
