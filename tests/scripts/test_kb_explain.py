"""compare --explain and the page's 'Why it changed' section (explain.py):
ranking and attribution on fixed profiles, pooling of runs, the event
counts that moved, and the output of compare and report on the fixture runs
with profiles.jsonl written beside them."""
import io
import json
import math
import shutil
from contextlib import redirect_stdout

import pytest

from kbench.model import compare, explain, groups as groups_mod, load
from kbench.cli import compare_main, report_main
from kbench.views import explain_text


def line(case, kernel=(), user=(), samples=1000, events=None, ns_per_op=100.0, kernel_share=None):
    """A profiles.jsonl line: kernel/user = [(symbol, share, inclusive)]."""
    def syms(items, dso):
        return [{"symbol": s, "dso": dso, "samples": int(sh * samples), "share": sh,
                 "inclusive_share": inc} for s, sh, inc in items]
    ks = sum(sh for _, sh, _ in kernel) if kernel_share is None else kernel_share
    return {"schema": 1, "case": case, "status": "ok", "reason": "", "ns_per_op": ns_per_op,
            "profile": {"event": "cpu-clock", "samples": samples, "kernel_share": ks,
                        "kernel_symbols": syms(kernel, "[kernel.kallsyms]"), "user_symbols": syms(user, "lat_x")},
            "profile_missing": None, "events": events or {}}


def test_functions_ranked_by_change_of_share_with_time_attributed():
    base = explain.pool("c", [line("c", kernel=[("a", 0.30, 0.5), ("b", 0.10, 0.1), ("e.isra.0", 0.02, 0.02)],
                                   user=[("u", 0.05, 0.05)])])
    other = explain.pool("c", [line("c", kernel=[("a", 0.25, 0.5), ("b", 0.20, 0.2), ("d.isra.0", 0.10, 0.1),
                                                 ("e.constprop.1", 0.02, 0.02)])])
    rows = explain.rank_functions(base, other, 1000.0, 1250.0)
    got = [(r.name, r.space, round(r.points, 6), round(r.delta_ns, 6)) for r in rows]
    # b +10 pt (+150 ns), d +10 pt (+125 ns: new), u -5 pt (-50 ns: gone), a -5 pt (+12.5 ns), e: clones of
    # one function on the two kernels, unchanged
    assert got == [("b", "kernel", 10.0, 150.0), ("d", "kernel", 10.0, 125.0), ("u (lat_x)", "user", -5.0, -50.0),
                   ("a", "kernel", -5.0, 12.5), ("e", "kernel", 0.0, 5.0)]
    b = rows[0]
    assert (b.base, b.other, b.base_ns, b.other_ns) == (0.10, 0.20, 100.0, 250.0)
    d = rows[1]
    assert math.isnan(d.base) and math.isnan(d.base_ns) and d.other_ns == 125.0
    assert explain_text.function_cells(d) == ["d", "kernel", "—", "10.0%", "+10.0", "—", "125", "+125"]
    inc = explain.rank_functions(base, other, 1000.0, 1250.0, inclusive=True, top=2)
    assert [(r.name, round(r.points, 6)) for r in inc] == [("b", 10.0), ("d", 10.0)]


def test_runs_of_a_side_pooled_by_their_samples():
    p = explain.pool("c", [line("c", kernel=[("a", 0.1, 0.1)], samples=1000, ns_per_op=100,
                                events={"vmstat": {"pgfault": 1.0}, "softirqs": {"RCU": 0.5}}),
                           line("c", kernel=[("a", 0.3, 0.3)], samples=3000, ns_per_op=300,
                                events={"vmstat": {"pgfault": 3.0}}),
                           {"case": "c", "status": "failed", "profile": None, "profile_missing": "x", "events": None}])
    assert p.samples == 4000 and p.runs == 2
    assert p.self_share[("kernel", "a")] == pytest.approx(0.25)
    assert p.kernel_share == pytest.approx(0.25)
    assert p.ns_per_op == 200
    # a counter absent from a run did not move in it
    assert p.events == {"vmstat pgfault": 2.0, "softirqs RCU": 0.25}
    none = explain.pool("c", [{"case": "c", "status": "failed", "profile": None,
                               "profile_missing": "the profiled invocation failed", "events": None}])
    assert none.missing == "the profiled invocation failed" and none.samples == 0


def test_event_counts_that_moved():
    base = explain.Profile("c", events={"vmstat pgfault": 1.0, "softirqs RCU": 0.02, "interrupts LOC": 0.015,
                                        "vmstat tiny": 0.001, "slab filp": -0.02})
    other = explain.Profile("c", events={"vmstat pgfault": 1.1, "softirqs RCU": 0.05, "interrupts LOC": 0.001,
                                         "slab dentry": 0.5, "vmstat tiny": 0.009, "slab filp": 0.02})
    rows = explain.rank_events(base, other)
    # pgfault x1.1: too small a move; tiny: below 0.01 per op on both sides
    assert [r.name for r in rows] == ["slab dentry", "slab filp", "interrupts LOC", "softirqs RCU"]
    assert [explain_text.event_cells(r)[3] for r in rows] == ["appeared", "sign reversed", "×0.07", "×2.50"]


def test_a_side_without_profile_is_said():
    base = explain.pool("c", [line("c", kernel=[("a", 0.5, 0.5)])])
    other = explain.pool("c", [{"case": "c", "status": "timeout", "profile": None,
                                "profile_missing": "the profiled invocation timeout", "events": None}])
    e = explain.explain_case("c", "FAILED", "on B: timeout", "latency", 100.0, math.nan, base, other, "A", "B")
    assert not e.complete and e.functions == []
    assert explain_text.profile_line(e) == ("A: 1000 cpu-clock samples, 50.0% in the kernel; "
                                       "B: no profile (the profiled invocation timeout)")
    e = explain.explain_case("c", "slower", "", "latency", 100.0, 120.0, base, None, "A", "B")
    assert "B: no profile (run with kbench-run --profile)" in explain_text.profile_line(e)


def test_bandwidth_attributes_the_profiled_runs_time_per_op():
    base = explain.pool("c", [line("c", kernel=[("copy", 0.5, 0.5)], ns_per_op=1000)])
    other = explain.pool("c", [line("c", kernel=[("copy", 0.6, 0.6)], ns_per_op=2000)])
    e = explain.explain_case("c", "significantly slower", "", "bandwidth", 3000.0, 1500.0, base, other)
    assert e.time_source == "profiled run"
    assert (e.functions[0].base_ns, e.functions[0].other_ns) == (500.0, 1200.0)


@pytest.fixture
def results_with_profiles(tmp_path, fixture_runs):
    """Copies of the fixture runs (lat_syscall stat 9% slower on the new
    kernel) with profiles.jsonl: stat profiled on both, open on the base only."""
    results = tmp_path / "results"
    shutil.copytree(fixture_runs[0].parent, results / "testhost")
    base = next((results / "testhost" / fixture_runs[0].name).iterdir())
    new = next((results / "testhost" / fixture_runs[1].name).iterdir())
    stat_base = line("lat_syscall stat", kernel=[("link_path_walk", 0.20, 0.4), ("do_syscall_64", 0.05, 0.9)],
                     user=[("__fstatat64", 0.10, 0.95)], events={"vmstat": {"pgfault": 0.02}})
    stat_new = line("lat_syscall stat", kernel=[("link_path_walk", 0.20, 0.4), ("do_syscall_64", 0.05, 0.9),
                                                ("__seccomp_filter", 0.12, 0.12)],
                    user=[("__fstatat64", 0.08, 0.95)], events={"vmstat": {"pgfault": 0.2}})
    (base / "profiles.jsonl").write_text(json.dumps(stat_base) + "\n"
                                         + json.dumps(line("lat_syscall open", kernel=[("x", 0.5, 0.5)])) + "\n")
    (new / "profiles.jsonl").write_text(json.dumps(stat_new) + "\n")
    return results, base, new


def _report(base, new):
    sides = []
    for d in (base, new):
        runs = load.load_runs([d], lambda m: None)
        sides.append(compare.Side.from_group(groups_mod.group_runs(runs, lambda m: None)[0]))
    return compare.run_compare(sides[0], sides[1], compare.Options(n_boot=200))


def test_explain_of_a_comparison_attributes_share_times_headline(results_with_profiles):
    _, base, new = results_with_profiles
    rep = _report(base, new)
    expls = {e.case: e for e in explain.explain_report(rep)}
    row = next(r for r in rep.rows if r.case == "lat_syscall stat")
    assert row.cmp.verdict == "significantly slower"
    e = expls["lat_syscall stat"]
    assert e.complete and (e.base_ns, e.other_ns) == (row.cmp.base, row.cmp.other)
    first = e.functions[0]
    assert first.name == "__seccomp_filter" and first.points == pytest.approx(12.0)
    assert first.other_ns == pytest.approx(0.12 * row.cmp.other)
    lpw = next(r for r in e.functions if r.name == "link_path_walk")
    assert lpw.delta_ns == pytest.approx(0.2 * (row.cmp.other - row.cmp.base))
    assert [(r.name, r.base, r.other) for r in e.events] == [("vmstat pgfault", 0.02, 0.2)]
    # flagged cases without profiles are explained as such; open has a profile on one side only
    assert not expls["lat_syscall open"].complete
    assert set(expls) == {r.case for r in rep.rows if r.cmp.flagged}


def test_compare_explain_prints_the_tables(results_with_profiles):
    results, base, new = results_with_profiles
    out = io.StringIO()
    with redirect_stdout(out):
        assert compare_main(["--no-prior", str(base.parent), str(new.parent), "--explain", "--boot", "200", "--no-history"]) == 0
    text = out.getvalue()
    sec = text.split("== Why it changed", 1)[1]
    assert "lat_syscall stat: significantly slower" in sec
    stat = sec.split("lat_syscall stat:", 1)[1].split("\nlat_syscall", 1)[0]
    row = next(ln for ln in stat.splitlines() if ln.strip().startswith("__seccomp_filter"))
    assert row.split()[1:5] == ["kernel", "—", "12.0%", "+12.0"]
    assert "vmstat pgfault" in stat and "×10.00" in stat
    assert "lat_syscall open: significantly slower" in sec and "no profile (run with kbench-run --profile)" in sec
    # without --explain: no section
    out = io.StringIO()
    with redirect_stdout(out):
        assert compare_main(["--no-prior", str(base.parent), str(new.parent), "--boot", "200", "--no-history"]) == 0
    assert "Why it changed" not in out.getvalue()


def test_compare_explain_json_holds_the_explanations(results_with_profiles, tmp_path):
    _, base, new = results_with_profiles
    doc_path = tmp_path / "c.json"
    with redirect_stdout(io.StringIO()):
        assert compare_main(["--no-prior", str(base.parent), str(new.parent), "--explain", "--boot", "200", "--no-history",
                             "--json", str(doc_path)]) == 0
    doc = json.loads(doc_path.read_text())
    expls = {e["case"]: e for e in doc[0]["explanations"]}
    stat = expls["lat_syscall stat"]
    assert stat["verdict"] == "significantly slower" and stat["complete"] is True
    first = stat["functions"][0]
    assert first["name"] == "__seccomp_filter" and first["base_share"] is None
    assert first["other_share"] == pytest.approx(0.12) and first["points"] == pytest.approx(12.0)
    assert first["other_ns"] == pytest.approx(0.12 * stat["other_ns_per_op"])
    assert stat["events"] == [{"name": "vmstat pgfault", "base": 0.02, "other": 0.2, "factor": pytest.approx(10.0)}]
    opened = expls["lat_syscall open"]
    assert opened["complete"] is False and opened["other_profile"] is None      # profiled on the base only
    assert opened["base_profile"]["samples"] > 0 and opened["base_profile"]["missing"] is None
    # without --explain: no explanations key
    with redirect_stdout(io.StringIO()):
        assert compare_main(["--no-prior", str(base.parent), str(new.parent), "--boot", "200", "--no-history",
                             "--json", str(doc_path)]) == 0
    assert "explanations" not in json.loads(doc_path.read_text())[0]


def test_page_shows_the_explanation_under_the_changed_cases(results_with_profiles, tmp_path):
    results, _, _ = results_with_profiles
    page = tmp_path / "index.html"
    assert report_main(["--no-prior", str(results), "--out", str(page), "--boot", "200", "--no-samples"]) == 0
    html = page.read_text()
    assert html.count('<section id="explain">') == 1
    sec = html.split('<section id="explain">', 1)[1].split("</section>", 1)[0]
    assert '<a href="#case-lat_syscall-stat">lat_syscall stat: significantly slower' in sec
    assert "id='case-lat_syscall-stat'" in html
    assert "<td class=\"\">__seccomp_filter</td>" in sec
    # only flagged cases: the page does not explain unchanged ones
    assert "lat_syscall fstat: no significant change" not in sec


def test_page_without_profiles_has_no_section(tmp_path, fixture_runs):
    results = tmp_path / "results"
    shutil.copytree(fixture_runs[0].parent, results / "testhost")
    page = tmp_path / "index.html"
    assert report_main(["--no-prior", str(results), "--out", str(page), "--boot", "200", "--no-samples"]) == 0
    assert "Why it changed" not in page.read_text()
