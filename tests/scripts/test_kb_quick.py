"""Quick runs (make quick, kbench-run --quick) never mix with full runs.

A quick run found among full runs of the same kernel is left out with one
warning, so summarize and compare print exactly what they print without
it; a quick run given alone is summarised with a note; two quick runs (2
reps, fewer than compare's 3) give one 'Nothing could be tested' line and
no change figures.
"""
import re
import shutil

import pytest

from kb_helpers import NEW_DIR, one_run
from kbench.model import compare, load, runs, stats
from kbench.cli import _analyse, compare_main, summarize_main
from kbench.views import compare_text

CHANGE = re.compile(r"\d% (faster|slower)")


def quick_run(gen, root, kernel, seed, run_id, old_style=False):
    """A synthetic quick run: 2 reps, marked the way kbench-run marks it
    now ("quick": true), or, old_style, as runs recorded before that key
    (only options.quick)."""
    opts = {"reps": 2, "samples": 3, "quick": True}
    extra = {"options": opts} if old_style else {"options": opts, "quick": True}
    return gen.make_run(root, "testhost", kernel, seed=seed, reps=2, samples=3, cases="medium",
                        run_id=run_id, meta_extra=extra)


def run_cli(main, argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err.splitlines()


def test_is_quick_from_the_key_or_the_recorded_options():
    assert runs.is_quick({"quick": True})
    assert runs.is_quick({"options": {"quick": True}})          # recorded before the "quick" key
    assert not runs.is_quick({"quick": False, "options": {"quick": True}})  # the key wins
    assert not runs.is_quick({"options": {"reps": 5}})
    assert not runs.is_quick({})                                   # made by hand: a full run
    assert not runs.is_quick({"quick": "yes", "options": "x"})     # not a boolean: ignored


# Where a quick run sits: under results/quick/ (make quick since it has
# its own root), or in the kernel's directory itself (make quick before
# that, marked only by options.quick).
LAYOUTS = {"quick_root": (("quick",), False), "same_kernel_dir": ((), True)}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_summarize_of_full_runs_is_unchanged_by_a_quick_run_beside_them(layout, base_run, gen, capsys):
    results = base_run.parents[2]
    rc, before, err_before = run_cli(summarize_main, [str(results)], capsys)
    assert rc == 0
    sub, old_style = LAYOUTS[layout]
    q = quick_run(gen, results.joinpath(*sub), "6.1.0-base", 77, "20250102T000000Z-quick1", old_style)
    rc, after, err_after = run_cli(summarize_main, [str(results)], capsys)
    assert rc == 0
    assert after == before                      # byte for byte
    extra = [ln for ln in err_after if ln not in err_before]
    assert len(err_after) == len(err_before) + 1 and len(extra) == 1
    assert "quick run" in extra[0] and q.name in extra[0] and str(q) in extra[0]
    assert "left out" in extra[0]


def test_compare_of_full_runs_is_unchanged_by_a_quick_run_beside_them(base_run, gen, capsys):
    kernel_dir = base_run.parent
    other = one_run(NEW_DIR)
    argv = [str(kernel_dir), str(other), "--boot", "200"]
    rc, before, err_before = run_cli(compare_main, argv, capsys)
    assert rc == 0
    q = quick_run(gen, kernel_dir.parents[1], "6.1.0-base", 78, "20250102T000000Z-quick2", old_style=True)
    assert q.parent == kernel_dir
    rc, after, err_after = run_cli(compare_main, argv, capsys)
    assert rc == 0
    assert after == before
    extra = [ln for ln in err_after if ln not in err_before]
    assert len(err_after) == len(err_before) + 1 and len(extra) == 1 and q.name in extra[0]


def test_a_quick_run_alone_is_summarised_with_a_note(tmp_path, gen, capsys):
    q = quick_run(gen, tmp_path / "results" / "quick", "6.1.0-base", 79, "20250102T000000Z-quick3")
    rc, out, err = run_cli(summarize_main, [str(q)], capsys)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].startswith("note: testhost/6.1.0-base is a quick run")
    assert "not a measurement" in lines[0]
    assert sum("quick run" in ln for ln in lines) == 1
    assert lines[1].startswith("testhost/6.1.0-base: 1 run (20250102T000000Z-quick3)")
    assert "null call" in out
    assert not [ln for ln in err if "quick" in ln]


def test_two_quick_runs_compared_say_nothing_could_be_tested(tmp_path, gen, capsys):
    root = tmp_path / "results" / "quick"
    a = quick_run(gen, root, "6.1.0-base", 80, "20250102T000000Z-quicka")
    b = quick_run(gen, root, "6.6.0-new", 81, "20250102T000000Z-quickb")
    rc, out, _ = run_cli(compare_main, [str(a), str(b), "--boot", "200"], capsys)
    assert rc == 0
    lines = out.splitlines()
    nothing = [ln for ln in lines if ln.startswith("Nothing could be tested")]
    assert len(nothing) == 1 and "fewer than 3 reps" in nothing[0]
    assert sum(ln.startswith("note: ") and "quick run" in ln for ln in lines) == 2
    assert not CHANGE.search(out)
    assert "adjusted for the" not in out
    assert "too few reps" in out
    row = next(ln for ln in lines if ln.startswith("lat_syscall null "))
    cells = row.split()
    # case(2 words) base other unit change ratio CI p mde reps verdict...
    assert cells[5:10] == ["-", "-", "-", "-", "-"] and cells[10] == "2/2"
    # Allowing 2 reps makes them comparable again (with wide intervals).
    rc, out, _ = run_cli(compare_main, [str(a), str(b), "--boot", "200", "--min-reps", "2"], capsys)
    assert rc == 0 and "Nothing could be tested" not in out


def test_untested_rows_show_no_change_beside_tested_ones(base_run, gen, tmp_path):
    full = compare.Side("full", load.load_runs([base_run], load.Warnings()))
    q = quick_run(gen, tmp_path / "q", "6.1.0-base", 82, "20250102T000000Z-quickc")
    quick = compare.Side("quick", load.load_runs([q], load.Warnings()))
    assert quick.quick and not full.quick
    rows = compare.compare_sides(full, quick, compare.Options(n_boot=200))
    assert rows and all(r.cmp.verdict in (stats.FEW, stats.MISSING) for r in rows)
    for r in rows:
        cells = compare_text.row_cells(r)
        assert cells["change"] == "-" and cells["ratio"] == "-"
    # A tested row keeps its change.
    tested = compare.compare_sides(full, full, compare.Options(n_boot=200))
    assert any(compare_text.row_cells(r)["change"] != "-" for r in tested if r.cmp.comparable)


def test_the_quick_key_is_not_a_difference_between_sides(base_run, tmp_path):
    from kb_helpers import set_meta
    other = tmp_path / "other" / "testhost" / "6.6" / "r"
    shutil.copytree(base_run, other)
    set_meta(other, kernel_release="6.6", run_id="r", quick=False)   # a new full run, the old one has no key
    a = compare.Side("a", load.load_runs([base_run], load.Warnings()))
    b = compare.Side("b", load.load_runs([other], load.Warnings()))
    assert compare.meta_differences(a.meta, b.meta) == []


def test_report_leaves_out_kernels_with_only_quick_runs_when_there_are_full_ones(base_run, gen, capsys):
    results = base_run.parents[2]
    q = quick_run(gen, results / "quick", "6.9.0-quick", 83, "20250102T000000Z-quickd")
    groups, baseline, _, _, warnings, _, _, _ = _analyse([results], None, compare.Options(n_boot=100))
    assert [g.label for g in groups] == ["testhost/6.1.0-base"]
    assert len([w for w in warnings if "quick" in w]) == 1 and q.name in warnings[0]
    # Only quick runs: reported, with the note.
    groups, _, _, _, warnings, _, _, _ = _analyse([results / "quick"], None, compare.Options(n_boot=100))
    assert [g.label for g in groups] == ["testhost/6.9.0-quick"] and groups[0].quick
    assert any("is a quick run" in w for w in warnings)
    capsys.readouterr()
