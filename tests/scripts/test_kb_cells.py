"""Summary cells compare the same case on both kernels, or say "not
comparable": a cell resolved per kernel (its largest size, its machine's
cache levels) is never coloured against a different case."""
import numpy as np
import pytest
from kb_helpers import rewrite_samples
from kbench.model import compare, groups as groups_mod, load, stats, tables


def test_cells_of_different_cases_are_not_comparable(tmp_path, gen):
    a = gen.make_run(tmp_path, "h", "base", seed=1, reps=3, samples=3, cases="small", failures=False)
    b = gen.make_run(tmp_path, "h", "new", seed=2, reps=3, samples=3, cases="small", failures=False)

    def smaller(o):   # the new kernel's random chain stops at 128 MB
        if o["case"] == "lat_mem_rd random size_kb=262144":
            o["params"], o["case"] = "size_kb=131072", "lat_mem_rd random size_kb=131072"
        return o
    rewrite_samples(b, smaller)
    groups = groups_mod.group_runs(load.load_runs([tmp_path], load.Warnings()))
    base, new = groups
    tabs = tables.build_tables(groups)
    sides = [compare.Side.from_group(g) for g in groups]
    _, cells = compare.compare_tables(sides[0], sides[1], tabs, base.key, new.key, compare.Options(n_boot=200))
    ti, t = next((i, t) for i, t in enumerate(tabs) if t.title == "Memory latency")
    by_label = {col.label: cells[(ti, ci)] for ci, col in enumerate(t.columns)}
    main = by_label["largest array"]   # the fixture's 260 MB L3: 256 MB is not main memory
    assert main.verdict == stats.UNDEFINED and not main.significant
    assert "size_kb=262144" in main.failure and "size_kb=131072" in main.failure
    # the same case on both sides is compared as that case
    assert by_label["sequential"].verdict != stats.UNDEFINED


def test_compare_judges_each_case_as_the_report_does(fixture_runs):
    """compare (run_compare) and the report's tables (compare_tables) make
    one comparison: the summary cells of several cases share the cases'
    families and fit, so a case's verdict and p are the same in both, and
    compare has the cells too (Report.cells)."""
    w = load.Warnings()
    groups = groups_mod.group_runs(load.load_runs(list(fixture_runs), w))
    assert len(groups) == 2
    tabs = tables.build_tables(groups)
    sides = [compare.Side.from_group(g, w) for g in groups]
    opts = compare.Options(n_boot=200)
    rows, cells = compare.compare_tables(sides[0], sides[1], tabs, groups[0].key, groups[1].key, opts,
                                         shift=compare.compare_controls(sides[0], sides[1], opts))
    rep = compare.run_compare(sides[0], sides[1], opts)
    assert [(r.case, r.cmp.verdict, r.cmp.p, r.cmp.family) for r in rep.rows] == \
        [(r.case, r.cmp.verdict, r.cmp.p, r.cmp.family) for r in rows]
    several = {f"cell:{t.title}:{col.label}": cells[(ti, ci)] for ti, t in enumerate(tabs)
               for ci, col in enumerate(t.columns)
               if col.cells.get(groups[0].key) is not None and (col.cells[groups[0].key].combine is not None
                                                                 or col.cells[groups[0].key].per)}
    assert several and set(rep.cells) == set(several)
    for key, (cmp, how, names) in rep.cells.items():
        assert (cmp.verdict, cmp.p, cmp.family) == (several[key].verdict, several[key].p, several[key].family)
        assert names and all(n in sides[0].cases for n in names)
    assert any(c.p < 0.05 for c, _, _ in rep.cells.values())   # the fixture's new kernel moved some of them
    # compare's text lists them after the cases, each with its table (--changed: the flagged ones)
    from kbench.views import compare_text
    head = "== summary-table cells made of several cases"
    for changed_only in (False, True):
        text = compare_text.format_report(rep, changed_only=changed_only, opts=opts)
        section = text.split(head, 1)[1].split("\n\n", 1)[0] if head in text else ""
        for key, (cmp, _, _) in rep.cells.items():
            _, title, label = key.split(":", 2)
            assert (f"{label} [{title}]" in section) == (cmp.comparable and (cmp.flagged or not changed_only))
    assert any(c.flagged for c, _, _ in rep.cells.values())
    # and --json gives them
    import io
    import json
    from kbench.views import export
    f = io.StringIO()
    export.write_json([rep], f)
    got = {c["cell"]: c for c in json.loads(f.getvalue())[0]["cells"]}
    assert set(got) == set(rep.cells)
    for key, (cmp, how, names) in rep.cells.items():
        assert got[key]["verdict"] == cmp.verdict and got[key]["cases"] == names and got[key]["made_of"] == how
        assert got[key]["p_t"] == export._json_num(cmp.p) and got[key]["family"] == cmp.family


def test_a_cell_of_two_cases_combines_their_estimates():
    import math
    rng = np.random.default_rng(5)
    read = [rng.normal(300, 30, 3) for _ in range(12)]
    write = [rng.normal(250, 10, 3) for _ in range(12)]
    units = ["r1"] * 12

    def cell(rd, wr, combine):
        return stats.Series(list(zip(rd, wr)), combine, "latency", "cell", units)
    mean = cell(read, write, lambda m: (m[0] + m[1]) / 2)
    est = stats.side_estimate(mean, 400, stats.seeded_rng(1, "x"))
    # each case's own estimate, drawn in order from the same generator
    g = stats.seeded_rng(1, "x")
    parts = [stats.side_estimate(stats.Series.single(x, "latency", "", units), 400, g) for x in (read, write)]
    v = [math.exp(p.theta) for p in parts]
    assert est.theta == math.log((v[0] + v[1]) / 2)
    assert mean.headline() == (v[0] + v[1]) / 2
    # the delta method: each case's error weighed by its share of the sum; Satterthwaite's df
    s = [x / sum(v) for x in v]
    var = sum((si * p.se) ** 2 for si, p in zip(s, parts))
    assert est.se == pytest.approx(math.sqrt(var), rel=1e-3)
    assert est.df == pytest.approx(var ** 2 / sum((si * p.se) ** 4 / p.df for si, p in zip(s, parts)), rel=1e-3)
    assert est.n == 12
    # which write rep meets which read rep is no part of the estimate (it was, when the cell was
    # the 20th percentile of the paired means)
    shuffled = cell(read, write[::-1], lambda m: (m[0] + m[1]) / 2)
    assert stats.side_estimate(shuffled, 400, stats.seeded_rng(1, "x")).theta == est.theta
    # a difference (a context switch: the ring less its overhead)
    diff = cell(read, write, lambda m: m[0] - m[1])
    d = stats.side_estimate(diff, 400, stats.seeded_rng(1, "x"))
    assert d.theta == pytest.approx(math.log(v[0] - v[1]))
    assert d.se == pytest.approx(math.hypot(v[0] * parts[0].se, v[1] * parts[1].se) / (v[0] - v[1]), rel=1e-3)


def test_a_cells_middle_and_fast_mode_are_its_cases_combined():
    # the modes rule reads the median rep and the fastest rep: of a cell, its cases' combined, as
    # its value is (a ring whose fast mode moved carries that into ring less overhead)
    rng = np.random.default_rng(9)
    ring_a = [rng.normal(4000, 50, 3) for _ in range(10)]
    ring_b = [rng.normal(4000, 50, 3) * (0.8 if i < 3 else 1.02) for i in range(10)]   # three fast reps more
    work = [rng.normal(1000, 20, 3) for _ in range(10)]
    units = ["r"] * 10

    def cell(ring):
        return stats.Series(list(zip(ring, work)), lambda m: m[0] - m[1], "latency", "2p/64K", units)
    a, b = cell(ring_a), cell(ring_b)
    c = stats.compare(a, b, n_boot=200)
    med = [float(np.median([np.median(r) for r in ring])) - float(np.median([np.median(w) for w in work]))
           for ring in (ring_a, ring_b)]
    assert c.mid_ratio == pytest.approx(med[1] / med[0])
    fast = [min(np.median(r) for r in ring) - min(np.median(w) for w in work) for ring in (ring_a, ring_b)]
    assert c.fast_ratio == pytest.approx(fast[1] / fast[0])


def test_a_cells_drift_prior_is_at_least_its_cases():
    import math
    from kbench.model import judge

    class Prior:
        taus = {"rd": 0.02, "wr": 0.04, "cell": 0.01, "diff": 0.5}

        def get(self, k):
            return (self.taus[k] ** 2, 30.0)
    mean = stats.Series([(np.ones(3) * 100.0, np.ones(3) * 100.0)] * 4, lambda m: (m[0] + m[1]) / 2)
    mean.case_names = ("rd", "wr")
    diff = stats.Series([(np.ones(3) * 300.0, np.ones(3) * 100.0)] * 4, lambda m: m[0] - m[1])
    diff.case_names = ("rd", "wr")
    est = {"rd": (math.log(100.0), 0.01, 5.0), "wr": (math.log(100.0), 0.01, 5.0)}
    got = judge.cell_tau2(np.array([0.01 ** 2, 0.5 ** 2]), Prior(), ["cell", "diff"],
                          {"cell": mean, "diff": diff}, est)
    # a mean's parts drift together: (0.5 * 0.02 + 0.5 * 0.04)^2; above the cell's own 0.01^2
    assert got[0] == pytest.approx(0.03 ** 2, rel=1e-3)
    # a difference (here of equal values: not positive) is left at its own prior
    assert got[1] == 0.5 ** 2
    est["rd"] = (math.log(300.0), 0.01, 5.0)
    got = judge.cell_tau2(np.array([0.01 ** 2]), Prior(), ["diff"], {"diff": diff}, est)
    # 300 - 100: weights 1.5 and -0.5, the parts as if apart
    assert got[0] == pytest.approx((1.5 * 0.02) ** 2 + (0.5 * 0.04) ** 2, rel=1e-3)
