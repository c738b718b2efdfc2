"""The file-system-bound cases (lat_fs: domain "fs") and the cache-sized
memory control (ctl_machine llc).

lat_fs's cost follows what the runs before it left in the file system, so
its cases share one drift: the prior gives each at least its bench's pooled
tau, and a host's runs fit their scale apart from the CPU-bound cases'.
The llc control moves with what other tenants keep in a shared cache: when
it moves, the memory-bound cases are not judged."""
import io
import json
import math
import re

import numpy as np
import pytest

from kbench.model import compare, decl, drift, legacy, load, prior, stats
from kbench.views import compare_text, html

FS = ["lat_fs create dir=default,mode=fresh,size_kb=0", "lat_fs delete dir=default,mode=fresh,size_kb=10",
      "lat_fs delete dir=default,mode=reuse,size_kb=4"]


def _prior(shared=("lat_fs",)):
    return drift.DriftPrior({FS[0]: (0.20, 30.0), FS[1]: (0.01, 30.0), FS[2]: (0.05, 20.0),
                             "lat_syscall null": (0.02, 30.0), "lat_syscall read": (0.10, 30.0)},
                            {"lat_fs": (0.20, 20.0), "lat_syscall": (0.10, 30.0)}, (0.05, 10.0), shared=shared)


def test_a_shared_bench_gives_each_case_at_least_its_pooled_tau():
    pooled = math.sqrt((0.20 ** 2 + 0.01 ** 2 + 0.05 ** 2) / 3)
    p = _prior()
    assert p.get(FS[1]) == (pytest.approx(pooled ** 2), 30.0)
    assert p.get(FS[2]) == (pytest.approx(pooled ** 2), 20.0)
    assert p.get(FS[0]) == (pytest.approx(0.04), 30.0)          # above the pool: its own
    assert p.get("lat_fs create dir=x,mode=fresh,size_kb=0")[0] == pytest.approx(0.04)  # the bench's, larger
    # other benches keep their own, however spread their cases are
    assert p.get("lat_syscall null") == (pytest.approx(0.0004), 30.0)
    plain = _prior(shared=())
    assert plain.get(FS[1]) == (pytest.approx(0.0001), 30.0)


def test_the_prior_file_keeps_its_shared_benches(tmp_path):
    taus = {FS[0]: (0.2, 30.0), FS[1]: (0.01, 30.0), "lat_syscall null": (0.02, 30.0)}
    obj = drift.to_json(taus, {"runs": 3}, "m", ["lat_fs"])
    assert obj["shared_benches"] == ["lat_fs"]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(obj))
    got = drift.load_prior(path)
    assert got.shared == ("lat_fs",)
    assert got.get(FS[1])[0] == pytest.approx((0.2 ** 2 + 0.01 ** 2) / 2, rel=1e-3)
    for bad in ("lat_fs", [1], {"lat_fs": 1}):
        path.write_text(json.dumps(dict(obj, shared_benches=bad)))
        with pytest.raises(drift.PriorError, match="shared_benches"):
            drift.load_prior(path)
    # a file without the key (made before it) shares nothing
    path.write_text(json.dumps({k: v for k, v in obj.items() if k != "shared_benches"}))
    assert drift.load_prior(path).shared == ()


def test_the_built_in_prior_pools_the_file_system_cases():
    p = drift.load_prior()
    assert "lat_fs" in p.shared
    fs = [k for k in p.cases if k.startswith("lat_fs ")]
    taus = [math.sqrt(p.get(k)[0]) for k in fs]
    own = [p.cases[k][0] for k in fs]
    assert min(own) <= drift.TAU_FLOOR + 1e-9          # the file measured some at the floor ...
    assert min(taus) >= math.sqrt(sum(t * t for t in own) / len(own)) - 1e-9   # ... none is used so


def test_declarations_name_the_file_system_domain(tmp_path):
    assert legacy.domain("lat_fs", "create") == "fs"
    assert legacy.domain("ctl_machine", "llc") == "memory"
    assert legacy.domain("lat_syscall", "null") == "cpu"

    def declare(domains):
        lines = []
        for name, dom in domains.items():
            bench, variant = name.split()[:2]
            lines.append(json.dumps({"case": name, "bench": bench, "variant": variant, "category": "c",
                                     "category_rank": 1, "rank": 1, "direction": "lower", "domain": dom}))
        (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
        return decl.read_declarations(tmp_path, lambda *a: None, load.iter_jsonl)
    # binaries from before the domain declared lat_fs cpu: taken as fs
    old = declare({FS[0]: "cpu", "lat_syscall null cpu": "cpu"})
    assert old[FS[0]]["domain"] == "fs" and old["lat_syscall null cpu"]["domain"] == "cpu"
    new = declare({FS[0]: "fs", "bw_mem rd x": "memory"})
    assert new[FS[0]]["domain"] == "fs" and new["bw_mem rd x"]["domain"] == "memory"
    # lat_proc fork_mem, declared cpu before it was memory-bound: taken as memory; fork stays cpu
    assert legacy.domain("lat_proc", "fork_mem") == "memory" and legacy.domain("lat_proc", "fork") == "cpu"
    old = declare({"lat_proc fork_mem parent_mb=64": "cpu", "lat_proc fork x": "cpu", FS[0]: "fs"})
    assert old["lat_proc fork_mem parent_mb=64"]["domain"] == "memory"
    assert old["lat_proc fork x"]["domain"] == "cpu"


def _domain(key):
    b = key.split(" ", 1)[0]
    return "fs" if b == "lat_fs" else "memory" if b in ("bw_mem", "lat_mem_rd") else "cpu"


def test_the_prior_maker_shares_the_file_system_benches():
    run = load.Run(None, {}, "r", "h", "k", "complete")
    for name in (FS[0], "lat_syscall null", "bw_mem rd size_kb=4"):     # domains as legacy knows them
        run.cases[name] = load.Case(name, name.split()[0], name.split()[1], "", "unpinned", "latency")
    assert prior.shared_benches([run]) == ["lat_fs"]


T0 = 1_000_000_000


def _run(run_id, llc_ns):
    """One run: the CPU controls flat, the DRAM control flat, the cache-sized
    chase at llc_ns, a memory-bound and a CPU-bound case steady."""
    cases = {
        "ctl_machine alu": ("alu", "latency", 1.2, True),
        "ctl_machine mem": ("mem", "bandwidth", 40000.0, True),
        "ctl_machine llc": ("llc", "latency", llc_ns, True),
        "lat_mem_rd random size_kb=16384": ("random", "latency", 90.0, False),
        "lat_syscall null": ("null", "latency", 150.0, False),
    }
    run = load.Run(None, {"run_id": run_id}, run_id, "h", "k", "complete")
    for name, (variant, metric, v, ctl) in cases.items():
        c = load.Case(name, name.split()[0], variant, "", "unpinned", metric, control=ctl)   # domain: legacy's
        for i, x in enumerate((1.0, 1.01, 0.99, 1.0, 1.005, 0.995)):
            c.reps[(run_id, i)] = [v * x * 0.999, v * x, v * x * 1.001]
            c.rep_start[(run_id, i)] = T0 + i * 1_000_000
        run.cases[name] = c
    return run


def test_a_cache_control_beyond_what_runs_have_shown_leaves_memory_unjudged():
    """The cache-sized chase 3.3x faster while the DRAM control held: with
    the built-in prior (the chase drifts about 13% between runs) that is
    outside what any run has shown, a memory shift: the memory-bound cases
    are not judged, and say why; the CPU-bound ones are.  40% faster is
    within it: a covariate, every case judged."""
    opts = compare.Options(n_boot=300, prior=drift.load_prior())
    rep = compare.run_compare(compare.Side("A", [_run("a", 130.0)]), compare.Side("B", [_run("b", 39.0)]), opts)
    assert rep.shift.memory_shifted and not rep.shift.shifted
    assert "ctl_machine llc" in {r.case for r in rep.shift.memory_rows}
    assert rep.shift.judged_out("memory") and not rep.shift.judged_out("cpu") and not rep.shift.judged_out("fs")
    rows = {r.case: r.cmp for r in rep.rows}
    assert rows["lat_mem_rd random size_kb=16384"].verdict == stats.MACHINE
    assert rows["lat_mem_rd random size_kb=16384"].not_judged.startswith("memory shift: ctl_machine llc ran 70.0% faster")
    assert rows["lat_syscall null"].verdict != stats.MACHINE
    text = compare_text.format_report(rep, opts=opts)
    assert "WARNING: MEMORY SHIFT. ctl_machine llc ran 70.0% faster against the CPU speed, beyond what" in text
    within = compare.run_compare(compare.Side("A", [_run("a", 130.0)]), compare.Side("B", [_run("b", 78.0)]), opts)
    assert not within.shift.memory_shifted
    assert not any(r.cmp.verdict == stats.MACHINE or r.cmp.significant for r in within.rows)
    assert "MEMORY SHIFT" not in compare_text.format_report(within, opts=opts)


def _scaled(run, name, factor):
    """run with every rep of case `name` multiplied by factor (time) or
    divided by it (bandwidth)."""
    c = run.cases[name]
    for k, v in c.reps.items():
        c.reps[k] = [x / factor if c.metric == "bandwidth" else x * factor for x in v]
    return run


def test_a_memory_control_drifting_between_runs_leaves_memory_judged():
    """Two runs a side whose DRAM control disagrees by 8% within the
    baseline (the memory system drifting between runs) and sits 7-15%
    slower on the other side: a move the runs themselves show, so the
    memory-bound cases are judged relative to it (their steady case is not
    called faster or slower, and is not left unjudged)."""
    opts = compare.Options(n_boot=300, prior=drift.load_prior())
    name = "ctl_machine mem"
    a = [_scaled(_run("a1", 130.0), name, 1.0), _scaled(_run("a2", 130.0), name, 1.08)]
    b = [_scaled(_run("b1", 130.0), name, 1.15), _scaled(_run("b2", 130.0), name, 1.16)]
    rep = compare.run_compare(compare.Side("A", a), compare.Side("B", b), opts)
    assert not rep.shift.memory_shifted and not rep.shift.shifted
    assert not rep.shift.judged_out("memory")
    mem_row = next(r for r in rep.rows if r.case == "lat_mem_rd random size_kb=16384")
    assert mem_row.cmp.verdict != stats.MACHINE and not mem_row.cmp.significant
    assert "MEMORY SHIFT" not in compare_text.format_report(rep, opts=opts)
