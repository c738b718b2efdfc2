#!/usr/bin/python3
"""A/A and known-slowdown figures of the runs in one sensitivity.sh directory,
with the run level measured on earlier A/A runs kept in groups (one group per
version of the suite: runs of two versions are never replicates), and on the
new A/A runs not in the comparison (leave-out).  Each comparison is shown
without a run level and with it.

Usage: grouped_figures.py NEW_DIR [--group DIR:aa1,aa2,...]... [--added RUN=NS]...
  NEW_DIR   a sensitivity.sh OUT: A/A runs aa*, taxed runs t10*/t300*
  --group   earlier A/A runs (names of DIR/NAME.dir files), one group; the
            new A/A runs left out of a comparison join the last group
            (give the runs of the new runs' suite version last)
  --added   the calibrated extra ns per system call of a taxed run
            (syscall_tax.sh calibrate), for the ratio errors; open is two calls

Example (the reference's quiet-machine figures):
  grouped_figures.py results-validation/sens3 \\
      --group results-validation/sens1:aa1,aa2,aa3,aa4,aa5,aa6 --group results-validation/sens2:aa7,aa8 \\
      --added t10b=112.5 --added t10c=118 --added t300d=315.3"""
import argparse
import itertools
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))
from kbench.model import compare, load  # noqa: E402
from kbench.views import compare_text

SYSCALL = ["lat_syscall null", "lat_syscall read", "lat_syscall write", "lat_syscall stat",
           "lat_syscall fstat", "lat_syscall open", "lat_sig install"]
CALLS = {"lat_syscall open": 2}
MEMORY = ("bw_mem ", "lat_mem_rd ")


def load_named(d, name):
    got = load.load_runs([Path((Path(d) / f"{name}.dir").read_text().strip())], load.Warnings())
    if len(got) != 1:
        sys.exit(f"grouped_figures: {d}/{name}: not one usable run")
    return got[0]


def with_rest(groups, rest):
    """The groups, the runs left out joining the last one."""
    return groups[:-1] + [groups[-1] + rest] if groups else [rest]


def compare_pair(a, ra, b, rb, groups):
    noise = compare.measure_run_noise(groups, compare.Options()) if groups else None
    return compare.run_compare(compare.Side(a, [ra]), compare.Side(b, [rb]), compare.Options(run_noise=noise))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("new_dir")
    ap.add_argument("--group", action="append", default=[])
    ap.add_argument("--added", action="append", default=[])
    a = ap.parse_args()
    groups = []
    for g in a.group:
        d, _, names = g.partition(":")
        groups.append([load_named(d, n) for n in names.split(",") if n])
    added = {k: float(v) for k, _, v in (x.partition("=") for x in a.added)}
    new = Path(a.new_dir)
    aa = {p.stem: load_named(new, p.stem) for p in sorted(new.glob("aa*.dir"), key=lambda p: (len(p.stem), p.stem))}
    taxed = {p.stem: load_named(new, p.stem) for p in sorted(new.glob("t*.dir"))}
    print("== A/A")
    for x, y in itertools.combinations(aa, 2):
        rest = [aa[n] for n in aa if n not in (x, y)]
        for label, g in (("without a run level", None), ("with the run level", with_rest(groups, rest))):
            rep = compare_pair(x, aa[x], y, aa[y], g)
            live = [r for r in rep.rows if r.cmp.comparable]
            flagged = [r for r in live if r.cmp.significant]
            solo = [abs(r.cmp.ratio - 1) for r in live if " @" not in r.case and r.cmp.ratio > 0]
            mde = statistics.median(r.cmp.mde for r in live if not math.isnan(r.cmp.mde))
            print(f"{x}/{y} {label}: {len(flagged)} flagged; one-party within ±5% "
                  f"{100 * sum(v <= 0.05 for v in solo) / len(solo):.1f}% of {len(solo)}, |change| median "
                  f"{100 * statistics.median(solo):.1f}%; median mde {100 * mde:.1f}%"
                  + (": " + ", ".join(f"{r.case} {r.cmp.ratio:.3f}" for r in flagged[:6]) if flagged else ""))
            if g:
                print("   " + "\n   ".join(compare_text.more_runs_lines(rep, compare.Options())))
    print("== known slowdowns")
    for t, rt in taxed.items():
        for x in aa:
            rest = [aa[n] for n in aa if n != x]
            for label, g in (("without", None), ("with", with_rest(groups, rest))):
                rep = compare_pair(x, aa[x], t, rt, g)
                by = {r.case: r.cmp for r in rep.rows}
                flagged = [r for r in rep.rows if r.cmp.significant]
                cells, errs, slower = [], [], 0
                for c in SYSCALL:
                    cm = by.get(c)
                    if cm is None:
                        continue
                    slower += cm.verdict == "significantly slower"
                    if t in added:
                        errs.append(cm.ratio / ((cm.base + added[t] * CALLS.get(c, 1)) / cm.base) - 1)
                    cells.append(f"{c.split()[-1]} {cm.ratio:.3f}{'*' if cm.verdict == 'significantly slower' else ''}"
                                 f" (mde {100 * cm.mde:.0f}%)")
                shift = ", ".join(f"{r.case.split()[-1]} {r.cmp.ratio:.3f}" for r in rep.shift.rows)
                err = f"; ratio error {100 * min(errs):+.1f}..{100 * max(errs):+.1f}%" if errs else ""
                print(f"{x}->{t} {label} the run level: machine shift {'YES' if rep.shift.shifted else 'no'} ({shift}); "
                      f"{len(flagged)} flagged, {sum(r.case.startswith(MEMORY) for r in flagged)} bw_mem/lat_mem_rd; "
                      f"syscall-bound flagged slower {slower}/{len(cells)}{err}")
                print("   " + ", ".join(cells))


if __name__ == "__main__":
    main()
