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
