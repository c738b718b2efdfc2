"""The comparisons as CSV and JSON (compare --csv, --json): one row per
case, numbers as numbers."""
import csv
import json
import math

from ..model import stats
from ..model.compare import Options, regressions
from .explain_text import to_json as explanation_json


CSV_FIELDS = ["base", "other", "category", "case", "metric", "base_value", "other_value", "unit",
              "ratio", "ci_low", "ci_high", "p_t", "p_adjusted", "p_rank", "change_pct", "change", "verdict",
              "unresolved", "alone", "modes", "family", "mde_pct", "runs_for_min_effect", "waiting_pct", "estimator",
              "base_reps", "other_reps", "base_samples", "other_samples", "not_judged"]


def csv_rows(rep):
    return case_rows(rep.base.label, rep.other.label, rep.shift, rep.rows, rep.opts, rep.waiting)


def _all_rows(shift, rows):
    """The control cases' rows (when the comparison has a machine check), then the cases'."""
    return list(shift.all_rows if shift else []) + list(rows)


def case_rows(base, other, shift, rows, opts, waiting):
    """The CSV's rows of one comparison of BASE and OTHER (labels): its
    control cases' (from the machine check `shift`) and its `rows`;
    waiting: {case: blocked share} (compare.waiting_shares)."""
    opts = opts or Options()
    for r in _all_rows(shift, rows):
        c = r.cmp
        unit = "MB/s" if r.metric == "bandwidth" else "ns"
        yield {
            "base": base, "other": other, "category": r.category, "case": r.case,
            "metric": r.metric, "base_value": _num(c.base), "other_value": _num(c.other), "unit": unit,
            "ratio": _num(c.ratio), "ci_low": _num(c.lo), "ci_high": _num(c.hi), "p_t": _num(c.p),
            "p_adjusted": _num(c.q), "p_rank": _num(c.p_rank),
            "change_pct": _num(c.change), "change": c.change_text, "verdict": c.verdict,
            "unresolved": "yes" if c.unresolved else "", "alone": "yes" if c.alone else "",
            "modes": "yes" if c.modes else "",
            "family": getattr(c, "family", ""),
            "mde_pct": _num(c.mde * 100 if not math.isnan(c.mde) else math.nan),
            "runs_for_min_effect": _runs_for(c, opts),
            "waiting_pct": _num(waiting[r.case] * 100) if r.case in waiting else "", "estimator": c.estimator,
            "base_reps": c.base_reps, "other_reps": c.other_reps, "base_samples": c.base_samples,
            "other_samples": c.other_samples,
            "not_judged": c.not_judged if c.verdict == stats.NOT_JUDGED else "",
        }


def _runs_for(c, opts):
    """The runs a side this case needs to detect the minimum effect: a
    number, f">{cap}" beyond the plan, "" without a run level."""
    if not c.comparable or not c.parts:
        return ""
    k = c.runs_for(opts.min_effect, level=opts.level)
    return str(k) if k is not None else f">{stats.PLAN_MAX_RUNS}"


def _num(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{v:.6g}"


def _json_num(v):
    return None if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))) else v


def write_json(reports, f):
    """The comparisons as one JSON document: per comparison the sides, the
    machine check, the conditions that differ, the run level's scale and
    widened groups, and every row (the CSV's fields, numbers as numbers,
    plus the failure text)."""
    doc = []
    for rep in reports:
        rows = json_rows(rep.base.label, rep.other.label, rep.shift, rep.rows, rep.opts, rep.waiting)
        doc.append({
            "base": rep.base.label, "other": rep.other.label,
            "machine_shift": bool(rep.shift and rep.shift.shifted),
            "memory_shift": bool(rep.shift and rep.shift.memory_shifted),
            # kept for readers of older comparisons: the same as machine_shift since the run-level
            # model (the CPU controls beyond what the host's runs have shown)
            "machine_moved": bool(rep.shift and rep.shift.cpu_moved),
            "relative": bool(rep.shift and rep.shift.relative),
            "speed_ratio": _json_num(rep.shift.speed_ratio) if rep.shift and rep.shift.relative else None,
            "differences": [{"key": k, "base": a, "other": b} for k, a, b in rep.differences],
            "kernel": [{"key": k, "base": a, "other": b} for k, a, b in rep.kernel],
            "regressions": [r.case for r in regressions(rep)],
            # the run level now, per group of cases: the drift against the built-in prior's (sqrt(a)),
            # the reps' noise's factor (sqrt(b)) and what measured them; the two-party groups whose
            # intervals their own bulk widened, by the factor compare's words give (sqrt(lambda))
            "run_level": {
                "scale": {g: {"drift": _json_num(math.sqrt(a)), "reps": _json_num(math.sqrt(b)), "source": src}
                          for g, (a, b, src) in sorted(rep.scale.items())},
                "widened": {g: _json_num(math.sqrt(lam)) for g, lam in sorted(rep.bulk.items())},
                # one run a side: how far each group followed the memory controls' move against its
                # slopes' prior (sqrt(c)), as the comparison's bulk measured it
                "followed": {g: _json_num(math.sqrt(c)) for g, c in sorted(rep.follow.items())},
                # sides in sessions of their own: a session's level as a share of one run's variance,
                # as the host's runs of kernels in several sessions measured it, and its session dof
                "sessions": {g: {"share": _json_num(sh), "session_dof": _json_num(dof)}
                             for g, (sh, dof) in sorted(rep.sessions.items())},
            },
            "rows": rows,
            # the summary tables' cells made of several cases (a mean, a time per event), judged
            # with the cases: what the report's tables colour
            "cells": [{"cell": key, "made_of": how, "cases": names, "verdict": c.verdict,
                       "change_pct": _json_num(c.change), "ratio": _json_num(c.ratio),
                       "ci_low": _json_num(c.lo), "ci_high": _json_num(c.hi), "p_t": _json_num(c.p),
                       "p_adjusted": _json_num(c.q), "mde_pct": _json_num(c.mde * 100), "family": c.family or None}
                      for key, (c, how, names) in sorted(rep.cells.items())],
        })
        if rep.explanations is not None:
            doc[-1]["explanations"] = [explanation_json(e) for e in rep.explanations]
    json.dump(doc, f, indent=1, ensure_ascii=False)
    f.write("\n")


def json_rows(base, other, shift, rows, opts, waiting):
    """case_rows as JSON objects: numbers as numbers, "" as null, and
    whether each row is a control case's and its failure text."""
    out = []
    for row, r in zip(_all_rows(shift, rows), case_rows(base, other, shift, rows, opts, waiting)):
        d = {k: (_json_num(float(v)) if k in _NUMERIC and v != "" else
                 int(v) if k in _TEXT_OR_NUMBER and v.isdigit() else (None if v == "" else v))
             for k, v in r.items()}
        d["control"] = shift is not None and row in shift.all_rows
        d["failure"] = row.cmp.failure or None
        out.append(d)
    return out


_NUMERIC = {"base_value", "other_value", "ratio", "ci_low", "ci_high", "p_t", "p_adjusted", "p_rank", "change_pct",
            "mde_pct", "waiting_pct"}


_TEXT_OR_NUMBER = {"runs_for_min_effect"}  # a count, or ">30" beyond the plan


def write_csv(reports, f):
    w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
    w.writeheader()
    for rep in reports:
        for row in csv_rows(rep):
            w.writerow(row)
