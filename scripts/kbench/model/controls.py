"""The machine's speed over a run, from its control cases.

A control case (one its binary declares a control) costs the same on every
kernel: for example a dependent-load chain in L1, an arithmetic chain, a
copy within L2.  The
driver runs one between every few cases, all through the run, so their rep
values, placed at the time they ran, trace the speed of the machine itself.
Pure functions, no I/O.
"""
import math
from dataclasses import dataclass

import numpy as np

from .bootstrap import _median     # np.median of a short list without numpy's per-call cost

SPARK = "▁▂▃▄▅▆▇█"
DISTURBED = 0.05   # a control this much slower than its run's median: the machine was off


@dataclass
class Point:
    t_s: float        # seconds since the run's first sample
    case: str
    rel: float        # the control's time / its median over the run (>1 = slower)


def run_start_ns(run):
    starts = [t for c in run.cases.values() for t in c.rep_start.values()]
    return min(starts) if starts else None


def _domain(case):
    return case.decl.get("domain") or "cpu"


def trace(run, domain="cpu"):
    """Points of every control rep of one run, in time order: the CPU
    controls (default), the memory controls (domain="memory": memory
    bandwidth and a cache-sized chase, whose regimes the CPU controls do
    not see) or all (None)."""
    t0 = run_start_ns(run)
    if t0 is None:
        return []
    pts = []
    for c in run.cases.values():
        if not c.control or (domain is not None and _domain(c) != domain):
            continue
        vals = {k: _median(v) for k, v in c.reps.items() if v}
        if not vals:
            continue
        med = _median(vals.values())
        if med <= 0:
            continue
        for k, v in vals.items():
            if k not in c.rep_start:
                continue
            rel = v / med if c.metric != "bandwidth" else med / v
            pts.append(Point((c.rep_start[k] - t0) / 1e9, c.name, rel))
    pts.sort(key=lambda p: p.t_s)
    return pts


def binned(points, n_bins):
    """Median relative time of the controls in n_bins equal slices of the
    run (nan where a slice has none)."""
    if not points:
        return []
    end = max(p.t_s for p in points) or 1.0
    bins = [[] for _ in range(n_bins)]
    for p in points:
        i = min(n_bins - 1, int(p.t_s / end * n_bins))
        bins[i].append(p.rel)
    return [_median(b) if b else math.nan for b in bins]


def sparkline(values, lo=0.9, hi=1.3):
    out = []
    for v in values:
        if math.isnan(v):
            out.append(" ")
            continue
        f = (min(max(v, lo), hi) - lo) / (hi - lo)
        out.append(SPARK[min(len(SPARK) - 1, int(f * len(SPARK)))])
    return "".join(out)


def smoothed(points, window=5):
    """Each point's median with its neighbours in time: one slow control
    rep (a copy that met an interrupt) is not a slow machine."""
    rels = [p.rel for p in points]
    h = window // 2
    return [_median(rels[max(0, i - h): i + h + 1]) for i in range(len(rels))]


MERGE_GAP_S = 1.0   # disturbed stretches closer than this are one stretch


def disturbed_times(points, threshold=DISTURBED):
    """[(start_s, end_s)] stretches where the controls ran more than
    `threshold` slower than their run medians (the median of 5 neighbouring
    control reps): from the first such point to the next one that is not.
    Stretches less than MERGE_GAP_S apart are one (a single control rep
    back to normal between two slow ones is not a quiet second)."""
    out = []
    for a, b in _raw_disturbed(points, threshold):
        if out and a - out[-1][1] < MERGE_GAP_S:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _raw_disturbed(points, threshold):
    out = []
    start = None
    for p, v in zip(points, smoothed(points)):
        if v > 1.0 + threshold:
            if start is None:
                start = p.t_s
        elif start is not None:
            out.append((start, p.t_s))
            start = None
    if start is not None:
        out.append((start, points[-1].t_s))
    return out


def marked_reps(run, points, threshold=DISTURBED):
    """{case name: [rep keys]} of the (non-control) reps that started while
    the nearest control in time ran more than `threshold` slow."""
    if not points:
        return {}
    times = np.array([p.t_s for p in points])     # in time order (trace sorts them)
    slow = np.array(smoothed(points)) > 1.0 + threshold
    t0 = run_start_ns(run)
    out = {}
    for c in run.cases.values():
        if c.control or not c.rep_start:
            continue
        keys = list(c.rep_start)
        ts = (np.array([c.rep_start[k] for k in keys], dtype=float) - t0) / 1e9
        # the nearest control in time, the earlier one on a tie (the first of equal times)
        after = np.minimum(np.searchsorted(times, ts), len(times) - 1)
        before = np.searchsorted(times, times[np.maximum(after - 1, 0)])
        nearest = np.where(np.abs(times[before] - ts) <= np.abs(times[after] - ts), before, after)
        hit = [k for k, s in zip(keys, slow[nearest]) if s]
        if hit:
            out[c.name] = hit
    return out


def describe(run, n_bins=40):
    """Text lines: the trace of one run's controls."""
    pts = trace(run)
    if not pts:
        return []
    dur = pts[-1].t_s
    rels = np.array([p.rel for p in pts])
    lines = [f"  machine speed over run {run.run_id} ({len(pts)} control reps over {dur:.0f} s; "
             f"time / the control's run median, ▁ = 0.9 .. █ = 1.3):"]
    lines.append(f"    |{sparkline(binned(pts, n_bins))}|  spread {np.min(rels):.2f}..{np.max(rels):.2f}")
    bad = disturbed_times(pts)
    if bad:
        total = sum(b - a for a, b in bad)
        lines.append(f"    the controls ran more than {DISTURBED * 100:.0f}% slow in {len(bad)} stretch(es), "
                     f"{total:.0f} s of {dur:.0f} s: " +
                     ", ".join(f"{a:.0f}-{b:.0f} s" for a, b in bad[:6]) + (" ..." if len(bad) > 6 else ""))
        marks = marked_reps(run, pts)
        n = sum(len(v) for v in marks.values())
        if n:
            lines.append(f"    {n} rep(s) of {len(marks)} case(s) started in those stretches (marked; the low "
                         f"estimator already leans on the fast reps)")
    else:
        lines.append(f"    no stretch with the controls more than {DISTURBED * 100:.0f}% slow")
    mem = trace(run, "memory")
    if mem:
        rm = np.array([p.rel for p in mem])
        lines.append(f"  memory controls over the run ({len(mem)} reps; time per op / each control's run median; "
                     f"the memory-bound cases follow them, the line above does not):")
        lines.append(f"    |{sparkline(binned(mem, n_bins))}|  spread {np.min(rm):.2f}..{np.max(rm):.2f}")
    return lines
