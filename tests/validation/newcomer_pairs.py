#!/usr/bin/python3
"""What scripts/compare itself says of each pair of a first_comparison.sh
directory, as a newcomer runs it: one run a side, --no-history, the
built-in prior (or --prior FILE).  first_figures.py judges every pair with
a prior made without the pair's runs; this one judges with the prior the
user gets.  Sections: A/A (aa*, and the --aa directories' runs), every
system call slower (tax* against aa*; pass: the seven syscall-bound cases
flagged slower, no bw_mem, lat_mem_rd or bw_file_rd case flagged), one
call alone (one* against base*; pass: lat_syscall null flagged and
nothing but it and its scaling copies), and at --quick (at
first_comparison.sh's QREPS) A/A (qaa*) and the same tax (qtax* against
qaa*).  Each pair: ok or BAD, the machine and memory
shifts, what was flagged.

Usage: newcomer_pairs.py NEW_DIR [--aa DIR] [--prior FILE]
"""
import argparse
import itertools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from first_figures import SYSCALL  # the seven syscall-bound cases, as first_figures.py judges them

ROOT = Path(__file__).resolve().parent.parent.parent
MEMORY = ("bw_mem", "lat_mem_rd", "bw_file_rd")   # the issue's: no case of these may be flagged


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("new_dir", type=Path)
    ap.add_argument("--aa", type=Path, help="a directory of earlier A/A runs of the same kernel")
    ap.add_argument("--prior", help="compare --prior FILE (default: the built-in prior)")
    a = ap.parse_args()
    runs = {p.stem: p.read_text().strip() for p in sorted(a.new_dir.glob("*.dir"))}
    if not runs:
        sys.exit(f"newcomer_pairs.py: no LABEL.dir file in {a.new_dir}")
    with tempfile.TemporaryDirectory(prefix="kbench-pairs-") as tmp:
        report(a, runs, Path(tmp))
    return 0


def report(a, runs, tmp):
    def flagged(x, y):
        out = tmp / "c.json"
        cmd = [sys.executable, str(ROOT / "scripts" / "compare"), "--no-history", x, y, "--json", str(out)]
        p = subprocess.run(cmd + (["--prior", a.prior] if a.prior else []), capture_output=True, text=True)
        if p.returncode not in (0, 1):
            sys.exit(f"newcomer_pairs.py: compare {x} {y} failed: {p.stderr.strip()}")
        c = json.loads(out.read_text())[0]
        return c, [(r["case"], r["ratio"]) for r in c["rows"]
                   if r["verdict"].startswith("significantly") and not r.get("control")]

    def section(title, pairs, judge):
        if not pairs:
            return
        print("==", title)
        good = 0
        for x, y in pairs:
            c, f = flagged(runs.get(x, x), runs.get(y, y))
            ok, why = judge(f)
            good += ok
            print(f"  {Path(x).name}->{Path(y).name}: {'ok ' if ok else 'BAD'} machine shift {c['machine_shift']}, "
                  f"memory shift {c['memory_shift']}: {why}")
        print(f"  {good} of {len(pairs)} pass")

    def aa_judge(f):
        return not f, " ".join(f"{n} {r:.3f}" for n, r in f) or "nothing flagged"

    def tax_judge(f):
        names = {n for n, _ in f}
        missed = [s for s in SYSCALL if s not in names]
        mem = [f"{n} {r:.3f}" for n, r in f if n.split()[0] in MEMORY]
        return not missed and not mem, f"{len(f)} flagged; missed {missed or 'none'}; memory-bound {mem or 'none'}"

    def one_judge(f):
        names = {n for n, _ in f}
        other = [f"{n} {r:.3f}" for n, r in f if not n.startswith("lat_syscall null")]
        return "lat_syscall null" in names and not other, \
            f"null {'flagged' if 'lat_syscall null' in names else 'MISSED'}; others {other or 'none'}"

    lab = lambda prefix: sorted((k for k in runs if k.startswith(prefix) and k[len(prefix):].isdigit()),  # noqa: E731
                                key=lambda k: int(k[len(prefix):]))
    aa = lab("aa")
    section("A/A, one run a side", list(itertools.combinations(aa, 2)), aa_judge)
    if a.aa:
        old = sorted(str(p.parent) for p in a.aa.rglob("meta.json"))
        section(f"A/A, the runs of {a.aa}", list(itertools.combinations(old, 2)), aa_judge)
    section("every system call slower (tax* against aa*)", [(x, t) for t in lab("tax") for x in aa], tax_judge)
    section("one call slower alone (one* against base*)", [(b, o) for b in lab("base") for o in lab("one")], one_judge)
    section("--quick A/A, one run a side (qaa*)", list(itertools.combinations(lab("qaa"), 2)), aa_judge)
    section("--quick, every system call slower (qtax* against qaa*)",
            [(x, t) for t in lab("qtax") for x in lab("qaa")], tax_judge)


if __name__ == "__main__":
    sys.exit(main())
