"""make validate in make test: the documentation's figures that the
repository's data can show (tests/validation/recorded_figures.py --check)
hold, and the check fails loudly when one does not."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "validation" / "recorded_figures.py"


def test_the_quoted_figures_hold_on_the_recorded_data():
    p = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "25 of 25 figures within their bounds; the validation scripts that can run here: ran" in p.stdout


def test_a_figure_outside_its_bounds_fails(monkeypatch, capsys):
    sys.path.insert(0, str(SCRIPT.parent))
    import recorded_figures as rf
    name, file, words, lo, hi = rf.CLAIMS[0]
    monkeypatch.setattr(rf, "CLAIMS", [(name, file, words, lo + 50, hi + 50),
                                       ("prior: cases", file, "a sentence no file has", 321, 321)])
    monkeypatch.setattr(rf, "scripts_still_run", lambda run_dir: [])
    assert rf.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert f"FAILED: {name} is " in err and "outside" in err
    assert f'FAILED: {file} no longer says "a sentence no file has"' in err


def test_run_level_counts_a_flagged_table_cell_as_a_headline_flag(validation_script):
    """run_level.py's figures of one comparison: a cell of several cases
    that is flagged is a false flag in a table, unless one of its cases is
    expected to change; the p and mde figures stay the cases'."""
    rl = validation_script("run_level")

    def row(case, verdict="inconclusive", p=0.5, family="secondary", **kw):
        return dict(case=case, verdict=verdict, p_t=p, mde_pct=5.0, family=family, change_pct=-4.0, **kw)
    domains = {"lat_syscall read": "cpu", "lat_syscall write": "cpu", "lat_proc fork": "cpu"}
    rows = [row("lat_syscall read", p=0.01, family="primary: P"), row("lat_syscall write", family="primary: P"),
            row("lat_proc fork"),
            row("cell:P:null I/O", "significantly slower", 0.001, "primary: P",
                cell_of=["lat_syscall read", "lat_syscall write"])]
    aa = rl.summarise(rows, domains, dict(label="x", kind="aa", series="s", k=2))
    assert aa["flagged"] == [("cell:P:null I/O", -4.0)] and aa["headline_flagged"] == ["cell:P:null I/O"]
    assert (aa["cases"], aa["with_p"], aa["p05"]) == (3, 3, 1)
    slow = rl.summarise(rows, domains, dict(label="x", kind="slow", series="s", k=2, expect=r"^lat_syscall read$"))
    assert slow["flagged"] == [] and slow["headline_flagged"] == []


def test_run_level_tails_classes(validation_script):
    """run_level.py --tails: a key's class by its group, its bench, or for a
    summary cell its table."""
    rl = validation_script("run_level")
    got = {k: rl.tail_class(k, d) for k, d in [
        ("lat_syscall null", "cpu"), ("lat_sig install", "cpu"), ("lat_proc fork", "cpu"),
        ("lat_ctx overhead procs=2,size_kb=16", "cpu"), ("lat_fs create size_kb=0", "fs"),
        ("lat_pipe rt @same", "same"), ("lat_tcp rt @cross", "cross"), ("bw_mem rd size_kb=262144", "dram"),
        ("lat_mem_rd random size_kb=64", "memory"), ("cell:Processor and processes:null I/O", "cpu"),
        ("cell:File and VM latency:page fault", "cpu"), ("cell:Context switching:2p/0K", "same")]}
    assert got == {"lat_syscall null": "stateless", "lat_sig install": "stateless", "lat_proc fork": "state",
                   "lat_ctx overhead procs=2,size_kb=16": "state", "lat_fs create size_kb=0": "state",
                   "lat_pipe rt @same": "two-party", "lat_tcp rt @cross": "two-party",
                   "bw_mem rd size_kb=262144": "memory", "lat_mem_rd random size_kb=64": "memory",
                   "cell:Processor and processes:null I/O": "stateless",
                   "cell:File and VM latency:page fault": "state", "cell:Context switching:2p/0K": "two-party"}


def test_run_level_estimators_row_of_low_q_is_the_models_estimate(validation_script, capsys):
    """run_level.py --estimators on the three kept intel runs: one column
    per series and the whole; the row at the model's own quantile (LOW_Q)
    is the sd between the runs of the model's `low` estimate of each case,
    its median over the cases."""
    import math
    import statistics
    import numpy as np
    rl = validation_script("run_level")
    sys.path.insert(0, str(ROOT / "scripts"))
    from kbench.model import bootstrap, defaults, load, stats
    index = [(r, n) for r, n in rl.read_index() if r.startswith("intel-")]
    dirs = {n: rl.DATA / n for _, n in index}
    assert rl.estimators(dirs, index) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split(" | ")[1:3] == ["intel", "all"]
    row = [ln for ln in lines if ln.startswith(f"| {defaults.LOW_Q:.0%} quantile |")]
    assert len(row) == 1 and len(lines) == 3 + 11
    per = {}
    for _, n in index:
        run = load.load_run(dirs[n], load.Warnings())
        for name, c in run.cases.items():
            y = stats.Series.single(c.rep_arrays(), c.metric, name).log_times()
            y = y[np.isfinite(y)]
            if not c.control and len(y) >= 3:
                per.setdefault(name, []).append(float(bootstrap.estimate(y, "low")))
    want = 100 * statistics.median(float(np.std(v, ddof=1)) for v in per.values() if len(v) >= 3)
    got = [float(x.rstrip("%")) for x in row[0].strip("| ").split(" | ")[1:3]]
    assert math.isclose(got[0], want, abs_tol=0.006) and got[0] == got[1]


def test_run_level_reps_counts_each_class_of_case(validation_script, capsys):
    """run_level.py --reps on the three kept intel runs: per series the
    median of each case's reps over its runs and cases, the headline
    system calls and the first table's other cases apart, counted again
    here from runs.jsonl and cases.jsonl; --data refuses a directory
    without index.txt."""
    import gzip
    import json
    import statistics
    rl = validation_script("run_level")
    index = [(r, n) for r, n in rl.read_index() if r.startswith("intel-")]
    dirs = {n: rl.DATA / n for _, n in index}
    assert rl.reps(dirs, index) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[2].startswith("| intel | 3 | ")
    pooled, first = [], []
    for _, n in index:
        counts = {}
        with gzip.open(dirs[n] / "runs.jsonl.gz", "rt") as f:
            for line in f:
                r = json.loads(line)
                if not r["control"] and r["status"] == "ok":
                    counts[r["case"]] = counts.get(r["case"], 0) + 1
        with gzip.open(dirs[n] / "cases.jsonl.gz", "rt") as f:
            table = {d["case"] for d in map(json.loads, f) if d.get("summary")
                     and d["category"] == "Processor and processes"}
        pooled += [v for k, v in counts.items() if rl.HEADLINE_SYSCALL.match(k)]
        first += [v for k, v in counts.items() if k in table and not rl.HEADLINE_SYSCALL.match(k)]
    assert len(pooled) == 3 * 6 and len(first) == 3 * 6   # fork, exec, shell, select, two signals
    cells = lines[2].split(" | ")
    assert cells[2] == f"{statistics.median(pooled):g}" and cells[3] == f"{statistics.median(first):g}"
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "validation" / "run_level.py"), "--data",
                        str(ROOT / "tests"), "--reps"], capture_output=True, text=True)
    assert p.returncode == 2 and "--data" in p.stderr and "no index.txt" in p.stderr


def test_across_sessions_refuses_bad_input(tmp_path):
    """across_sessions.sh: usage without three arguments, and a clear
    message (exit 2) where OLD or NEW lacks three base* and three one* runs."""
    script = ROOT / "tests" / "validation" / "across_sessions.sh"
    p = subprocess.run([str(script)], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.startswith("usage:")
    old, new = tmp_path / "old", tmp_path / "new"
    for d in (old, new):
        d.mkdir()
        for label in ("base1", "base2", "one1", "one2", "one3"):
            (d / f"{label}.dir").write_text(str(tmp_path / label) + "\n")
    p = subprocess.run([str(script), str(old), str(new), str(tmp_path / "out")], capture_output=True, text=True)
    assert p.returncode == 2 and "need 3 runs labelled base* and 3 labelled one*" in p.stderr
    assert not (tmp_path / "out").exists()


def test_within_session_refuses_bad_input(tmp_path):
    """within_session.sh: usage without two arguments, and a clear message
    (exit 2) where DIR lacks four base* and four one* runs."""
    script = ROOT / "tests" / "validation" / "within_session.sh"
    p = subprocess.run([str(script), str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.startswith("usage:")
    d = tmp_path / "campaign"
    d.mkdir()
    for label in ("base1", "base2", "base3", "base4", "one1", "one2", "one3"):
        (d / f"{label}.dir").write_text(str(tmp_path / label) + "\n")
    p = subprocess.run([str(script), str(d), str(tmp_path / "out")], capture_output=True, text=True)
    assert p.returncode == 2 and "needs 4 runs labelled base* and 4 labelled one*" in p.stderr
    assert not (tmp_path / "out").exists()
