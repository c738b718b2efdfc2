"""Per-case summary of a run, or of all runs of one kernel pooled."""
import csv
import math

from . import controls, counters, stats
from .compare import case_sort_key, category_of, in_order
from .text import table

NOT_OK_ORDER = ("failed", "crashed", "timeout", "interrupted", "skipped")


def summarize_group(group, estimator=None, control=False):
    """[(Case, stats.Summary)] in category order: the measured cases, or
    with control=True the control cases."""
    out = []
    for c in sorted(group.cases.values(), key=case_sort_key):
        if c.control != control:
            continue
        s = stats.summarize(stats.Series.single(c.rep_arrays(), c.metric, c.name, units=c.rep_units(),
                                                estimator=estimator))
        out.append((c, s))
    return out


def problems(group):
    """Invocations that did not end ok, folded per (case, status, reason):
    [(case, status, reason, reps, where)]."""
    folded = {}
    for run in group.runs:
        for inv in run.invocations:
            if inv["status"] == "ok":
                continue
            reason = inv["reason"] or _last_line(inv["stderr_tail"])
            if not reason:
                if inv["signal"] is not None:
                    reason = f"killed by signal {inv['signal']}"
                elif inv["exit_code"] is not None:
                    reason = f"exit code {inv['exit_code']}"
            key = (inv["case"], inv["status"], reason)
            f = folded.setdefault(key, [])
            if inv["rep_idx"] is not None:
                f.append(inv["rep_idx"])
    rank = {s: i for i, s in enumerate(NOT_OK_ORDER)}
    items = sorted(folded.items(), key=lambda kv: (rank.get(kv[0][1], -1), kv[0][0]))
    return [(case, status, reason, reps) for (case, status, reason), reps in items]


def _last_line(text):
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def row_cells(case, s):
    unit, div = stats.unit_for(case.metric, s.headline)
    f = lambda v: stats.fmt_num(v / div) if not math.isnan(v) else "-"  # noqa: E731
    return [
        case.name, str(s.n_reps), str(s.n_samples), f(s.headline), f(s.median), f(s.best),
        stats.fmt_pct(s.between_cv), f"{f(s.rep_min)}..{f(s.rep_max)}" if s.n_reps > 1 else "-",
        stats.fmt_pct(s.within_cv), stats.mde_text(s.mde), unit,
    ]


HEADERS = ["case", "reps", "samples", "headline", "median", "best", "between CV", "rep medians", "within CV",
           "mde", "unit"]


def format_group(group, estimator=None):
    """Terminal text for one group (one kernel, its runs pooled)."""
    out = []
    runs = group.runs
    title = f"{group.label}: {len(runs)} run(s)"
    if len(runs) == 1:
        title += f" ({runs[0].run_id}, {runs[0].path})"
    out.append(title)
    for run in runs:
        if run.status in ("interrupted", "running"):
            out.append(f"  note: run {run.run_id} is marked '{run.status}' in its meta.json: "
                       f"the cases it has are summarised, others may be missing")
        elif run.status not in ("complete", "unknown"):
            out.append(f"  note: run {run.run_id} has status {run.status!r}")
        if run.bad_lines:
            out.append(f"  note: {run.bad_lines} damaged line(s) of {run.path}/samples.jsonl were skipped")
    rows = summarize_group(group, estimator)
    if not rows:
        out.append("  no usable samples")
    what = ("the Harrell-Davis 20th percentile of the reps' times (noise only adds time)"
            if (estimator or stats.DEFAULT_ESTIMATOR) == "low" else "the median of the rep medians")
    out.append(f"  headline = {what}; median = median of the rep medians; best = lowest latency / highest "
               f"bandwidth of all samples; CV = coefficient of variation; mde = the smallest change a "
               f"comparison with another run like this could detect (95%, power 80%)")
    for cat in in_order(category_of(c) for c, _ in rows):
        cells = [row_cells(c, s) for c, s in rows if category_of(c) == cat]
        if not cells:
            continue
        out.append("")
        out.append(f"== {cat}")
        out.append(table(HEADERS, cells, right={1, 2, 3, 4, 5, 6, 8, 9}))
    live = [s.mde for _, s in rows if not math.isnan(s.mde)]
    if live:
        live.sort()
        out.append("")
        out.append(f"Power: median mde {live[len(live) // 2] * 100:.1f}%; {sum(m <= 0.03 for m in live)} of "
                   f"{len(live)} cases could detect a 3% change against another run like this one.")
    # One-party cases only: a two-party case on one CPU waits for its
    # partner on the run queue by design.
    solo = [c for c, _ in rows if " @" not in c.name]
    n_reps = sum(c.n_reps for c in solo)
    hit = [(c, len(c.disturbed)) for c in solo if c.disturbed]
    if hit:
        n_hit = sum(k for _, k in hit)
        worst = sorted(hit, key=lambda x: -x[1])[:3]
        out.append(f"Noise markers: {n_hit} of {n_reps} reps of one-party cases had a sample that spent more "
                   f"than 10% of its time "
                   f"waiting on a run queue or stolen by the hypervisor (run_delay_ns, steal_ns); most in "
                   + ", ".join(f"{c.name} ({k})" for c, k in worst)
                   + ". They are kept; the low estimator leans on the undisturbed reps.")
    ctl = summarize_group(group, estimator, control=True)
    if ctl:
        out.append("")
        out.append("== controls (the machine, not the kernel: never in the tables above or in comparisons)")
        out.append(table(HEADERS, [row_cells(c, s) for c, s in ctl], right={1, 2, 3, 4, 5, 6, 8, 9}))
        for run in runs:
            out += controls.describe(run)
    if len(runs) > 1:
        ps = [s.run_p for _, s in rows if not math.isnan(s.run_p)]
        if ps:
            n = int(sum(q < 0.05 for q in stats.bh_adjust(ps)))
            out.append("")
            out.append(f"Runs pooled: {len(runs)}; {n} of {len(ps)} cases differ between the runs beyond their "
                       f"reps' noise (one-way test, adjusted)" +
                       (": the machine drifted between runs; comparisons treat the run as the unit there."
                        if n else "."))
    counted = [c for c, _ in rows if c.counters]
    if counted:
        headers, cells = counters.table_rows(counted)
        out.append("")
        out.append("== counters per operation (median over reps of each rep's median of count/iters; "
                   "IPC = instructions/cycles; a counter this machine lacks is left out)")
        out.append(table(headers, cells, right=set(range(1, len(headers)))))
    probs = problems(group)
    if probs:
        out.append("")
        out.append("Cases that did not run cleanly:")
        for case, status, reason, reps in probs:
            where = f" (rep {', '.join(str(r) for r in sorted(set(reps)))})" if reps else ""
            out.append(f"  {status:<11} {case}{where}: {reason or 'no reason recorded'}")
    return "\n".join(out)


CSV_FIELDS = ["host", "kernel", "runs", "category", "case", "bench", "variant", "params", "placement",
              "metric", "unit", "reps", "samples", "headline", "best", "rep_min", "rep_max",
              "between_cv_pct", "within_cv_pct", "median", "mde_pct", "control"]


def write_csv(groups, f):
    w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
    w.writeheader()
    for g in groups:
        for c, s in summarize_group(g) + summarize_group(g, control=True):
            w.writerow({
                "host": g.host, "kernel": g.kernel, "runs": ";".join(r.run_id for r in g.runs),
                "category": category_of(c), "case": c.name, "bench": c.bench, "variant": c.variant,
                "params": c.params, "placement": c.placement, "metric": c.metric,
                "unit": "MB/s" if c.metric == "bandwidth" else "ns", "reps": s.n_reps,
                "samples": s.n_samples, "headline": _num(s.headline), "best": _num(s.best),
                "rep_min": _num(s.rep_min), "rep_max": _num(s.rep_max),
                "between_cv_pct": _num(s.between_cv), "within_cv_pct": _num(s.within_cv),
                "median": _num(s.median), "mde_pct": _num(s.mde * 100 if not math.isnan(s.mde) else math.nan),
                "control": "yes" if c.control else "",
            })


def _num(v):
    return "" if v is None or math.isnan(v) else f"{v:.6g}"
