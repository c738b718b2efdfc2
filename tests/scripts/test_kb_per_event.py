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
