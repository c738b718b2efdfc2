#!/usr/bin/python3
"""Figures of a first comparison (one run a side, no history on the host)
from a first_comparison.sh directory: A/A pairs, the uniform system-call
slowdown (tax*), one system call slowed alone (one* against base*), the
same at --quick --reps 5 (q*), and A/A with 2, 4, 8 runs of history.

The drift prior of every comparison is made from A/A runs that are not in
it (leave-out): the --aa directories' runs plus the new aa* runs other than
the compared ones, so no comparison is judged with a prior measured on its
own runs.  Each line: flags (primary/secondary family), memory-bound flags,
the machine and memory shift, the median mde, the A/A coverage (share of
comparable cases whose interval holds 1).

Usage: first_figures.py NEW_DIR [--aa DIR]... [--inflate X] [--max-df D]
  NEW_DIR  a first_comparison.sh OUT (LABEL.dir files)
  --aa     directories of earlier A/A runs of the same kernel (prior only)
"""
import argparse
import itertools
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))
from kbench.model import compare, drift, load, stats  # noqa: E402

SYSCALL = ["lat_syscall null", "lat_syscall read", "lat_syscall write", "lat_syscall stat",
           "lat_syscall fstat", "lat_syscall open", "lat_sig install"]
MEMORY = ("bw_mem ", "lat_mem_rd ", "bw_file_rd ", "bw_mmap_rd ")


def load_label(d, label):
    f = Path(d) / f"{label}.dir"
    if not f.exists():
        return None
    got = load.load_runs([Path(f.read_text().strip())], load.Warnings())
    return got[0] if len(got) == 1 else None


_ESTIMATES = {}
_PRIORS = {}


def estimates(r, opts):
    """compare.run_estimates, once per run and estimator (a run's own
    estimates do not depend on the runs it is compared with)."""
    key = (r.run_id, opts.estimator)
    if key not in _ESTIMATES:
        _ESTIMATES[key] = compare.run_estimates(r, opts)
    return _ESTIMATES[key]


def make_prior(aa_runs, inflate, max_df):
    key = (frozenset(r.run_id for r in aa_runs), inflate, max_df)
    if key not in _PRIORS:
        _PRIORS[key] = _make_prior(aa_runs, inflate, max_df)
    return _PRIORS[key]


def _make_prior(aa_runs, inflate, max_df):
    opts = compare.Options()
    groups = {}
    for r in aa_runs:
        groups.setdefault((r.host, r.kernel, (r.meta or {}).get("suite_version")), []).append(r)
    ests = [[estimates(r, opts) for r in rs] for rs in groups.values() if len(rs) >= 2]
    med = compare.Options(estimator="median")
    memory = {n for r in aa_runs for n, c in r.cases.items() if compare.domain_of(c) == "memory"}
    bulk = [[{k: v for k, v in estimates(r, med).items() if k in memory} for r in rs]
            for rs in groups.values() if len(rs) >= 2]
    taus = drift.estimate(stats.run_spreads(ests), inflate=inflate, max_df=max_df,
                          bulk=stats.run_spreads(bulk) if BULK else None)
    obj = drift.to_json(taus, {"runs": len(aa_runs), "boots": len({(r.meta or {}).get("boot_id") for r in aa_runs})},
                        "")
    return drift.from_json(obj)


FAMILIES = "tables"
BULK = True
ALONE = True


def run(a_label, ra, b_label, rb, prior, history=None):
    opts = compare.Options(prior=prior, families=FAMILIES, alone=ALONE)
    opts.run_noise = compare.measure_run_noise(history, opts) if history else compare.NoiseMap(prior=prior)
    return compare.run_compare(compare.Side(a_label, [ra]), compare.Side(b_label, [rb]), opts)


def describe(rep):
    live = [r for r in rep.rows if r.cmp.comparable]
    flagged = [r for r in live if r.cmp.significant]
    prim = [r for r in flagged if r.cmp.family.startswith(stats.PRIMARY)]
    mem = [r for r in flagged if r.case.startswith(MEMORY)]
    cover = sum(1 for r in live if not math.isnan(r.cmp.lo) and r.cmp.lo <= 1.0 <= r.cmp.hi)
    mdes = [r.cmp.mde for r in live if not math.isnan(r.cmp.mde)]
    mprim = [r.cmp.mde for r in live if not math.isnan(r.cmp.mde) and r.cmp.family.startswith(stats.PRIMARY)]
    sh = rep.shift
    shift = "n/a" if sh is None else (f"cpu {'SHIFT' if sh.shifted else 'no'} ({sh.change_text}), memory "
                                      f"{'SHIFT' if sh.memory_shifted else 'no'} ({sh.memory_change_text})")
    return (f"{len(flagged)} flagged ({len(prim)} primary, {len(mem)} memory-bound); controls: {shift}; "
            f"interval holds 1 for {100 * cover / max(1, len(live)):.1f}% of {len(live)}; median mde "
            f"{100 * statistics.median(mdes):.1f}%"
            + (f" (primary {100 * statistics.median(mprim):.1f}%)" if mprim else "")
            + (": " + ", ".join(f"{r.case} {r.cmp.ratio:.3f}" for r in flagged[:8]) if flagged else "")
            + ("; memory-bound flagged: " + ", ".join(f"{r.case} {r.cmp.ratio:.3f}" for r in mem) if mem else ""))


def syscall_line(rep):
    by = {r.case: r.cmp for r in rep.rows}
    cells = []
    for c in SYSCALL:
        cm = by.get(c)
        if cm is not None:
            star = "*" if cm.verdict == stats.SLOWER else ("=" if cm.verdict == stats.MACHINE else "")
            cells.append(f"{c.split()[-1]} {cm.ratio:.3f}{star} (mde {100 * cm.mde:.0f}%)")
    return ", ".join(cells)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("new_dir")
    ap.add_argument("--aa", action="append", default=[])
    ap.add_argument("--inflate", type=float, default=drift.DEFAULT_INFLATE)
    ap.add_argument("--max-df", type=float, default=drift.MAX_DF)
    ap.add_argument("--families", choices=("tables", "two", "one"), default="tables")
    ap.add_argument("--no-bulk", action="store_true", help="the prior without the floor of the runs' medians")
    ap.add_argument("--flag-alone", action="store_true",
                    help="judge a case that moved alone like any other (compare --flag-alone)")
    a = ap.parse_args()
    global FAMILIES, BULK, ALONE
    FAMILIES = a.families
    BULK = not a.no_bulk
    ALONE = not a.flag_alone
    new = Path(a.new_dir)
    old_aa = load.load_runs([Path(d) for d in a.aa], load.Warnings()) if a.aa else []
    old_aa = [r for r in old_aa if not r.quick]
    labels = sorted(p.stem for p in new.glob("*.dir"))
    runs = {lb: load_label(new, lb) for lb in labels}
    runs = {k: v for k, v in runs.items() if v is not None}
    aa = {k: v for k, v in runs.items() if k.startswith("aa")}
    print(f"families {a.families}, {'--flag-alone' if a.flag_alone else 'moved-alone rule on'}, "
          f"inflate {a.inflate:g}, max df {a.max_df:g}; earlier A/A runs {len(old_aa)}; new: {', '.join(runs)}")

    def prior_without(*names):
        return make_prior(old_aa + [aa[n] for n in aa if n not in names], a.inflate, a.max_df)

    print("== A/A, one run a side, no history (the prior from the other A/A runs)")
    clean, total = 0, 0
    for x, y in itertools.combinations(aa, 2):
        rep = run(x, aa[x], y, aa[y], prior_without(x, y))
        n = sum(1 for r in rep.rows if r.cmp.comparable and r.cmp.significant)
        clean, total = clean + (n == 0), total + n
        print(f"{x}/{y}: " + describe(rep))
    print(f"A/A: {clean} of {len(list(itertools.combinations(aa, 2)))} pairs flag nothing; {total} cases "
          f"flagged in all")
    shipped = drift.load_prior()
    made_from = set(shipped.source.get("run_ids", [])) if isinstance(getattr(shipped, "source", None), dict) else set()
    fresh = [n for n in aa if aa[n].run_id not in made_from]
    if len(fresh) >= 2:
        print(f"== A/A with the built-in prior (scripts/kbench/model/drift_prior.json), pairs of runs it was not made "
              f"from: {', '.join(fresh)}")
        clean, total, n_pairs = 0, 0, 0
        for x, y in itertools.combinations(fresh, 2):
            rep = run(x, aa[x], y, aa[y], shipped)
            n = sum(1 for r in rep.rows if r.cmp.comparable and r.cmp.significant)
            clean, total, n_pairs = clean + (n == 0), total + n, n_pairs + 1
            print(f"{x}/{y}: " + describe(rep))
        print(f"A/A, built-in prior: {clean} of {n_pairs} pairs flag nothing; {total} cases flagged in all")

    def pairs(title, bases, others, prior_of):
        print(title)
        for t in others:
            for x in bases:
                rep = run(x, runs[x], t, runs[t], prior_of(x))
                print(f"{x}->{t}: " + describe(rep))
                print("   " + syscall_line(rep))

    def starting(prefix):
        return [k for k in runs if k.startswith(prefix)]
    pairs("== every system call slower (tax*), one run a side", list(aa), starting("tax"), prior_without)
    pairs("== getppid alone slower (one* against base*), one run a side", starting("base"), starting("one"),
          lambda x: prior_without())
    pairs("== --quick --reps 5: every system call slower (qtax* against qaa*)", starting("qaa"), starting("qtax"),
          lambda x: prior_without())
    pairs("== --quick --reps 5: getppid alone slower (qone* against qbase*)", starting("qbase"), starting("qone"),
          lambda x: prior_without())
    print("== A/A with the baseline pooled from k runs (the run level measured on its runs, weighed against "
          "the prior), the other side one run")
    every = old_aa + list(aa.values())
    for k in (2, 4, 8):
        for x in aa:
            pool = [aa[n] for n in aa if n != x] + old_aa
            if len(pool) < k:
                print(f"k={k}, other {x}: only {len(pool)} other A/A runs")
                continue
            base = pool[:k]
            rest = [r for r in every if r is not aa[x] and all(r is not b for b in base)]
            src = rest if len(rest) >= 2 else old_aa
            prior = make_prior(src, a.inflate, a.max_df)
            opts = compare.Options(prior=prior, families=FAMILIES, alone=ALONE)
            opts.run_noise = compare.measure_run_noise([base, [aa[x]]], opts)
            rep = compare.run_compare(compare.Side("base", base), compare.Side(x, [aa[x]]), opts)
            note = "" if src is rest else " (the prior overlaps the baseline: not enough other runs)"
            print(f"k={k}, other {x}, prior from {len(src)} runs{note}: " + describe(rep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
