"""Case declarations: what each benchmark binary says about its cases.

A binary's `--list` line declares, besides the case's identity, its
category (the report section and summary table it belongs to) and that
category's rank, the case's rank inside the category, the direction in which
the value is better, an optional summary-table column and an optional curve
(src/reference/benchmarks.md, "Adding a benchmark").  The driver records every line in
the run directory as cases.jsonl.  The scripts build every category, order,
summary table and size chart from these declarations and name no benchmark
themselves; runs recorded before cases.jsonl existed get theirs from
`legacy`.  The report order of cases and categories (case_sort_key) lives
here too: every module that orders cases imports it from here.
"""
import re
from pathlib import Path

from . import legacy

CASES = "cases.jsonl"

OTHER = "Other"
OTHER_RANK = 1000

DOMAINS = ("cpu", "memory", "fs")

COMBINES = ("one", "mean", "minus", "pick", "cache_levels", "largest")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _opt_str(v):
    return v is None or isinstance(v, str)


def check_summary(s):
    """An error text, or "" for a valid summary object (or None)."""
    if s is None:
        return ""
    if not isinstance(s, dict):
        return "'summary' is not an object"
    if not isinstance(s.get("column"), str) or not s["column"]:
        return "summary 'column' is not a non-empty string"
    if not isinstance(s.get("note", ""), str):
        return "summary 'note' is not a string"
    if not _is_int(s.get("order")):
        return "summary 'order' is not an integer"
    if s.get("combine", "one") not in COMBINES:
        return f"summary 'combine' is {s.get('combine')!r}, expected one of {', '.join(COMBINES)}"
    for k in ("placement", "minus", "size_param", "per"):
        if not _opt_str(s.get(k)):
            return f"summary '{k}' is not a string or null"
    if s.get("combine") == "minus" and not s.get("minus"):
        return "summary combine 'minus' without 'minus'"
    if s.get("combine") in ("pick", "cache_levels", "largest") and not s.get("size_param"):
        return f"summary combine {s.get('combine')!r} without 'size_param'"
    if s.get("prefer") is not None and not _is_int(s.get("prefer")):
        return "summary 'prefer' is not an integer or null"
    return ""


def check_curve(c):
    if c is None:
        return ""
    if not isinstance(c, dict):
        return "'curve' is not an object"
    for k in ("chart", "x"):
        if not isinstance(c.get(k), str) or not c[k]:
            return f"curve '{k}' is not a non-empty string"
    for k in ("title", "panel"):
        if not isinstance(c.get(k, ""), str):
            return f"curve '{k}' is not a string"
    return ""


def normalise(obj):
    """(declaration dict, error text) from one --list line."""
    cat = obj.get("category")
    if not isinstance(cat, str) or not cat.strip():
        return None, "'category' is not a non-empty string"
    for k in ("category_rank", "rank"):
        if not _is_int(obj.get(k)):
            return None, f"'{k}' is not an integer"
    if obj.get("direction") not in ("lower", "higher"):
        return None, f"'direction' is {obj.get('direction')!r}, expected 'lower' or 'higher'"
    err = check_summary(obj.get("summary")) or check_curve(obj.get("curve"))
    if err:
        return None, err
    return {
        "category": cat.strip(),
        "category_rank": obj["category_rank"],
        "rank": obj["rank"],
        "direction": obj["direction"],
        "unit": obj.get("unit") if isinstance(obj.get("unit"), str) else "",
        "summary": dict(obj["summary"]) if obj.get("summary") else None,
        "curve": dict(obj["curve"]) if obj.get("curve") else None,
        # cpu, memory or fs (bench.hpp memory_bound(), fs_bound()); runs of
        # kbench 0.2.0 and older did not say: their bench's, as legacy knows it
        "domain": obj["domain"] if obj.get("domain") in DOMAINS else None,
    }, ""


def read_declarations(run_dir, warn, iter_jsonl):
    """{case name: declaration} from run_dir/cases.jsonl, or None when the
    run has no such file (a run recorded before declarations)."""
    path = Path(run_dir) / CASES
    if not path.exists():
        path = path.with_name(CASES + ".gz")    # kbench-run keeps it plain; recorded data may have it compressed
        if not path.exists():
            return None
    out = {}
    for lineno, obj, bad_line in iter_jsonl(path, warn):
        name = obj.get("case")
        if not isinstance(name, str) or not name:
            bad_line(lineno, "'case' is not a non-empty string")
            continue
        d, err = normalise(obj)
        if err:
            bad_line(lineno, err)
            continue
        d["bench"] = obj.get("bench") if isinstance(obj.get("bench"), str) else name.split()[0]
        d["variant"] = obj.get("variant") if isinstance(obj.get("variant"), str) else ""
        if d["domain"] in (None, "cpu"):
            # undeclared (kbench 0.2.0 and older), or declared cpu by binaries
            # from before the case had a domain of its own (lat_fs, lat_proc
            # fork_mem): the domain the binaries declare now
            d["domain"] = legacy.domain(d["bench"], d["variant"])
        out[name] = d
    return out


def resolve(case, recorded):
    """The declaration of `case` (a load.Case): its own line in the run's
    cases.jsonl; else (a case run with parameters other than the declared
    ones) the category and rank of its bench and variant, with no summary
    column or curve; else, for runs without cases.jsonl, the legacy mapping;
    else "Other"."""
    if recorded is not None:
        d = recorded.get(case.name)
        if d is not None:
            return d
        near = [x for x in recorded.values() if x["bench"] == case.bench]
        same = [x for x in near if x["variant"] == case.variant] or near
        if same:
            best = min(same, key=lambda x: x["rank"])
            return dict(best, summary=None, curve=None)
        return {"category": OTHER, "category_rank": OTHER_RANK, "rank": 999999,
                "direction": "higher" if case.metric == "bandwidth" else "lower",
                "unit": "MB/s" if case.metric == "bandwidth" else "ns", "summary": None, "curve": None,
                "domain": legacy.domain(case.bench, case.variant)}
    return legacy.declaration(case.bench, case.variant, case.param_dict, case.metric)


def categories(cases):
    """The categories of these cases, in report order."""
    ranks = {}
    for c in cases:
        d = c.decl
        r = ranks.get(d["category"])
        ranks[d["category"]] = d["category_rank"] if r is None else min(r, d["category_rank"])
    return sorted(ranks, key=lambda k: (ranks[k], k))


# ---------------------------------------------------------------- report order


def natural_key(s):
    """Sort key that orders 'size_kb=4' before 'size_kb=16'."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(s))]


def category_of(case):
    """The category a case's binary declared for it."""
    return case.category


def in_order(categories):
    """Distinct categories in first-seen order (of rows already in report order)."""
    return list(dict.fromkeys(categories))


PLACEMENT_ORDER = ["", "pinned", "same", "cross", "unpinned"]


def _index(seq, item):
    try:
        return seq.index(item)
    except ValueError:
        return len(seq)


def case_sort_key(case):
    """Report order: category, then the order the binaries declare their
    cases in, then parameters in natural order, then placement."""
    d = case.decl
    return (d["category_rank"], d["category"], d["rank"], natural_key(case.bench), natural_key(case.variant),
            natural_key(case.params), _index(PLACEMENT_ORDER, case.placement), case.name)
