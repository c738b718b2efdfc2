#!/usr/bin/python3
"""The figures of a sensitivity.sh directory: A/A stability and flags, the
injected syscall slowdowns found (or not) and their ratios against the
calibrated truth, the machine-shift run.  Usage: sensitivity_figures.py OUT"""
import math
import os
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))
from kbench.model import compare, load, stats  # noqa: E402
from kbench.views import compare_text

SYSCALLS_PER_OP = {"lat_syscall null": 1, "lat_syscall read": 1, "lat_syscall write": 1,
                   "lat_syscall stat": 1, "lat_syscall fstat": 1, "lat_syscall open": 2,
                   "lat_sig install": 1}
NOT_SYSCALL = re.compile(r"^(bw_mem|lat_mem_rd) ")


def side(out, label):
    """A side of one run ("aa1") or of several pooled ("aa1+aa3")."""
    files = [out / f"{part}.dir" for part in label.split("+")]
    if not all(f.exists() for f in files):
        return None
    runs = load.load_runs([Path(f.read_text().strip()) for f in files], load.Warnings())
    return compare.Side(label, runs) if len(runs) == len(files) else None


def run_facts(s):
    if len(s.runs) > 1:
        return f"{s.label}: {len(s.runs)} runs pooled"
    r = s.runs[0]
    reps = [c.n_reps for c in r.cases.values() if not c.control]
    m = r.meta
    return (f"{s.label}: {len(r.cases)} cases ({sum(c.control for c in r.cases.values())} controls), reps per case "
            f"min {min(reps)} / median {statistics.median(reps):.0f} / max {max(reps)}, "
            f"{len(r.invocations)} invocations, {m.get('driver_seconds')} s, {m.get('budget_rounds')} budget rounds")


def report(a, b, estimator="low"):
    opts = compare.Options(estimator=estimator)
    # fresh sides: the estimate cache is per estimator anyway
    return compare.run_compare(a, b, opts)


def counts(rep):
    c = {}
    for r in rep.rows:
        c[r.cmp.verdict] = c.get(r.cmp.verdict, 0) + 1
    return ", ".join(f"{v} {k}" for k, v in sorted(c.items(), key=lambda kv: -kv[1]))


def shift_text(rep):
    if rep.shift is None:
        return "no controls"
    ctl = "; ".join(f"{r.case.split()[1]} {r.cmp.ratio:.3f} ({r.cmp.verdict})" for r in rep.shift.rows)
    return f"machine shift {'DETECTED' if rep.shift.shifted else 'not detected'}: {ctl}"


def aa(out, a, b):
    print(f"== A/A: {a.label} vs {b.label}")
    for est in ("low", "median"):
        rep = report(a, b, est)
        pinned = [r for r in rep.rows if r.cmp.comparable and a.cases[r.case].placement == "pinned"]
        dev = sorted(abs(r.cmp.ratio - 1) for r in pinned)
        within = sum(d <= 0.05 for d in dev)
        alldev = sorted(abs(r.cmp.ratio - 1) for r in rep.rows if r.cmp.comparable)
        mdes = sorted(r.cmp.mde for r in rep.rows if r.cmp.comparable and not math.isnan(r.cmp.mde))
        print(f"  [{est}] flagged: {sum(r.cmp.significant for r in rep.rows)}; verdicts: {counts(rep)}")
        print(f"  [{est}] pinned one-party cases within +-5%: {within}/{len(dev)} = {within / len(dev) * 100:.1f}%; "
              f"|change| median {statistics.median(dev) * 100:.1f}%, p90 {dev[int(0.9 * len(dev))] * 100:.1f}%")
        print(f"  [{est}] all cases: |change| median {statistics.median(alldev) * 100:.1f}%, "
              f"p90 {alldev[int(0.9 * len(alldev))] * 100:.1f}%; mde median {statistics.median(mdes) * 100:.1f}%, "
              f"{sum(m <= 0.03 for m in mdes)}/{len(mdes)} cases with mde <= 3%")
        print(f"  [{est}] {shift_text(rep)}")


def calibrated_delta(out, n):
    f = out / "calibration.txt"
    if not f.exists():
        return None
    for line in f.read_text().splitlines():
        w = line.split()
        if len(w) == 6 and w[0] == str(n) and w[5] not in ("-",):
            try:
                return float(w[5])
            except ValueError:
                pass
    return None


def taxed(out, a, b, name, n):
    delta = calibrated_delta(out, n)
    print(f"== {name}: syscall_tax {n}" + (f" (calibrated: {delta:+.0f} ns per system call)" if delta else ""))
    for est in ("low", "median"):
        rep = report(a, b, est)
        by = {r.case: r for r in rep.rows}
        print(f"  [{est}] verdicts: {counts(rep)}; {shift_text(rep)}")
        wrong = [r.case for r in rep.rows if r.cmp.significant and NOT_SYSCALL.match(r.case)]
        print(f"  [{est}] bw_mem / lat_mem_rd cases flagged: {len(wrong)} {wrong[:5]}")
        for case, k in SYSCALLS_PER_OP.items():
            r = by.get(case)
            if r is None:
                continue
            c = r.cmp
            line = (f"    {case:<18} {c.base:8.0f} -> {c.other:8.0f} ns  ratio {c.ratio:.3f} "
                    f"[{c.lo:.3f}..{c.hi:.3f}]  mde {c.mde_text:>6}  {c.verdict}")
            if delta:
                true = (c.base + k * delta) / c.base
                line += f"  expected {true:.3f} (error {(c.ratio / true - 1) * 100:+.1f}%)"
            print(line)


def hog(out, a, b):
    print("== machine shift on purpose: aa1 vs hog (duty_hog on every CPU during hog)")
    rep = report(a, b)
    print(f"  {shift_text(rep)}; overall control ratio {rep.shift.ratio:.3f}" if rep.shift else "  no controls")
    print(f"  verdicts: {counts(rep)}")
    print("  first lines of the report:")
    for line in compare_text.format_report(rep).splitlines()[:3]:
        print("    " + line[:400])


def main(argv):
    out = Path(argv[1])
    s = {k: side(out, k) for k in ("aa1", "aa2", "t10", "t300", "hog", "aa3", "aa4", "t300b", "aa5", "aa6",
                                   "aa1+aa3", "aa2+aa4", "t300+t300b")}
    for k, v in s.items():
        if v is not None and len(v.runs) == 1:
            print(run_facts(v))
    if s["aa1"] and s["aa2"]:
        aa(out, s["aa1"], s["aa2"])
    if s["aa1"] and s["t10"]:
        taxed(out, s["aa1"], s["t10"], "+10% on null: aa1 vs t10", os.environ.get("N10", "1"))
    if s["aa2"] and s["t300"]:
        taxed(out, s["aa2"], s["t300"], "+300 ns per syscall: aa2 vs t300", os.environ.get("N300", "700"))
    if s["aa1"] and s["hog"]:
        hog(out, s["aa1"], s["hog"])
    # More runs (RUNS="aa3 t300b aa4"): other single-run A/A pairs, and two
    # runs per side pooled.
    if s["aa3"] and s["aa4"]:
        aa(out, s["aa3"], s["aa4"])
    if s["aa5"] and s["aa6"]:
        aa(out, s["aa5"], s["aa6"])
    if s["aa4"] and s["t300b"]:
        taxed(out, s["aa4"], s["t300b"], "+300 ns per syscall: aa4 vs t300b", os.environ.get("N300", "700"))
    if s["aa1+aa3"] and s["aa2+aa4"]:
        aa(out, s["aa1+aa3"], s["aa2+aa4"])
    if s["aa2+aa4"] and s["t300+t300b"]:
        taxed(out, s["aa2+aa4"], s["t300+t300b"], "+300 ns per syscall, two runs a side: aa2+aa4 vs t300+t300b",
              os.environ.get("N300", "700"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
