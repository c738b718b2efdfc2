"""Per-case summary of a run, or of all runs of one kernel pooled (the
numbers: views/summary_text.py words them)."""
from . import stats
from .decl import case_sort_key

NOT_OK_ORDER = ("failed", "crashed", "timeout", "interrupted", "skipped")


def summarize_group(group, estimator=None, control=False, noise=None):
    """[(Case, stats.Summary)] in category order: the measured cases, or
    with control=True the control cases.  noise: {host: stats.RunNoise}
    (the mde then includes the drift between runs measured on the host)."""
    out = []
    rn = (noise if noise is not None else {}).get(group.host)
    for c in sorted(group.cases.values(), key=case_sort_key):
        if c.control != control:
            continue
        series = stats.Series.single(c.rep_arrays(), c.metric, c.name, units=c.rep_units(), estimator=estimator)
        s = stats.summarize(series, run_noise=rn.tau2(c.name) if rn else None)
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
