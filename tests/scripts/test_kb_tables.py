"""The summary-table definitions: which case feeds which cell, derived
cells, sizes, and missing cases shown as missing."""
import json
import pathlib

import numpy as np
import pytest

from kb_helpers import memory_curve, steps
from kbench.model import groups as groups_mod, load, tables

RECORDED = pathlib.Path(__file__).resolve().parents[1] / "data" / "recorded"


@pytest.fixture(scope="module")
def groups(fixture_runs):
    runs = load.load_runs([fixture_runs[0].parent], load.Warnings())
    return groups_mod.group_runs(runs)


def cells(groups, title):
    t = next(t for t in tables.build_tables(groups) if t.title == title)
    return {c.label: c.cells[groups[0].key] for c in t.columns}, t


def low(values):
    """The default headline over reps: the Harrell-Davis 20th percentile,
    by hand (weights from the Beta distribution's CDF at i/n)."""
    v = np.sort(np.asarray(values, float))
    n = len(v)
    a, b = 0.2 * (n + 1), 0.8 * (n + 1)
    from kbench.model.stats import betainc
    w = np.diff([betainc(a, b, i / n) for i in range(n + 1)])
    return float(np.exp(np.dot(w, np.log(v))))


def test_processor_table(groups):
    c, t = cells(groups, "Processor and processes")
    assert t.metric == "latency"
    assert c["null call"].cases[0].name == "lat_syscall null"
    assert c["select"].cases[0].name == "lat_select select fds=100,type=tcp"
    assert c["shell"].cases[0].name == "lat_proc shell"
    # null I/O = the mean of the read's and the write's values (each the 20th percentile of its
    # reps), as its label says; not the 20th percentile of reps paired by their index
    g = groups[0]
    rd, wr = g.cases["lat_syscall read"], g.cases["lat_syscall write"]
    both = [k for k in rd.reps if k in wr.reps]
    mean = (low([np.median(rd.reps[k]) for k in both]) + low([np.median(wr.reps[k]) for k in both])) / 2
    assert c["null I/O"].series().headline() == pytest.approx(mean)
    per_rep = [(np.median(rd.reps[k]) + np.median(wr.reps[k])) / 2 for k in both]
    assert c["null I/O"].series().headline() != pytest.approx(low(per_rep))


def test_context_switch_subtracts_work(groups):
    c, _ = cells(groups, "Context switching")
    g = groups[0]
    ring = g.cases["lat_ctx ring procs=2,size_kb=16 @same"]
    work = g.cases["lat_ctx work procs=2,size_kb=16"]
    both = [k for k in ring.reps if k in work.reps]
    diff = low([np.median(ring.reps[k]) for k in both]) - low([np.median(work.reps[k]) for k in both])
    assert c["2p/16K"].series().headline() == pytest.approx(diff)
    # declared, but no kernel here ran them: no column at all
    assert "8p/16K" not in c and "16p/64K" not in c
    assert list(c) == ["2p/0K", "2p/16K"]


def test_two_party_rows_use_same_cpu(groups):
    c, _ = cells(groups, "Local communication latency")
    assert c["pipe"].cases[0].name == "lat_pipe rt @same"
    assert c["UDP"].cases[0].name == "lat_udp rt family=ipv4,size=1 @same"
    assert c["TCP conn"].cases[0].name == "lat_connect connect family=ipv4 @same"


def test_bandwidth_table_sizes(groups):
    c, t = cells(groups, "Local communication bandwidth")
    assert t.metric == "bandwidth"
    cols = {col.label: col for col in t.columns}
    assert cols["file reread"].note == "512 KB"
    assert cols["bcopy (libc)"].note == "64 MB"
    assert c["bcopy (hand)"].cases[0].name == "bw_mem cp size_kb=65536"


def test_memory_latency_from_cache_sizes(groups):
    """The cache levels come from the random chain (a stride walk mostly
    measures the prefetcher); the committed fixture has it at 256 MB only."""
    c, _ = cells(groups, "Memory latency")
    names = {k: (v.cases[0].name if v else None) for k, v in c.items()}
    assert names == {
        "L1": None, "L2": None,                       # no random chain inside L1 or L2 here
        "L3": "lat_mem_rd random size_kb=262144",     # 256 MB is inside this 260 MB L3
        "largest array": "lat_mem_rd random size_kb=262144",   # not "main mem": see below
        "sequential": "lat_mem_rd stride size_kb=262144,stride=128",
    }
    # 256 MB is not 4x this 260 MB L3: the row says what it is
    assert c["largest array"].note == "256 MB array (not 4x the 260 MB L3: partly cached)"


def test_memory_latency_on_the_recorded_run():
    """On a real run (tests/data/recorded: L1 48 KB, L2 2 MB, L3 260 MB), the
    cache-level cells are the random chain at a size well inside each level."""
    runs = load.load_runs([RECORDED], load.Warnings())
    (g,) = groups_mod.group_runs(runs)
    t = next(t for t in tables.build_tables([g]) if t.title == "Memory latency")
    c = {col.label: col.cells[g.key] for col in t.columns}
    # the recorded VM reports a 260 MB L3, which 256 MB does not dwarf
    assert [col.label for col in t.columns] == ["L1", "L2", "L3", "largest array", "sequential"]
    assert {k: v.cases[0].name for k, v in c.items()} == {
        "L1": "lat_mem_rd random size_kb=16",
        "L2": "lat_mem_rd random size_kb=256",
        "L3": "lat_mem_rd random size_kb=16384",
        "largest array": "lat_mem_rd random size_kb=262144",
        "sequential": "lat_mem_rd stride size_kb=262144,stride=128",
    }
    # the random chain is dearer than the prefetched walk at the same size
    assert c["largest array"].series().headline() > 3 * c["sequential"].series().headline()
    # the page-fault cell is the cost of one fault (elapsed_ns / minflt of
    # each sample), not of one page: here one file fault maps ~200 pages
    fv = next(t for t in tables.build_tables([g]) if t.title == "File and VM latency")
    pf = {col.label: col for col in fv.columns}["page fault"]
    cell = pf.cells[g.key]
    assert cell.cases[0].name == "lat_pagefault file" and cell.per == "minflt" and "per fault" in pf.note
    case = g.cases["lat_pagefault file"]
    per_fault = [s["elapsed_ns"] / s["minflt"] for s in _samples(RECORDED, "lat_pagefault file")]
    assert cell.series().headline() == pytest.approx(np.median(per_fault), rel=0.25)
    assert cell.series().headline() > 50 * case.rep_arrays()[0].min()
    # a kernel whose samples do not count faults gets no cell, not a per-page one
    for c in g.cases.values():
        c.per_event = {}
    fv = next(t for t in tables.build_tables([g]) if t.title == "File and VM latency")
    assert {col.label: col for col in fv.columns}["page fault"].cells[g.key] is None


def _samples(root, case):
    import json
    return [o for p in root.rglob("samples.jsonl") for o in map(json.loads, p.read_text().splitlines())
            if o["case"] == case]


def test_pick_level_size():
    sizes = [2 ** i for i in range(0, 19)]
    assert tables.pick_level_size(sizes, 0, 32) == 16
    assert tables.pick_level_size(sizes, 32, 1024) in (128, 256)
    assert tables.pick_level_size([1, 2, 4], 32, 1024) is None
    assert tables.pick_level_size([48], 32, 64) == 48  # only the loose range fits


def test_missing_case_is_missing(groups):
    g = groups[0]
    stripped = load.Group(g.host, "other", g.runs, {k: v for k, v in g.cases.items() if "lat_proc fork" != k})
    t = tables.build_tables([g, stripped])[0]
    col = {c.label: c for c in t.columns}["fork"]
    assert col.cells[stripped.key] is None            # this kernel lacks it: missing, not zero
    assert col.cells[g.key].cases[0].name == "lat_proc fork"
    # a mean with a part missing is missing, never the mean of what is left
    halved = load.Group(g.host, "half", g.runs, {k: v for k, v in g.cases.items() if k != "lat_syscall write"})
    t = tables.build_tables([g, halved])[0]
    assert {c.label: c for c in t.columns}["null I/O"].cells[halved.key] is None


def test_no_cache_info_and_one_size_means_no_level_cells(groups):
    """Without meta.cache the levels come from the curve's plateaus; a
    curve of one size (the committed fixture) has none but main memory."""
    g = groups[0]
    bare = load.Group(g.host, g.kernel, [load.Run(r.path, {}, r.run_id, r.host, r.kernel, r.status)
                                         for r in g.runs], g.cases)
    c = {col.label: col.cells[bare.key] for col in tables.build_tables([bare])[-1].columns}
    assert c["L1"] is None and c["L2"] is None and c["L3"] is None
    assert c["main mem"] is not None and c["sequential"] is not None


def _cache(l3_kb):
    return [{"level": 1, "type": "Data", "size_kb": 48, "line_bytes": 64},
            {"level": 2, "type": "Unified", "size_kb": 2048, "line_bytes": 64},
            {"level": 3, "type": "Unified", "size_kb": l3_kb, "line_bytes": 64}]


def _with_extra_size(run_dir, cases, size):
    """A bigger host's run: every sample of `cases` also at size_kb=size,
    the extra size its binaries add past the fixed ladder."""
    p = pathlib.Path(run_dir) / "samples.jsonl"
    extra = []
    for line in p.read_text().splitlines():
        o = json.loads(line)
        if o["case"] in cases:
            params = ",".join(f"size_kb={size}" if kv.startswith("size_kb=") else kv for kv in o["params"].split(","))
            extra.append(json.dumps(dict(o, params=params, case=f'{o["bench"]} {o["variant"]} {params}')))
    p.write_text(p.read_text() + "\n".join(extra) + "\n")


def _memory_table(groups, title="Memory latency"):
    t = next(t for t in tables.build_tables(groups) if t.title == title)
    return {col.label: col for col in t.columns}


def test_main_memory_row_only_where_the_largest_array_is_4x_the_last_level_cache(tmp_path, gen):
    """"main mem" where the largest array is at least 4x the L3 (the binaries'
    rule, harness/memory.hpp); else the row is "largest array", its note
    saying it is partly cached."""
    small = gen.make_run(tmp_path / "a", "h", "6.1.0", seed=1, reps=3, samples=2, cases="small", failures=False,
                         meta_extra={"cache": _cache(8192)})
    (g,) = groups_mod.group_runs(load.load_runs([small], load.Warnings()))
    cols = _memory_table([g])
    assert "largest array" not in cols
    assert cols["main mem"].cells[g.key].note == "256 MB array"
    # a 480 MB L3 whose binaries added 2 GB: main memory again, at 2 GB
    big = gen.make_run(tmp_path / "b", "big", "6.1.0", seed=2, reps=3, samples=2, cases="small", failures=False,
                       meta_extra={"cache": _cache(491520)})
    _with_extra_size(big, {"lat_mem_rd random size_kb=262144", "lat_mem_rd stride size_kb=262144,stride=128"},
                     2097152)
    (gb,) = groups_mod.group_runs(load.load_runs([big], load.Warnings()))
    cols = _memory_table([gb])
    assert cols["main mem"].cells[gb.key].cases[0].name == "lat_mem_rd random size_kb=2097152"
    assert cols["main mem"].cells[gb.key].note == "2048 MB array"
    assert cols["sequential"].cells[gb.key].cases[0].name == "lat_mem_rd stride size_kb=2097152,stride=128"
    # the same host that could not add it (short of memory): 256 MB, partly cached, and said so
    short = gen.make_run(tmp_path / "c", "short", "6.1.0", seed=3, reps=3, samples=2, cases="small",
                         failures=False, meta_extra={"cache": _cache(491520)})
    (gs,) = groups_mod.group_runs(load.load_runs([short], load.Warnings()))
    cols = _memory_table([gs])
    assert "main mem" not in cols
    assert cols["largest array"].cells[gs.key].note == "256 MB array (not 4x the 480 MB L3: partly cached)"
    # one table of both: the row is main memory only if it is on every kernel
    cols = _memory_table([gb, gs])
    assert "main mem" not in cols and cols["largest array"].cells[gb.key].note == "2048 MB array"


def test_a_bigger_hosts_extra_size_leaves_the_bandwidth_rows_comparable(tmp_path, gen):
    """bw_mem's columns take the largest size every kernel has: a host whose
    binaries added a larger size compares at the sizes both have; alone, it
    shows its largest."""
    a = gen.make_run(tmp_path, "h", "base", seed=1, reps=3, samples=2, cases="small", failures=False)
    b = gen.make_run(tmp_path, "h", "new", seed=2, reps=3, samples=2, cases="small", failures=False)
    _with_extra_size(b, {"bw_mem rd size_kb=65536"}, 2097152)
    ga, gb = groups_mod.group_runs(load.load_runs([tmp_path], load.Warnings()))
    col = _memory_table([ga, gb], "Local communication bandwidth")["mem read"]
    assert col.note == "64 MB"
    assert {k: c.cases[0].name for k, c in col.cells.items()} == {ga.key: "bw_mem rd size_kb=65536",
                                                                  gb.key: "bw_mem rd size_kb=65536"}
    col = _memory_table([gb], "Local communication bandwidth")["mem read"]
    assert col.note == "2048 MB" and col.cells[gb.key].cases[0].name == "bw_mem rd size_kb=2097152"


def test_curve_plateaus_and_levels():
    pts = [(s, steps(s)) for s in (2 ** i for i in range(19))]
    assert [p[0] for p in tables.curve_plateaus(pts)] == [1, 32, 1024, 32768]
    assert tables.curve_levels(pts) == {1: [1, 2, 4, 8, 16], 2: [32, 64, 128, 256, 512],
                                        3: [1024, 2048, 4096, 8192, 16384]}
    # a rise of less than 1.5 times the plateau's first stays on it (noise,
    # TLB misses inside a level); 1.5 times starts the next
    assert tables.curve_plateaus([(1, 1.0), (2, 1.2), (4, 1.49), (8, 1.5), (16, 1.6)]) == [[1, 2, 4], [8, 16]]
    # three plateaus: L1, L2 and main memory (no L3); one plateau: none
    assert tables.curve_levels([(1, 1.0), (4, 1.1), (16, 4.0), (64, 80.0), (256, 85.0)]) == {1: [1, 4], 2: [16]}
    assert tables.curve_levels([(1, 90.0), (2, 91.0)]) == {}
    assert tables.curve_levels([]) == {}


def test_cache_levels_from_the_curve_without_meta_cache(tmp_path, gen):
    """A VM that reports no caches: the level cells are sizes in the middle of
    the curve's first three plateaus, and each says it was guessed."""
    run = gen.make_run(tmp_path, "h", "6.1.0", seed=7, reps=3, samples=2, cases=memory_curve(steps),
                       failures=False, meta_extra={"cache": []})
    (g,) = groups_mod.group_runs(load.load_runs([run], load.Warnings()))
    t = next(t for t in tables.build_tables([g]) if t.title == "Memory latency")
    c = {col.label: col.cells[g.key] for col in t.columns}
    assert {k: v.cases[0].name for k, v in c.items()} == {
        "L1": "lat_mem_rd random size_kb=4", "L2": "lat_mem_rd random size_kb=128",
        "L3": "lat_mem_rd random size_kb=4096", "main mem": "lat_mem_rd random size_kb=262144"}
    assert c["L2"].note == "128 KB array; L2 guessed from the latency curve (plateau 32 KB..512 KB), not meta.cache"
    assert [k for k, v in c.items() if v.from_curve] == ["L1", "L2", "L3"]
    # the same curve with meta.cache: the reported sizes, nothing guessed
    run2 = gen.make_run(tmp_path, "h2", "6.1.0", seed=7, reps=3, samples=2, cases=memory_curve(steps),
                        failures=False)
    (g2,) = groups_mod.group_runs(load.load_runs([run2], load.Warnings()))
    t = next(t for t in tables.build_tables([g2]) if t.title == "Memory latency")
    c = {col.label: col.cells[g2.key] for col in t.columns}
    assert c["L1"].cases[0].name == "lat_mem_rd random size_kb=16"     # inside the fixture's 48 KB L1
    assert not any(v.from_curve for v in c.values() if v) and "meta.cache" not in c["L1"].note


def test_cell_series_carries_runs_and_the_estimator(groups):
    c, _ = cells(groups, "Processor and processes")
    g = groups[0]
    rd, wr = g.cases["lat_syscall read"], g.cases["lat_syscall write"]
    per_rep = [(np.median(rd.reps[k]) + np.median(wr.reps[k])) / 2 for k in sorted(rd.reps)]
    s = c["null I/O"].series("median")
    assert s.headline() == pytest.approx(np.median(per_rep))
    assert s.units == [k[0] for k in sorted(rd.reps)]        # the run of each rep
    single = c["null call"].series()
    assert single.units == g.cases["lat_syscall null"].rep_units()
