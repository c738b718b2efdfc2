#!/usr/bin/python3
"""What limits a comparison's mde at one run a side: the reps or the runs.

  rep_budget.py --history H1 --history H2 [...] BASE OTHER

BASE and OTHER are two run directories (an A/A pair); the history runs (one
kernel, two or more) give compare the host's run level, as host_scale.py
hands them (--history, --no-history).  Prints:

  - per domain (CPU-, memory-, file-system-bound): how many cases, the
    median share of each case's interval variance that its reps give (the
    rest is the drift between runs, which no rep of a run can shrink), the
    median reps a side, the median mde;
  - the same cases' mde had each side spent its own time per rep (runs.jsonl
    durations) differently: as the driver's budget plans it (first pass of
    5 reps, then reps one at a time by log((n+1)/n) over the case's time
    per rep, 60 at most) against one more rep for every case in turn (the
    rounds before), both at the pair's own total cost, each side's rep
    variance and degrees of freedom scaled from its measured reps.  Printed:
    the median mde over all cases and over the headline system-call cells,
    how many cases reach 12% or less, and the median over every headline
    case (the summary tables').  --weight W (repeatable): also the plan
    with each headline case's gain weighed W times.

It reads no timings of its own: run it between benchmarks, never beside
one.
"""
import argparse
import heapq
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

FIRST_PASS = 5
MAX_REPS = 60


def _reports(args):
    """compare's reports of BASE against OTHER, in this process (the
    comparisons keep their variance parts)."""
    from kbench import cli
    from kbench.model import compare
    captured = []
    orig = compare.run_compare

    def keep(*a, **k):
        captured.append(orig(*a, **k))
        return captured[-1]
    compare.run_compare = keep
    argv = ["--no-history"] + [x for h in args.history for x in ("--history", h)] + [args.base, args.other]
    out = sys.stdout
    try:
        sys.stdout = open("/dev/null", "w")
        cli._compare(argv)
    except (cli.UsageError, cli.Failure) as e:
        sys.exit(f"rep_budget.py: compare: {e}")
    finally:
        sys.stdout.close()
        sys.stdout = out
        compare.run_compare = orig
    return captured


def _cost(run):
    """{case: mean seconds per rep} of a run directory's non-control reps."""
    from kbench.model import load
    tot, n = {}, {}
    for _, r, _ in load.iter_jsonl(load.run_file(run, load.RUNS), lambda msg: None):   # plain or .gz
        if r.get("control") or r.get("duration_ms") is None:
            continue
        tot[r["case"]] = tot.get(r["case"], 0.0) + r["duration_ms"] / 1000
        n[r["case"]] = n.get(r["case"], 0) + 1
    return {c: tot[c] / n[c] for c in tot}


def cases_of(report, costs, domains):
    """The comparable cases with variance parts: dicts of what planning
    needs."""
    out = []
    for row in report.rows:
        c = row.cmp
        if not c.parts or not math.isfinite(c.mde):
            continue
        va, dfa, ka, vb, dfb, kb, tau2, dfr = c.parts
        if ka != 1 or kb != 1 or c.base_reps < 2 or c.other_reps < 2 or row.case not in costs:
            continue
        primary = (c.family or "").startswith("primary")
        out.append(dict(case=row.case, domain=domains.get(row.case, "cpu"), mde=c.mde,
                        rep_share=(va + vb) / (va + vb + 2 * tau2),
                        sa=va * c.base_reps, sb=vb * c.other_reps, na=c.base_reps, nb=c.other_reps,
                        dfa=dfa, dfb=dfb, tau2=tau2, dfr=dfr, cost=costs[row.case],
                        primary=primary, head=row.case.startswith("lat_syscall ") and primary))
    return out


def mde_at(x, n):
    """The case's mde with n reps a side: each side's rep variance over n,
    its degrees of freedom grown with n, the run drift as measured."""
    from kbench.model import stats
    pa, pb, pr = x["sa"] / n, x["sb"] / n, 2 * x["tau2"]
    dfa = x["dfa"] * (n - 1) / (x["na"] - 1)
    dfb = x["dfb"] * (n - 1) / (x["nb"] - 1)
    total = pa + pb + pr
    den = sum(v * v / d for v, d in ((pa, dfa), (pb, dfb), (pr, x["dfr"])) if v > 0 and d > 0)
    return stats.detectable_change(math.sqrt(total), total * total / den if den > 0 else math.inf)


def plan(cases, budget, gain, weight=None):
    """Reps per case from FIRST_PASS up, one at a time to the best gain(n)
    per second (times the case's weight, 1 by default), until the budget
    (seconds) is spent."""
    w = weight or [1.0] * len(cases)
    n = [FIRST_PASS] * len(cases)
    used = sum(x["cost"] * FIRST_PASS for x in cases)
    heap = [(-w[i] * gain(FIRST_PASS) / x["cost"], i) for i, x in enumerate(cases)]
    heapq.heapify(heap)
    while heap:
        _, i = heapq.heappop(heap)
        if used + cases[i]["cost"] > budget:
            continue
        n[i] += 1
        used += cases[i]["cost"]
        if n[i] < MAX_REPS:
            heapq.heappush(heap, (-w[i] * gain(n[i]) / cases[i]["cost"], i))
    return n


def uniform(cases, budget):
    """One more rep for every case in turn (the cheapest first in a round
    that does not fit), from FIRST_PASS, until the budget is spent."""
    n = [FIRST_PASS] * len(cases)
    used = sum(x["cost"] * FIRST_PASS for x in cases)
    order = sorted(range(len(cases)), key=lambda i: cases[i]["cost"])
    while True:
        added = False
        for i in order:
            if n[i] < MAX_REPS and used + cases[i]["cost"] <= budget:
                n[i] += 1
                used += cases[i]["cost"]
                added = True
        if not added:
            return n


def line(label, cases, n=None):
    """The mde's median over the cases and their headline system-call
    cells with n reps a side (None: as compare measured them)."""
    m = [x["mde"] for x in cases] if n is None else [mde_at(x, k) for x, k in zip(cases, n)]
    head = [v for v, x in zip(m, cases) if x["head"]]
    prim = [v for v, x in zip(m, cases) if x["primary"]]
    return (f"{label}: median mde {100 * statistics.median(m):.1f}%, headline syscall "
            f"{100 * statistics.median(head) if head else math.nan:.1f}%, "
            f"{sum(v <= 0.12 for v in m)} of {len(m)} cases at 12% or less, headline cases "
            f"{100 * statistics.median(prim) if prim else math.nan:.1f}%")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--history", action="append", required=True, metavar="RUN",
                    help="a history run (repeat: two or more runs of one kernel)")
    ap.add_argument("--weight", type=float, action="append", default=[], metavar="W",
                    help="also the plan with each headline case's gain (the summary tables' cases) "
                         "weighed W times (repeatable)")
    ap.add_argument("base", metavar="BASE")
    ap.add_argument("other", metavar="OTHER")
    args = ap.parse_args(argv)
    for w in args.weight:
        if not w > 0:           # nan too
            ap.error(f"--weight {w:g}: a weight is above 0")
    for p in args.history + [args.base, args.other]:
        if not any((Path(p) / f).is_file() for f in ("runs.jsonl", "runs.jsonl.gz")):
            ap.error(f"{p}: not a run directory (no runs.jsonl)")
    from kbench.model import compare, load
    reports = _reports(args)
    if len(reports) != 1:
        sys.exit("rep_budget.py: compare gave no comparison of the two runs")
    domains = {n: compare.domain_of(c) for n, c in load.load_run(Path(args.base), load.Warnings()).cases.items()}
    cb, co = _cost(args.base), _cost(args.other)
    costs = {c: (cb[c] + co[c]) / 2 for c in cb if c in co}
    cases = cases_of(reports[0], costs, domains)
    if not cases:
        sys.exit("rep_budget.py: no case with a run level (are the history runs of one kernel?)")
    for d in ("cpu", "memory", "fs"):
        v = [x for x in cases if x["domain"] == d]
        if v:
            print(f"{d}: {len(v)} cases, median share of the variance from the reps "
                  f"{statistics.median(x['rep_share'] for x in v):.2f}, median reps a side "
                  f"{statistics.median((x['na'] + x['nb']) / 2 for x in v):g}, median mde "
                  f"{100 * statistics.median(x['mde'] for x in v):.1f}%")
    budget = sum(x["cost"] * (x["na"] + x["nb"]) / 2 for x in cases)
    print(f"the pair's own reps ({budget:.0f} s a side)")
    print(line("  as measured", cases))
    print(line("  one more rep for every case in turn", cases, uniform(cases, budget)))
    gain = lambda k: math.log1p(1.0 / k)      # noqa: E731
    print(line("  planned by gain per second", cases, plan(cases, budget, gain)))
    for w in args.weight:
        n = plan(cases, budget, gain, [w if x["primary"] else 1.0 for x in cases])
        print(line(f"  planned, the headline cases weighed {w:g}x", cases, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
