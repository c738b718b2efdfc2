#!/usr/bin/python3
"""Leave-out figures of the run level (the host's measured run-to-run
drift) on a sensitivity.sh directory holding A/A runs aa1..aaN and taxed
runs: each A/A pair is compared with the run level measured on the other
A/A runs only, and each taxed run against an A/A run with the run level of
the remaining A/A runs; the same pairs without a run level for contrast.
Usage: run_level_figures.py OUT [aa1 aa2 ...]"""
import itertools
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))
from kbench.model import compare, load, stats  # noqa: E402

SYSCALL = ["lat_syscall null", "lat_syscall read", "lat_syscall write", "lat_syscall stat",
           "lat_syscall fstat", "lat_syscall open", "lat_sig install"]
MEMORY = ("bw_mem ", "lat_mem_rd ")


def main():
    out = Path(sys.argv[1])
    aa = sys.argv[2:] or sorted(p.stem for p in out.glob("aa*.dir"))
    taxed = sorted(p.stem for p in out.glob("*.dir") if not p.stem.startswith(("aa", "hog")))
    runs = {}
    for name in aa + taxed:
        got = load.load_runs([Path((out / f"{name}.dir").read_text().strip())], load.Warnings())
        if len(got) == 1:
            runs[name] = got[0]
    opts = compare.Options()
    noise_cache = {}

    def noise(hist):
        key = tuple(sorted(hist))
        if key not in noise_cache:
            noise_cache[key] = compare.measure_run_noise([[runs[h] for h in hist]], opts)
        return noise_cache[key]

    def report(a, b, hist):
        o = compare.Options(run_noise=noise(hist) if hist else None)
        return compare.run_compare(compare.Side(a, [runs[a]]), compare.Side(b, [runs[b]]), o)

    for mode in ("without a run level", "run level from the other A/A runs"):
        print(f"== {mode}")
        flags = []
        for a, b in itertools.combinations([x for x in aa if x in runs], 2):
            hist = [h for h in aa if h not in (a, b) and h in runs] if "other" in mode else []
            rep = report(a, b, hist)
            live = [r.cmp for r in rep.rows if r.cmp.comparable]
            f = [r for r in rep.rows if r.cmp.significant]
            flags.append(len(f))
            mde = statistics.median(c.mde for c in live if not math.isnan(c.mde))
            print(f"A/A {a}/{b}: {len(f)} flagged of {len(live)}; median mde {mde * 100:.1f}%"
                  + ("; " + ", ".join(f"{r.case} {r.cmp.ratio:.3f}" for r in f[:4]) + (" ..." if len(f) > 4 else "")
                     if f else ""))
        print(f"A/A pairs with no case flagged: {sum(n == 0 for n in flags)} of {len(flags)}; "
              f"flags per pair: median {statistics.median(flags)}, max {max(flags)}")
        for t in taxed:
            for a in [x for x in aa if x in runs]:
                hist = [h for h in aa if h != a and h in runs] if "other" in mode else []
                rep = report(a, t, hist)
                by = {r.case: r.cmp for r in rep.rows}
                f = [r for r in rep.rows if r.cmp.significant]
                mem = [r for r in f if r.case.startswith(MEMORY)]
                sysc = " ".join(f"{c.split()[-1]}:{by[c].ratio:.3f}{'*' if by[c].significant else ''}"
                                f"(mde {by[c].mde * 100:.0f}%)" for c in SYSCALL if c in by)
                print(f"{a}->{t}: {len(f)} flagged, {len(mem)} of them bw_mem/lat_mem_rd; {sysc}")
        print()


if __name__ == "__main__":
    main()
