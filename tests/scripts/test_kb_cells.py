"""Summary cells compare the same case on both kernels, or say "not
comparable": a cell resolved per kernel (its largest size, its machine's
cache levels) is never coloured against a different case."""
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
