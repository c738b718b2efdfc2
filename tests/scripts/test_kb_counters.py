"""Counters per operation (runs made with --counters): the values the
summary, the comparison and the page show, on samples with known counts."""
import math

from kb_helpers import rewrite_samples
from kbench.model import counters, load
from kbench.cli import compare_main, report_main, summarize_main
from kbench.views import units

PIPE = "lat_pipe rt @same"


def with_counters(run, instructions_per_op, cycles=True):
    """Counter totals of known per-op values on the lat_pipe samples; the
    other cases get nulls, as on a machine without those counters."""
    def add(s):
        n = s["iters"]
        if s["case"] == PIPE:
            s.update(instructions=instructions_per_op * n, cycles=(500 * n if cycles else None),
                     context_switches=2 * n, page_faults=0, task_clock_ns=int(s["ns_per_op"] * n))
        else:
            s.update(instructions=None, cycles=None, context_switches=None)
        return s
    rewrite_samples(run, add)
    return run


def test_per_op_values_and_ipc(tmp_path, gen):
    run = with_counters(gen.make_run(tmp_path, "h", "k", seed=3, reps=3, samples=4, cases="medium"), 1000)
    cases = load.load_runs([run], load.Warnings())[0].cases
    v = counters.headlines(cases[PIPE])
    assert v["instructions"] == 1000 and v["cycles"] == 500 and v["ipc"] == 2.0
    assert v["context_switches"] == 2 and v["page_faults"] == 0
    # Nulls are no data: a case with only nulls has no counters at all.
    other = next(c for n, c in cases.items() if n != PIPE)
    assert counters.headlines(other) == {}


def test_null_cycles_means_no_ipc(tmp_path, gen):
    run = with_counters(gen.make_run(tmp_path, "h", "k", seed=4, reps=3, samples=4, cases="medium"), 1000,
                        cycles=False)
    v = counters.headlines(load.load_runs([run], load.Warnings())[0].cases[PIPE])
    assert "cycles" not in v and "ipc" not in v and v["instructions"] == 1000


def test_summarize_shows_counters(tmp_path, gen, capsys):
    run = with_counters(gen.make_run(tmp_path, "h", "k", seed=5, reps=3, samples=4, cases="medium"), 1000)
    assert summarize_main([str(run)]) == 0
    out = capsys.readouterr().out
    section = out.split("== counters per operation", 1)[1]
    lines = section.splitlines()
    header = next(line for line in lines if line.startswith("case")).split()
    row = next(line for line in lines if line.startswith(PIPE))[len(PIPE):].split()
    got = dict(zip(header[1:], row))
    assert header[1:] == ["instr", "cycles", "task-ns", "ctx-sw", "faults", "IPC"]
    assert (got["instr"], got["cycles"], got["ctx-sw"], got["faults"], got["IPC"]) == \
        ("1000", "500", "2.00", "0", "2.00")


def test_compare_shows_counter_changes(tmp_path, gen, capsys):
    a = with_counters(gen.make_run(tmp_path, "h", "base", seed=6, reps=3, samples=4, cases="medium",
                                   run_id="a"), 1000)
    b = with_counters(gen.make_run(tmp_path, "h", "new", seed=7, reps=3, samples=4, cases="medium",
                                   run_id="b"), 1100)
    assert compare_main([str(a), str(b), "--boot", "100"]) == 0
    out = capsys.readouterr().out
    section = out.split("== counters per operation", 1)[1]
    assert f"{PIPE}  instr" in section and "10.0% more" in section
    assert "ctx-sw" in section and "same" in section
    faults = next(line for line in section.splitlines() if line.startswith(f"{PIPE}  faults"))
    assert faults.split()[-1] == "same"  # 0 and 0


def test_report_has_a_counter_table(tmp_path, gen):
    with_counters(gen.make_run(tmp_path / "r", "h", "base", seed=8, reps=3, samples=4, cases="small",
                               run_id="a"), 1000)
    with_counters(gen.make_run(tmp_path / "r", "h", "new", seed=9, reps=3, samples=4, cases="small",
                               run_id="b"), 900)
    out = tmp_path / "site" / "index.html"
    assert report_main([str(tmp_path / "r"), "--out", str(out), "--plots", str(tmp_path / "p"), "--no-samples",
                        "--boot", "100"]) == 0
    page = out.read_text()
    assert "<h2 id='counters'>Counters per operation</h2>" in page
    assert "title='10.0% fewer than the baseline'" in page


def test_change_text():
    assert units.counter_fmt_change(10.0) == "10.0% more"
    assert units.counter_fmt_change(-5.0) == "5.0% fewer"
    assert units.counter_fmt_change(0.0) == "same"
    assert units.counter_fmt_change(math.nan) == "-"
