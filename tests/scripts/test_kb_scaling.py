"""scaling.py on synthetic runs with exact figures: the aggregate rate of a
sample is the sum of its copies' iters / elapsed_ns (a sample counts only
with all its copies), per rep a sample array, the efficiency aggregate(N) /
(N x aggregate(1)); summarize prints the table, compare the change of the
aggregate at each N with the verdict of compare's statistics, plot draws a
chart per base case, the page has the section; runs without scaling cases
get none of it."""
import json
import math
import subprocess
import sys

import pytest

from kb_helpers import HERE  # noqa: F401  (puts scripts/ on sys.path)

from kbench.model import groups as groups_mod, load, scaling  # noqa: E402

ROOT = HERE.parent.parent


def write_run(root, kernel, run_id, cases, reps=6, samples=3, host="h"):
    """cases: {base: {N: ns per op of every copy}}; each sample of copy c
    in rep r: iters 1000, elapsed = ns * 1000 * (1 + 0.01 * ((r + c) % 3))."""
    d = root / host / kernel / run_id
    d.mkdir(parents=True)
    (d / "meta.json").write_text(json.dumps({"schema": 1, "run_id": run_id, "host": host, "kernel_release": kernel,
                                             "status": "complete", "quick": False}))
    lines = []
    for base, per_n in cases.items():
        for n, ns in per_n.items():
            for r in range(reps):
                for s in range(samples):
                    for c in range(n):
                        el = int(ns * 1000 * (1 + 0.01 * ((r + c) % 3)))
                        lines.append({"schema": 1, "run_id": run_id, "bench": base.split()[0],
                                      "variant": base.split()[1], "params": "", "placement": "pinned",
                                      "case": f"{base} x{n}", "metric": "latency", "rep_idx": r, "sample_idx": s,
                                      "iters": 1000, "elapsed_ns": el, "ns_per_op": el / 1000, "cpu": c,
                                      "copies": n, "copy_idx": c, "copy_mode": "processes"})
    (d / "samples.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return d


def test_aggregate_and_efficiency_exact(tmp_path):
    run = write_run(tmp_path, "6.1", "r1", {"lat_syscall null": {1: 1000, 2: 1000},
                                            "lat_pagefault anon threads": {1: 1000, 2: 2000}}, reps=1, samples=1)
    got = scaling.read_run(load.load_run(run, lambda m: None))
    # rep 0, copy c: elapsed 1e6 * (1 + 0.01 c)
    assert got["lat_syscall null x2"]["reps"][("r1", 0)] == [pytest.approx(1e6 + 1e6 / 1.01)]
    assert got["lat_syscall null x1"]["reps"][("r1", 0)] == [pytest.approx(1e6)]
    g = groups_mod.group_runs(load.load_runs([tmp_path], lambda m: None))[0]
    cv = scaling.curves(g)
    assert scaling.efficiency(cv["lat_syscall null"], 2) == pytest.approx((1 + 1 / 1.01) / 2)
    assert scaling.efficiency(cv["lat_pagefault anon threads"], 2) == pytest.approx((1 + 1 / 1.01) / 4)
    assert scaling.efficiency(cv["lat_syscall null"], 1) == 1.0


def test_incomplete_samples_do_not_count(tmp_path):
    run = write_run(tmp_path, "6.1", "r1", {"lat_syscall null": {2: 1000}}, reps=1, samples=2)
    p = run / "samples.jsonl"
    lines = p.read_text().splitlines()
    # sample 1 lost copy 1's line: only sample 0 is an aggregate
    p.write_text("\n".join(l for l in lines if not ('"sample_idx": 1' in l and '"copy_idx": 1' in l)) + "\n")
    got = scaling.read_run(load.load_run(run, lambda m: None))
    assert len(got["lat_syscall null x2"]["reps"][("r1", 0)]) == 1


def test_summarize_compare_plot_page(tmp_path):
    # base: null scales perfectly, page faults at 0.5; new: page faults at 1/3 (the aggregate 2/3 of base's)
    write_run(tmp_path, "6.1-base", "b1", {"lat_syscall null": {1: 1000, 2: 1000},
                                           "lat_pagefault anon threads": {1: 1000, 2: 2000}})
    write_run(tmp_path, "6.6-new", "n1", {"lat_syscall null": {1: 1000, 2: 1000},
                                          "lat_pagefault anon threads": {1: 1000, 2: 3000}})
    py = sys.executable
    s = subprocess.run([py, str(ROOT / "scripts" / "summarize"), str(tmp_path / "h" / "6.1-base")],
                       capture_output=True, text=True, timeout=300)
    assert s.returncode == 0, s.stderr
    text = s.stdout
    assert "== Scaling: N copies at once" in text
    row = next(l for l in text.splitlines() if l.startswith("lat_pagefault anon threads "))
    assert " 1.00 " in row
    row2 = text.splitlines()[text.splitlines().index(row) + 1].split()
    assert row2[0] == "2" and abs(float(row2[5]) - 0.5) <= 0.011   # 2, aggregate, unit, per copy, unit, eff
    c = subprocess.run([py, str(ROOT / "scripts" / "compare"), str(tmp_path / "h" / "6.1-base"),
                        str(tmp_path / "h" / "6.6-new")], capture_output=True, text=True, timeout=300)
    assert c.returncode == 0, c.stderr
    sec = c.stdout.split("== Scaling, ", 1)[1].splitlines()
    pf2 = next(i for i, l in enumerate(sec) if l.startswith("lat_pagefault anon threads ")) + 1
    assert "slower" in sec[pf2] and "0.50 -> 0.33" in sec[pf2]
    null2 = next(i for i, l in enumerate(sec) if l.startswith("lat_syscall null ")) + 1
    assert "slower" not in sec[null2] and "faster" not in sec[null2] and "1.00 -> 1.00" in sec[null2]
    out = tmp_path / "page.html"
    r = subprocess.run([py, str(ROOT / "scripts" / "report"), str(tmp_path), "--out", str(out), "--no-samples"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    assert "<h2 id='scaling'>Scaling: N copies at once</h2>" in page
    assert page.count("fig-scaling_") == 2   # a chart per base case
    assert "<h3>h/6.6-new against h/6.1-base</h3>" in page
    plots = tmp_path / "plots"
    p = subprocess.run([py, str(ROOT / "scripts" / "plot"), str(tmp_path), "--out", str(plots), "--no-samples",
                        "--formats", "svg"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in plots.glob("scaling_*")) == ["scaling_lat_pagefault_anon_threads.svg",
                                                             "scaling_lat_syscall_null.svg"]


def test_no_scaling_cases_no_section(fixture_runs):
    base, new = fixture_runs
    s = subprocess.run([sys.executable, str(ROOT / "scripts" / "summarize"), str(base)], capture_output=True,
                       text=True, timeout=300)
    assert s.returncode == 0 and "Scaling" not in s.stdout
    c = subprocess.run([sys.executable, str(ROOT / "scripts" / "compare"), str(base), str(new)],
                       capture_output=True, text=True, timeout=300)
    assert c.returncode == 0 and "== Scaling" not in c.stdout


def test_machine_scaling_is_the_reference_and_not_judged(tmp_path):
    """A scaled control (cases.jsonl: scaling_control true) is the machine's
    own scaling: 'vs machine' divides by its efficiency at the same N, and
    compare leaves it out of the judged rows and says it in a note."""
    def declare(run, machine):
        decl = [{"case": f"{b} x{n}", "bench": b.split()[0], "variant": b.split()[1], "category": "Scaling (per copy)",
                 "category_rank": 900, "rank": 1, "direction": "lower", "unit": "ns", "summary": None, "curve": None,
                 "control": False, "copies": n, "copy_mode": "processes", "scaling_of": b,
                 "scaling_control": b == machine} for b in ("ctl_machine alu", "lat_syscall null") for n in (1, 2)]
        (run / "cases.jsonl").write_text("".join(json.dumps(d) + "\n" for d in decl))
    # the machine gives 0.8 at two copies (each copy 1.25x slower), null the same: 1.00 of the machine's
    b = write_run(tmp_path, "6.1-base", "b1", {"ctl_machine alu": {1: 1000, 2: 1250}, "lat_syscall null": {1: 1000, 2: 1250}})
    o = write_run(tmp_path, "6.6-new", "n1", {"ctl_machine alu": {1: 1000, 2: 1250}, "lat_syscall null": {1: 1000, 2: 2500}})
    declare(b, "ctl_machine alu")
    declare(o, "ctl_machine alu")
    g = groups_mod.group_runs(load.load_runs([tmp_path / "h" / "6.1-base"], lambda m: None))[0]
    rows = {(r[0], r[1].n): r for r in scaling.summary_rows(g)}
    assert rows[("ctl_machine alu", 2)][5] is True and rows[("lat_syscall null", 2)][5] is False
    assert rows[("ctl_machine alu", 2)][3] == pytest.approx(rows[("lat_syscall null", 2)][3])
    assert rows[("lat_syscall null", 2)][4] == pytest.approx(1.0)
    assert list(rows)[0][0] == "ctl_machine alu"   # the machine first
    c = subprocess.run([sys.executable, str(ROOT / "scripts" / "compare"), str(tmp_path / "h" / "6.1-base"),
                        str(tmp_path / "h" / "6.6-new")], capture_output=True, text=True, timeout=300)
    assert c.returncode == 0, c.stderr
    sec = c.stdout.split("== Scaling, ", 1)[1]
    assert not [l for l in sec.splitlines() if l.startswith("ctl_machine alu")]
    assert "The machine's own scaling" in sec and "ctl_machine alu at 2 copies 0.80 -> 0.80" in " ".join(sec.split())
