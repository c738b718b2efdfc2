"""Declarations recorded in a run (cases.jsonl) drive categories, order,
summary tables and curves; runs without them use the legacy mapping."""
import json
import pathlib

from kb_helpers import one_run, rewrite_samples

from kbench.model import decl, legacy, groups as groups_mod, load, tables

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _declare(case, bench, variant, params="", **over):
    d = {"bench": bench, "variant": variant, "params": params, "placement": "unpinned", "case": case,
         "metric": "latency", "two_party": False, "control": False, "args": [variant],
         "category": "Widgets", "category_rank": 5, "rank": 1000, "direction": "lower", "unit": "ns",
         "summary": None, "curve": None}
    d.update(over)
    return d


def _rename_bench(run_dir, old, new):
    def fn(o):
        if o.get("bench") == old:
            o["bench"] = new
            o["case"] = o["case"].replace(old, new, 1)
        return o
    rewrite_samples(run_dir, fn)


def _load(run_dir, warn=None):
    runs = load.load_runs([run_dir], warn or load.Warnings())
    return groups_mod.group_runs(runs)


def test_recorded_declaration_makes_a_new_category_and_table(base_run):
    # A benchmark no script knows: its declarations alone place it.
    _rename_bench(base_run, "lat_proc", "lat_widget")
    lines = [_declare("lat_widget fork", "lat_widget", "fork", rank=1001,
                      summary={"column": "spin", "note": "one widget", "order": 1, "combine": "one",
                               "placement": None, "minus": None, "size_param": None, "prefer": None}),
             _declare("lat_widget exec", "lat_widget", "exec", rank=1000)]
    (base_run / "cases.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (g,) = _load(base_run)
    fork = g.cases["lat_widget fork"]
    assert decl.category_of(fork) == "Widgets"
    # rank 5 puts the category first; rank orders exec before fork
    ordered = sorted(g.cases.values(), key=decl.case_sort_key)
    names = [c.name for c in ordered]
    assert names[0] == "lat_widget exec" and names.index("lat_widget fork") < 3
    # lat_widget shell ran but is not declared: its bench's category, no column
    assert g.cases["lat_widget shell"].decl["category"] == "Widgets"
    assert g.cases["lat_widget shell"].decl["summary"] is None
    t = tables.build_tables([g])
    assert t[0].title == "Widgets"
    assert [(c.label, c.note) for c in t[0].columns] == [("spin", "one widget")]
    assert t[0].columns[0].cells[g.key].cases[0] is fork
    # a case of this run that cases.jsonl does not list (other parameters,
    # say) takes its bench's category, never a column
    assert decl.category_of(g.cases["lat_syscall null"]) == "Other"


def test_case_with_other_params_keeps_category_but_no_column(base_run):
    lines = [_declare("lat_syscall null", "lat_syscall", "stat", rank=7000)]
    lines[0]["case"] = "lat_syscall stat size=9"   # declared name differs from the run's case
    (base_run / "cases.jsonl").write_text(json.dumps(lines[0]) + "\n")
    (g,) = _load(base_run)
    d = g.cases["lat_syscall stat"].decl
    assert d["category"] == "Widgets" and d["summary"] is None and d["rank"] == 7000


def test_bad_declaration_lines_are_reported_and_skipped(base_run):
    good = _declare("lat_syscall null", "lat_syscall", "null")
    bad = [dict(good, category=""), dict(good, rank="1"), dict(good, direction="up"),
           dict(good, summary={"column": "x", "order": 1, "combine": "sum"}),
           dict(good, curve={"chart": "", "x": "size_kb"})]
    text = "".join(json.dumps(x) + "\n" for x in bad) + json.dumps(good) + "\n"
    (base_run / "cases.jsonl").write_text(text)
    w = load.Warnings()
    (g,) = _load(base_run, w)
    msgs = "\n".join(w.messages)
    for why in ("'category' is not a non-empty string", "'rank' is not an integer", "'direction' is 'up'",
                "summary 'combine' is 'sum'", "curve 'chart'"):
        assert why in msgs
    assert g.cases["lat_syscall null"].decl["category"] == "Widgets"


def test_unreadable_declarations_fall_back_with_a_warning(base_run):
    (base_run / "cases.jsonl").mkdir()
    w = load.Warnings()
    (g,) = _load(base_run, w)
    assert any("cases.jsonl" in m and "fall back" in m for m in w.messages)
    assert decl.category_of(g.cases["lat_syscall null"]) == "Processor and processes"


def test_runs_without_declarations_use_the_legacy_mapping(fixture_runs):
    (g,) = _load(one_run(fixture_runs[0]))
    assert not (one_run(fixture_runs[0]) / "cases.jsonl").exists()
    c = g.cases["lat_sig prot"]
    assert c.decl == legacy.declaration("lat_sig", "prot", {}, "latency")
    assert c.decl["category"] == "File and VM latency"
    assert decl.categories(g.cases.values())[0] == "Processor and processes"


def test_no_benchmark_name_in_the_scripts_outside_the_legacy_mapping():
    names = sorted(p.stem for p in (ROOT / "src" / "bench").glob("*.cpp"))
    assert len(names) >= 20
    for p in sorted((ROOT / "scripts" / "kbench").glob("*.py")):
        if p.name == "legacy.py":
            continue
        text = p.read_text()
        hits = [n for n in names if n in text]
        assert not hits, f"{p.name} names {hits}"
