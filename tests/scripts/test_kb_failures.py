"""A case that fails, times out or crashes on one side is the worst
regression: its samples are not used, compare calls it FAILED and lists it
first, --changed shows it, and the page says it."""
import json

from kbench.model import compare, load, stats
from kbench.cli import report_main
from kbench.views import compare_text


def _timeout_in(run_dir, case, rep):
    """Mark one invocation of `case` as timed out in runs.jsonl (the driver
    keeps such an invocation's complete sample lines in samples.jsonl)."""
    p = run_dir / "runs.jsonl"
    out = []
    for line in p.read_text().splitlines():
        o = json.loads(line)
        if o["case"] == case and o["rep_idx"] == rep:
            o.update(status="timeout", exit_code=None, reason="still running after 60 s; sent SIGTERM")
        out.append(json.dumps(o))
    p.write_text("\n".join(out) + "\n")


def _sides(tmp_path, gen):
    a = gen.make_run(tmp_path, "h", "base", seed=1, reps=3, samples=3, cases="small", failures=False, run_id="a")
    b = gen.make_run(tmp_path, "h", "new", seed=2, reps=3, samples=3, cases="small", failures=False, run_id="b")
    _timeout_in(b, "lat_syscall null", 0)
    w = load.Warnings()
    base, new = (compare.Side(lbl, load.load_runs([d], w)) for lbl, d in (("h/base", a), ("h/new", b)))
    return base, new, w


def test_the_samples_of_a_timed_out_invocation_are_not_used(tmp_path, gen):
    base, new, w = _sides(tmp_path, gen)
    assert len(base.cases["lat_syscall null"].reps) == 3
    assert sorted(k[1] for k in new.cases["lat_syscall null"].reps) == [1, 2]   # rep 0 left out
    assert any("1 rep(s) whose invocation failed, timed out or crashed" in m for m in w.messages)


def test_compare_calls_it_failed_and_lists_it_first(tmp_path, gen):
    base, new, _ = _sides(tmp_path, gen)
    rep = compare.run_compare(base, new, compare.Options(n_boot=200))
    row = next(r for r in rep.rows if r.case == "lat_syscall null")
    assert row.cmp.verdict == stats.FAILED and row.cmp.flagged and not row.cmp.significant
    assert row.cmp.failure.startswith("on h/new: timeout")
    for changed in (False, True):
        text = compare_text.format_report(rep, changed_only=changed)
        lines = text.splitlines()
        first = next(i for i, ln in enumerate(lines) if ln.startswith("FAILED: 1 case(s)"))
        assert lines[first + 1].strip().startswith("lat_syscall null: on h/new: timeout")
        assert first < next(i for i, ln in enumerate(lines) if ln.startswith("== "))
        assert "Summary: 1 FAILED" in text
        assert "No case changed significantly." not in text
    # failing on both sides is no difference: missing, with the reason
    _timeout_in(base.runs[0].path, "lat_syscall null", 1)
    base2 = compare.Side("h/base", load.load_runs([base.runs[0].path], load.Warnings()))
    rep2 = compare.run_compare(base2, new, compare.Options(n_boot=200))
    row2 = next(r for r in rep2.rows if r.case == "lat_syscall null")
    assert row2.cmp.verdict == stats.MISSING and "failed on both sides" in row2.cmp.failure


def test_the_page_says_failed(tmp_path, gen, capsys):
    _sides(tmp_path, gen)
    page = tmp_path / "index.html"
    assert report_main([str(tmp_path), "--baseline", "h/base", "--out", str(page), "--plots",
                        str(tmp_path / "plots"), "--no-samples", "--boot", "200"]) == 0
    capsys.readouterr()
    text = page.read_text()
    assert "FAILED" in text and "timeout" in text


def test_fail_on_regression_and_json(tmp_path, gen, capsys):
    """compare --fail-on-regression exits 1 on a case FAILED (or slower) on
    OTHER, 0 otherwise; --json writes every row with the regressions."""
    from kbench.cli import compare_main
    _sides(tmp_path, gen)
    base, new = tmp_path / "h" / "base" / "a", tmp_path / "h" / "new" / "b"
    js = tmp_path / "cmp.json"
    assert compare_main([str(base), str(new), "--boot", "200", "--fail-on-regression", "--json", str(js)]) == 1
    err = capsys.readouterr().err
    assert "--fail-on-regression: 1 regression(s): lat_syscall null (h/new)" in err
    doc = json.loads(js.read_text())
    assert [d["other"] for d in doc] == ["h/new"] and doc[0]["regressions"] == ["lat_syscall null"]
    row = next(r for r in doc[0]["rows"] if r["case"] == "lat_syscall null")
    assert row["verdict"] == stats.FAILED and row["failure"].startswith("on h/new: timeout")
    assert all(isinstance(r["ratio"], (float, type(None))) for r in doc[0]["rows"])
    # the other way round the failure is the baseline's: no regression of the other kernel
    assert compare_main([str(new), str(base), "--boot", "200", "--fail-on-regression"]) == 0
    capsys.readouterr()
