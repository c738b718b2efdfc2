"""Scaling mode (binaries' --copies, kbench-run --scaling; src/reference/running.md).

A scaling case "BASE xN" (or "BASE threads xN") ran N copies at once, each
sample line one copy's.  From those lines, per sample: the aggregate rate,
the sum over the copies of their operations per second (iters / elapsed_ns;
for a bandwidth case their MB/s), a sample counting only when all N copies
wrote theirs.  Per rep the aggregate is a sample array like any case's, so
the aggregate at each N gets the same statistics as every case: the headline
over reps (stats.Series, higher is better), its spread and mde
(summarize), and the change between kernels with its interval and verdict
(compare, adjusted over the scaling rows together).  The per-copy latency
is the scaling case itself (its ns_per_op samples: every copy's), summarized
and compared with the other cases.  The scaling efficiency at N is
aggregate(N) / (N x aggregate(1)): 1 is perfect scaling; a shared lock
shows as less.

Reads the copies' sample lines that load kept (Run.copy_samples), or
samples.jsonl itself for a Run read without them; only the reps load kept
for the case (after dropping failed reps) are used.
"""
import math
import re
from pathlib import Path

import numpy as np

from . import decl, load, stats
from .compare import compare_series

NAME = re.compile(r"^(?P<base>.+) x(?P<n>\d+)$")

_RUNS = {}  # run path -> {case: {"metric": m, "reps": {(run_id, rep): [aggregate per sample]}}}


def split_name(name):
    """'BENCH VARIANT x2' -> ('BENCH VARIANT', 2); None for other cases."""
    m = NAME.match(name)
    return (m.group("base"), int(m.group("n"))) if m else None


def _int(v, lo=0):
    return isinstance(v, int) and not isinstance(v, bool) and v >= lo


def _may_be_a_copy(line):
    """Whether a line of samples.jsonl may be one copy's (it has a "copies"
    key): the others are not parsed (a full run has over 10 000 lines, few or none
    of them a scaling case's).  A key written with escapes has a backslash."""
    return "copies" in line or "\\" in line


def _copy_lines(run):
    """load.COPY_KEYS of each of the run's sample lines with a "copies" key."""
    if run.copy_samples is not None:
        return run.copy_samples
    path = load.run_file(run.path, load.SAMPLES)
    if not path.exists():
        return []
    return [tuple(obj.get(k) for k in load.COPY_KEYS)
            for _, obj, _bad in load.iter_jsonl(path, lambda msg: None, wanted=_may_be_a_copy) if "copies" in obj]


def read_run(run):
    """The aggregate rate of every complete sample of the run's scaling cases."""
    key = str(run.path)
    if key in _RUNS:
        return _RUNS[key]
    parts = {}
    for case, rid, rep, smp, n, idx, iters, el, metric, b in _copy_lines(run):
        if not (_int(n, 1) and _int(idx) and idx < n and _int(iters, 1) and _int(el, 1) and _int(rep)
                and _int(smp) and isinstance(case, str)):
            continue
        rate = iters * 1e9 / el
        if metric == "bandwidth":
            if not _int(b, 1):
                continue
            rate = iters * b * 1e3 / el      # MB/s
        rid = rid if isinstance(rid, str) and rid else run.run_id
        e = parts.setdefault((case, rid, rep, smp), [n, set(), 0.0, metric])
        if idx in e[1] or e[0] != n:
            continue
        e[1].add(idx)
        e[2] += rate
    out = {}
    for (case, rid, rep, _), (n, seen, rate, metric) in sorted(parts.items(), key=lambda kv: kv[0][1:]):
        if len(seen) == n:
            d = out.setdefault(case, {"metric": metric, "reps": {}})
            d["reps"].setdefault((rid, rep), []).append(rate)
    _RUNS[key] = out
    return out


class Point:
    """One base case at N copies on one side."""

    def __init__(self, base, n, metric, reps, case, estimator=None):
        self.base, self.n, self.metric, self.case = base, n, metric, case
        keys = sorted(reps, key=lambda k: (str(k[0]), k[1]))
        # higher is better: the aggregate is a rate, read as a bandwidth
        self.series = stats.Series.single([np.asarray(reps[k], dtype=float) for k in keys], "bandwidth",
                                          f"{case.name} [aggregate]", units=[k[0] for k in keys], estimator=estimator)
        self.unit = "MB/s" if metric == "bandwidth" else "ops/s"
        self.latency = (stats.Series.single(case.rep_arrays(), case.metric, case.name, units=case.rep_units(),
                                            estimator=estimator) if case.reps else None)

    @property
    def aggregate(self):
        return self.series.headline()

    @property
    def per_copy(self):
        """The copies' own value: ns per op (MB/s for bandwidth)."""
        return self.latency.headline() if self.latency is not None else math.nan


def curves(side, estimator=None):
    """{base: {N: Point}} of a Group or compare.Side (runs and pooled cases)."""
    pooled = {}
    for run in side.runs:
        for name, d in read_run(run).items():
            c = side.cases.get(name)
            if c is None or split_name(name) is None:
                continue
            p = pooled.setdefault(name, {"metric": d["metric"], "reps": {}})
            for k, v in d["reps"].items():
                if k in c.reps:
                    p["reps"].setdefault(k, []).extend(v)
    out = {}
    for name, d in pooled.items():
        if not d["reps"]:
            continue
        base, n = split_name(name)
        out.setdefault(base, {})[n] = Point(base, n, d["metric"], d["reps"], side.cases[name], estimator)
    return out


def machine_bases(side):
    """The scaled control cases of the side's runs (cases.jsonl: scaling_control
    true): work no kernel can change, whose efficiency is what N CPUs of this
    machine give at best (two vCPUs of a VM may give much less than twice one)."""
    out = set()
    for run in side.runs:
        p = load.run_file(run.path, "cases.jsonl")
        if not p.exists():
            continue
        for _, obj, _bad in load.iter_jsonl(p, lambda msg: None):
            if obj.get("scaling_control") is True and isinstance(obj.get("case"), str):
                sp = split_name(obj["case"])
                if sp:
                    out.add(sp[0])
    return out


def machine_efficiency(cv, machines, n):
    """The efficiency at N of the first scaled control present; nan without."""
    for b in sorted(machines):
        if b in cv and n in cv[b]:
            return efficiency(cv[b], n)
    return math.nan


def efficiency(points, n):
    """aggregate(N) / (N x aggregate(1)); nan without the 1-copy point."""
    one = points.get(1)
    if one is None or n not in points:
        return math.nan
    a1 = one.aggregate
    return points[n].aggregate / (n * a1) if a1 > 0 else math.nan


def _order(cv):
    return sorted(cv, key=decl.natural_key)


def summary_rows(side, estimator=None):
    """[(base, Point, stats.Summary, efficiency, efficiency / the machine's,
    is the machine)] in display order: the machine's rows first."""
    out = []
    cv = curves(side, estimator)
    machines = machine_bases(side)
    for base in sorted(_order(cv), key=lambda b: b not in machines):
        for n in sorted(cv[base]):
            p = cv[base][n]
            e = efficiency(cv[base], n)
            out.append((base, p, stats.summarize(p.series), e, e / machine_efficiency(cv, machines, n),
                        base in machines))
    return out


def compare_rows(base_side, other_side, opts):
    """[(base, N, base Point, other Point, Comparison of the aggregates,
    base efficiency, other efficiency)] for every (base, N) on both sides;
    verdicts decided over these rows together (compare.compare_series, as
    every case)."""
    b, o = curves(base_side, opts.estimator), curves(other_side, opts.estimator)
    machines = machine_bases(base_side) | machine_bases(other_side)
    rows = []
    for base in _order(b):
        if base not in o or base in machines:   # the machine is no kernel's change
            continue
        for n in sorted(set(b[base]) & set(o[base])):
            pb, po = b[base][n], o[base][n]
            cmp = compare_series(base_side, other_side, pb.series.label, pb.series, po.series, opts)
            rows.append((base, n, pb, po, cmp, efficiency(b[base], n), efficiency(o[base], n)))
    stats.decide([r[4] for r in rows], min_effect=opts.min_effect, level=opts.level, adjust=opts.adjust,
                 machine_shift=False)
    return rows

