"""Per-case summary of a run, or of all runs of one kernel pooled."""
import csv
import math

from . import counters, stats
from .compare import CATEGORIES, case_sort_key, category_of
from .text import table

NOT_OK_ORDER = ("failed", "crashed", "timeout", "interrupted", "skipped")


def summarize_group(group):
    """[(Case, stats.Summary)] in category order."""
    out = []
    for c in sorted(group.cases.values(), key=case_sort_key):
        s = stats.summarize(stats.Series.single(c.rep_arrays(), c.metric, c.name))
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
        case.name, str(s.n_reps), str(s.n_samples), f(s.headline), f(s.best),
        stats.fmt_pct(s.between_cv), f"{f(s.rep_min)}..{f(s.rep_max)}" if s.n_reps > 1 else "-",
        stats.fmt_pct(s.within_cv), unit,
    ]


HEADERS = ["case", "reps", "samples", "headline", "best", "between CV", "rep medians", "within CV", "unit"]


def format_group(group):
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
    rows = summarize_group(group)
    if not rows:
        out.append("  no usable samples")
    out.append("  headline = median of the rep medians; best = lowest latency / highest bandwidth of all "
               "samples; CV = coefficient of variation")
    for cat in CATEGORIES:
        cells = [row_cells(c, s) for c, s in rows if category_of(c) == cat]
        if not cells:
            continue
        out.append("")
        out.append(f"== {cat}")
        out.append(table(HEADERS, cells, right={1, 2, 3, 4, 5, 7}))
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
              "between_cv_pct", "within_cv_pct"]


def write_csv(groups, f):
    w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
    w.writeheader()
    for g in groups:
        for c, s in summarize_group(g):
            w.writerow({
                "host": g.host, "kernel": g.kernel, "runs": ";".join(r.run_id for r in g.runs),
                "category": category_of(c), "case": c.name, "bench": c.bench, "variant": c.variant,
                "params": c.params, "placement": c.placement, "metric": c.metric,
                "unit": "MB/s" if c.metric == "bandwidth" else "ns", "reps": s.n_reps,
                "samples": s.n_samples, "headline": _num(s.headline), "best": _num(s.best),
                "rep_min": _num(s.rep_min), "rep_max": _num(s.rep_max),
                "between_cv_pct": _num(s.between_cv), "within_cv_pct": _num(s.within_cv),
            })


def _num(v):
    return "" if v is None or math.isnan(v) else f"{v:.6g}"
