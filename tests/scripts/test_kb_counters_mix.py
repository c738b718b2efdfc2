"""--counters changes what is measured (inherited perf counters make fork and
every context switch dearer): runs with and without it are never set side
by side without a loud warning (issue 14, item 4)."""
from kbench.model import groups as groups_mod, load
from kbench.cli import compare_main, report_main, summarize_main

from kb_helpers import grouping_warnings, rewrite_samples, set_meta


def _run(gen, root, kernel, run_id, seed, counters="absent"):
    d = gen.make_run(root, "h", kernel, seed=seed, reps=3, samples=2, cases="small", run_id=run_id,
                     failures=False)
    if counters != "absent":
        set_meta(d, options={"reps": 3, "samples": 2, "counters": counters})
    return d


def _warnings(root):
    return grouping_warnings(root, "COUNTERS DIFFER")


def test_kernels_measured_with_and_without_counters(tmp_path, gen, capsys):
    _run(gen, tmp_path, "6.1.0", "r1", 1, counters=None)
    _run(gen, tmp_path, "6.2.0", "r2", 2, counters="")          # --counters: all
    (w,) = _warnings(tmp_path)
    assert w.startswith("WARNING: COUNTERS DIFFER: runs with --counters: h/6.2.0; without: h/6.1.0.")
    assert "--counters changes what is measured" in w and "fork and every context switch" in w
    # every script that sets kernels side by side says it
    assert summarize_main([str(tmp_path)]) == 0
    assert "WARNING: COUNTERS DIFFER" in capsys.readouterr().err
    assert report_main([str(tmp_path), "--out", str(tmp_path / "p.html"), "--no-samples", "--boot", "100"]) == 0
    assert "WARNING: COUNTERS DIFFER" in capsys.readouterr().err
    # compare loads BASE and OTHER apart: the warning names both sides
    assert compare_main([str(tmp_path / "h" / "6.1.0"), str(tmp_path / "h" / "6.2.0"), "--boot", "100"]) == 0
    err = capsys.readouterr().err
    assert err.count("WARNING: COUNTERS DIFFER: runs with --counters: h/6.2.0; without: h/6.1.0.") == 1, err


def test_runs_of_one_kernel_mixed(tmp_path, gen):
    _run(gen, tmp_path, "6.1.0", "r1", 1, counters="cycles,instructions")
    _run(gen, tmp_path, "6.1.0", "r2", 2, counters=None)
    (w,) = _warnings(tmp_path)
    assert "with --counters: h/6.1.0 (1 of its 2 runs); without: h/6.1.0 (the other 1)" in w


def test_made_the_same_way_no_warning(tmp_path, gen):
    _run(gen, tmp_path, "6.1.0", "r1", 1, counters="")
    _run(gen, tmp_path, "6.2.0", "r2", 2, counters="cycles")    # other lists: the conditions warning's job
    assert _warnings(tmp_path) == []
    _run(gen, tmp_path / "b", "6.1.0", "r1", 1, counters=None)
    _run(gen, tmp_path / "b", "6.2.0", "r2", 2)                 # not recorded, no counter in the samples
    assert _warnings(tmp_path / "b") == []


def test_meta_without_the_option_read_from_the_samples(tmp_path, gen):
    a = _run(gen, tmp_path, "6.1.0", "r1", 1)
    _run(gen, tmp_path, "6.2.0", "r2", 2)
    rewrite_samples(a, lambda s: dict(s, counter_scope="user", task_clock_ns=s["elapsed_ns"]))
    (w,) = _warnings(tmp_path)
    assert "with --counters: h/6.1.0; without: h/6.2.0" in w
    runs = load.load_runs([tmp_path], load.Warnings())
    assert sorted((r.kernel, r.counters) for r in runs) == [("6.1.0", "from the samples"), ("6.2.0", None)]


def test_counters_warning_names_each_side():
    class R:
        def __init__(self, c):
            self.counters = c
    assert groups_mod.counters_warning([("a", [R(None)]), ("b", [R(None)])]) is None
    assert groups_mod.counters_warning([("a", [R("all")]), ("b", [R("cycles")])]) is None
    w = groups_mod.counters_warning([("a", [R(None), R(None)]), ("b", [R("all")])])
    assert "runs with --counters: b; without: a." in w
