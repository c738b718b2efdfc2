"""Per-case summary of a run, or of all runs of one kernel pooled (the
numbers: views/summary_text.py words them)."""
from types import SimpleNamespace

from . import judge, stats
from .decl import case_sort_key
from .defaults import DEFAULT_BOOT, DEFAULT_SEED

NOT_OK_ORDER = ("failed", "crashed", "timeout", "interrupted", "skipped")


def summarize_group(group, estimator=None, control=False, noise=None):
    """[(Case, stats.Summary)] in category order: the measured cases, or
    with control=True the control cases.  noise: {host: judge.HostRuns}
    (the mde is then the run-level model's: the drift between runs as the
    host's runs and the prior measure it)."""
    out = []
    rn = (noise if noise is not None else {}).get(group.host)
    cases = [c for c in sorted(group.cases.values(), key=case_sort_key) if c.control == control]
    plans = {}
    if rn and cases:
        opts = SimpleNamespace(estimator=estimator or stats.DEFAULT_ESTIMATOR, n_boot=DEFAULT_BOOT,
                               seed=DEFAULT_SEED, relative=True, prior=rn.prior)
        domains = ["control" if c.control else (c.decl.get("domain") or "cpu") for c in cases]
        plans = judge.plan(group.runs, rn, [c.name for c in cases], domains, opts)
    for c in cases:
        series = stats.Series.single(c.rep_arrays(), c.metric, c.name, units=c.rep_units(), estimator=estimator)
        out.append((c, stats.summarize(series, plan=plans.get(c.name))))
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
