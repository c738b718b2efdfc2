"""Perf counters per operation (samples taken with --counters).

A sample carries each counter's total over the sample; per operation it is
total / iters.  Like the time, a case's value is the median over reps of
each rep's median, and instructions per cycle (IPC) is worked out per rep
where both instructions and cycles were counted.  A counter that was null
(the machine lacks it) has no value: it is left out, never shown as zero.
"""
import math

import numpy as np

from .runs import COUNTER_KEYS


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
