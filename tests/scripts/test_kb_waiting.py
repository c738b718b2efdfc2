"""A case dominated by waiting (issue 14 item 11): a one-party case whose
process was blocked (asleep: the disk, a journal commit, a lock) for most of
its time measured how long it waited, not the cost of its path. The summary
says so instead of quoting its time as a latency; two-party cases, which
wait for their partner by design, never count."""
import shutil

from kb_helpers import BASE_DIR, NEW_DIR, one_run, rewrite_samples
from kbench.model import load, runs
from kbench.cli import summarize_main

CREATE = "lat_fs create mode=fresh,size_kb=0"
PIPE = "lat_pipe rt @same"


def _run_with(tmp_path, blocked):
    """The base fixture run with the samples of the cases in `blocked`
    (case -> share) rewritten so that their process was on a CPU only for
    1 - share of each sample's time."""
    run = tmp_path / "testhost" / "6.1.0-base" / one_run(BASE_DIR).name
    shutil.copytree(one_run(BASE_DIR), run)

    def fn(s):
        share = blocked.get(s["case"])
        if share is not None:
            on_cpu = int(s["elapsed_ns"] * (1 - share))
            s["utime_ns"], s["stime_ns"], s["run_delay_ns"], s["steal_ns"] = on_cpu // 4, on_cpu - on_cpu // 4, 0, 0
        return s
    rewrite_samples(run, fn)
    return run


def test_blocked_share_of_a_sample():
    s = {"elapsed_ns": 1000, "utime_ns": 100, "stime_ns": 200, "run_delay_ns": 100, "steal_ns": None}
    assert abs(load.blocked_share(s) - 0.6) < 1e-9
    assert load.blocked_share({"elapsed_ns": 1000, "utime_ns": 700, "stime_ns": 400}) == 0.0  # rounding: never < 0
    assert load.blocked_share({"elapsed_ns": 1000}) is None


def test_waiting_case_is_not_quoted_as_a_latency(tmp_path, capsys):
    run = _run_with(tmp_path, {CREATE: 0.8, PIPE: 0.9})
    assert summarize_main([str(run), "--cases"]) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith("0K create"))
    assert "waiting" in row and "µs" not in row, row
    assert "80% of its time blocked" in out and "not a latency" in out
    # the other columns of the table keep their values
    assert "µs" in next(ln for ln in out.splitlines() if ln.startswith("10K create"))
    # every case: the raw value stays, marked w, with the legend
    case_row = next(ln for ln in out.splitlines() if ln.startswith("lat_fs create size_kb=0 "))
    assert case_row.split()[-2] == "w" and "µs" in case_row, case_row
    assert "w = blocked" in out
    # a two-party case waits for its partner by design: never flagged
    pipe_rows = [ln for ln in out.splitlines() if ln.startswith("lat_pipe rt") and "@same" in ln]
    assert pipe_rows and not any(ln.split()[-2] == "w" for ln in pipe_rows)


def test_a_case_on_the_cpu_is_quoted(tmp_path, capsys):
    run = _run_with(tmp_path, {CREATE: 0.3})
    assert summarize_main([str(run), "--cases"]) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith("0K create"))
    assert "µs" in row and "waiting" not in row
    assert "w = blocked" not in out


def test_waiting_share_is_the_median_of_rep_medians(tmp_path):
    run = _run_with(tmp_path, {CREATE: 0.8})
    case = load.load_run(run, warn=lambda m: None).cases[CREATE]
    assert abs(runs.waiting_share(case) - 0.8) < 0.01
    assert runs.dominated_by_waiting(case)


def test_compare_and_the_page_mark_a_waiting_case(tmp_path, capsys):
    """compare's verdict, its CSV and the page say "waiting" for a case
    blocked most of its time on either side; the others are unmarked."""
    import csv
    from kbench.cli import compare_main, report_main
    base = _run_with(tmp_path, {CREATE: 0.8, PIPE: 0.9})
    other = tmp_path / "testhost" / "6.6.0-new" / one_run(NEW_DIR).name
    shutil.copytree(one_run(NEW_DIR), other)
    table = tmp_path / "c.csv"
    assert compare_main([str(base), str(other), "--boot", "100", "--no-history", "--csv", str(table)]) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith(CREATE + " "))
    assert row.rstrip().endswith("(waiting 80%)"), row
    assert "(waiting N%): 1 one-party case(s)" in out
    assert not any("(waiting" in ln for ln in out.splitlines() if ln.startswith("lat_pipe rt"))
    rows = {r["case"]: r for r in csv.DictReader(table.open())}
    assert float(rows[CREATE]["waiting_pct"]) == 80.0
    assert all(r["waiting_pct"] == "" for k, r in rows.items() if k != CREATE)
    page = tmp_path / "index.html"
    assert report_main([str(tmp_path / "testhost"), "--out", str(page), "--no-samples", "--boot", "100"]) == 0
    assert page.read_text().count("(waiting 80%)") == 1
