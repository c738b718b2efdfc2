"""Perf counters per operation (samples taken with --counters).

A sample carries each counter's total over the sample; per operation it is
total / iters.  Like the time, a case's value is the median over reps of
each rep's median, and instructions per cycle (IPC) is worked out per rep
where both instructions and cycles were counted.  A counter that was null
(the machine lacks it) has no value: it is left out, never shown as zero.
"""
import math

import numpy as np

from .load import COUNTER_KEYS

# Short column names for the terminal and the page.
LABELS = {
    "instructions": "instr", "cycles": "cycles", "branches": "branches", "branch_misses": "br-miss",
    "cache_references": "cache-ref", "cache_misses": "cache-miss", "l1d_read_misses": "L1d-miss",
    "dtlb_misses": "dTLB-miss", "task_clock_ns": "task-ns", "context_switches": "ctx-sw",
    "cpu_migrations": "migr", "page_faults": "faults", "ipc": "IPC",
}


def headlines(case):
    """{counter: per-operation value} of a case, with 'ipc' where possible."""
    out = {}
    for k in COUNTER_KEYS:
        by_rep = case.counters.get(k)
        if by_rep:
            out[k] = float(np.median([np.median(v) for v in by_rep.values()]))
    ins, cyc = case.counters.get("instructions", {}), case.counters.get("cycles", {})
    per_rep = [np.median(ins[r]) / np.median(cyc[r]) for r in ins if r in cyc and np.median(cyc[r]) > 0]
    if per_rep:
        out["ipc"] = float(np.median(per_rep))
    return out


def columns(values_list):
    """The counters present in any of the dicts, in the standard order."""
    present = set().union(*values_list) if values_list else set()
    return [k for k in COUNTER_KEYS + ("ipc",) if k in present]


def fmt(v):
    if v is None or math.isnan(v):
        return "-"
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def table_rows(cases):
    """(headers, rows) for the cases that have counters: one row per case,
    one column per counter present anywhere."""
    vals = [(c, headlines(c)) for c in cases]
    vals = [(c, v) for c, v in vals if v]
    cols = columns([v for _, v in vals])
    headers = ["case"] + [LABELS[k] for k in cols]
    rows = [[c.name] + [fmt(v.get(k)) for k in cols] for c, v in vals]
    return headers, rows


def changes(base_case, other_case):
    """[(counter, base, other, change %)] for the counters both cases have."""
    if base_case is None or other_case is None:
        return []
    a, b = headlines(base_case), headlines(other_case)
    out = []
    for k in columns([a, b]):
        if k in a and k in b:
            if a[k] > 0:
                pct = (b[k] / a[k] - 1.0) * 100.0
            else:
                pct = 0.0 if b[k] == 0 else math.nan  # none before: no percentage
            out.append((k, a[k], b[k], pct))
    return out


def fmt_change(pct):
    if pct is None or math.isnan(pct):
        return "-"
    if abs(pct) < 0.05:
        return "same"
    return f"{abs(pct):.1f}% {'more' if pct > 0 else 'fewer'}"
