"""compare's note on few reps: a side that is one run with a median of
fewer than 8 reps a case is named, with its reps, above the comparison
(quick runs of 5 reps on a VM whose speed moved flagged one case with a
fast and a slow mode in 2 of 3 A/A pairs); 10 reps, or a side of two runs,
is not."""
from kbench.cli import compare_main


def side(gen, root, kernel, seeds, reps):
    for i, seed in enumerate(seeds):
        gen.make_run(root, "testhost", kernel, seed=seed, reps=reps, samples=3, cases="medium",
                     run_id=f"2025010{i + 1}T000000Z-{seed:06x}")
    return root / "testhost" / kernel


def note_lines(gen, tmp_path, capsys, base, other):
    root = tmp_path / "results"
    a = side(gen, root, "6.1.0-a", *base)
    b = side(gen, root, "6.1.0-b", *other)
    rc = compare_main([str(a), str(b), "--boot", "200", "--no-history"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "Traceback" not in err
    return [ln for ln in out.splitlines() if ln.startswith("note: few reps")]


def test_one_run_of_five_reps_a_side_is_named_on_both_sides(gen, tmp_path, capsys):
    (line,) = note_lines(gen, tmp_path, capsys, ((11,), 5), ((12,), 5))
    assert "(testhost/6.1.0-a 5" in line
    assert "testhost/6.1.0-b 5" in line
    assert "--reps 10 a side" in line


def test_ten_reps_a_side_gives_no_note(gen, tmp_path, capsys):
    assert note_lines(gen, tmp_path, capsys, ((11,), 10), ((12,), 10)) == []


def test_a_side_of_two_runs_is_not_named(gen, tmp_path, capsys):
    (line,) = note_lines(gen, tmp_path, capsys, ((11, 13), 5), ((12,), 5))
    assert "6.1.0-a" not in line and "(testhost/6.1.0-b 5 reps a case" in line
