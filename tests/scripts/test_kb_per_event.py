"""The cost per event beside the cost per operation (issue 14 item 8): a
case whose summary column is per an event (lat_pagefault file:
per("minflt"), one page fault, which maps ~16-512 pages) has, in
summarize --cases, a row of its time per event next to its time per page,
from the same samples (elapsed_ns / minflt)."""
import pathlib

import numpy as np
import pytest

from kbench.cli import summarize_main

RECORDED = pathlib.Path(__file__).resolve().parents[1] / "data" / "recorded"


def _value_ns(cell):
    num, unit = cell.split()
    return float(num) * {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}[unit]


def test_cases_list_the_cost_per_fault_beside_per_page(capsys):
    import json
    runs = sorted(p.parent for p in RECORDED.rglob("samples.jsonl"))
    assert runs
    assert summarize_main([str(runs[0]), "--cases"]) == 0
    out = capsys.readouterr().out.splitlines()
    page = next(ln for ln in out if ln.startswith("lat_pagefault file "))
    fault = next(ln for ln in out if ln.startswith("lat_pagefault file per minflt"))
    assert out.index(fault) == out.index(page) + 1
    per_fault = [s["elapsed_ns"] / s["minflt"] for p in runs[:1] for s in map(json.loads, open(p / "samples.jsonl"))
                 if s.get("case") == "lat_pagefault file" and s.get("minflt")]
    v = _value_ns(" ".join(fault.split()[5:7]))
    assert v == pytest.approx(np.median(per_fault), rel=0.25)
    assert v > 10 * _value_ns(" ".join(page.split()[3:5]))
    # no per-event row for a case without such a column
    assert not [ln for ln in out if " per minflt" in ln and not ln.startswith("lat_pagefault file")]


def test_the_cell_per_fault_is_the_headline_not_the_case_per_page():
    """The table's number is the time per fault; the time per page it is
    made from moves with how many pages a fault maps and is judged with
    the other cases, outside the table's family."""
    from kbench.model import compare, load, stats
    from kbench.model import tables as tables_mod
    run = sorted(p.parent for p in RECORDED.rglob("samples.jsonl"))[0]
    w = load.Warnings()
    a = compare.Side("A", load.load_runs([str(run)], w))
    b = compare.Side("B", load.load_runs([str(run)], w))
    primary = compare.primary_names(a, b)
    assert "lat_pagefault file" not in primary
    assert primary["lat_syscall null"]          # the other cells' cases stay primary
    groups = [load.Group(s.runs[0].host, f"side{i}", list(s.runs), s.cases) for i, s in enumerate((a, b))]
    tabs = tables_mod.build_tables(groups)
    rows, cells = compare.compare_tables(a, b, tabs, groups[0].key, groups[1].key, compare.Options(n_boot=100))
    fam = {r.case: r.cmp.family for r in rows}
    assert fam["lat_pagefault file"] == stats.SECONDARY
    (ti, ci), = [(ti, ci) for ti, t in enumerate(tabs) for ci, col in enumerate(t.columns)
                 if col.label == "page fault"]
    assert tabs[ti].columns[ci].cells[groups[0].key].per == "minflt"
    assert cells[(ti, ci)].family == f"{stats.PRIMARY}: {tabs[ti].title}"
    assert cells[(ti, ci)].comparable
