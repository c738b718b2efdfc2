"""Kernel comparison: A/A gives nothing, a known slowdown is found exactly,
the meta differences are listed, and the command line behaves."""
import csv
import io
import re
import shutil

import pytest

from kb_helpers import assert_clean_exit, one_run, recorded_runs, rewrite_samples, set_meta
from kbench.model import compare, load, stats
from kbench.cli import compare_main, summarize_main
from kbench.views import compare_text

FAST = compare.Options(n_boot=300)


def side(paths, label=None):
    """A Side of one run directory, or of a list of them."""
    runs = load.load_runs(paths if isinstance(paths, list) else [paths], load.Warnings())
    return compare.Side(label or runs[0].key[1], runs)


@pytest.mark.parametrize("seed", [11, 23, 37])
def test_aa_at_one_run_a_side_stays_near_nominal(tmp_path, gen, seed):
    """Two runs of one kernel drawn from the same distribution (between-rep
    noise of 1-6%, outliers, no drift between runs), one run a side and no
    history: the drift is measured on the comparison's own cases, so the
    p-values are near nominal and BH (per family) may let one case through
    at the minimum effect; never two, never a large change."""
    a = gen.make_run(tmp_path, "h", "k", seed=seed, reps=5, samples=6, cases="medium", run_id="a")
    b = gen.make_run(tmp_path, "h", "k", seed=seed + 1000, reps=5, samples=6, cases="medium", run_id="b")
    rows = compare.compare_sides(side(a, "A"), side(b, "B"), FAST)
    assert len(rows) > 150
    flagged = [(r.case, r.cmp.ratio) for r in rows if r.cmp.significant]
    assert len(flagged) <= 1, flagged
    assert all(abs(ratio - 1) < 0.04 for _, ratio in flagged), flagged
    ps = [r.cmp.p for r in rows if r.cmp.comparable and r.cmp.p is not None]
    assert 0.01 <= sum(p < 0.05 for p in ps) / len(ps) <= 0.10
    assert all(r.cmp.verdict in (stats.SAME, stats.INCONCLUSIVE, stats.MISSING, stats.SLOWER, stats.FASTER)
               for r in rows)
    # Every compared case says how small a change it could have seen.
    assert all(r.cmp.mde > 0 for r in rows if r.cmp.comparable)


@pytest.mark.parametrize("seed", [11, 23])
def test_aa_at_two_runs_a_side_flags_nothing(tmp_path, gen, seed):
    """Two runs a side of one kernel: the runs' own spread carries the run
    level, and no case comes out faster or slower."""
    runs = [gen.make_run(tmp_path, "h", "k", seed=seed * 10 + i, reps=5, samples=6, cases="medium",
                         run_id=f"r{i}") for i in range(4)]
    rows = compare.compare_sides(side(runs[:2], "A"), side(runs[2:], "B"), FAST)
    assert len(rows) > 150
    assert [r.case for r in rows if r.cmp.significant] == []
    assert all(r.cmp.verdict in (stats.SAME, stats.INCONCLUSIVE, stats.MISSING) for r in rows)


def test_the_same_runs_on_both_sides_are_named_as_such(fixture_runs, capsys):
    """A run compared with itself (ratio 1 by construction, so its rows
    prove nothing about the statistics: the A/A tests above and the split
    halves below do that): compare warns and tells the sides apart."""
    rc = compare_main(["--no-prior", str(fixture_runs[0]), str(fixture_runs[0]), "--boot", "100"])
    out, err = capsys.readouterr()
    assert_clean_exit(rc, err, 0, f"warning: {fixture_runs[0]}: the same runs as BASE; comparing them with themselves")
    run_id = one_run(fixture_runs[0]).name
    assert (f"Comparing testhost/6.1.0-base [{run_id}] (1 run(s), 5 reps) against baseline "
            f"testhost/6.1.0-base [{run_id}]") in out


def test_syscalls_times_110_are_exactly_the_slower_cases(tmp_path, base_run):
    slow = tmp_path / "results" / "testhost" / "patched" / "run2"
    shutil.copytree(base_run, slow)
    set_meta(slow, kernel_release="patched", run_id="run2")

    def slower(o):
        if o["case"].startswith("lat_syscall "):
            o["ns_per_op"] *= 1.10
            o["elapsed_ns"] = int(o["elapsed_ns"] * 1.10)
        o["run_id"] = "run2"
        return o
    rewrite_samples(slow, slower)
    # the default families: write's 10% sits at this fixture's edge of power
    # (mde 7%), q 0.005-0.018 among the summary tables' cases (the
    # bootstrap's seeds 1-8) and 0.053 in one family of every case; the
    # families: test_kb_drift_prior
    rows = compare.compare_sides(side(base_run), side(slow), compare.Options(n_boot=300))
    flagged = {r.case: r.cmp for r in rows if r.cmp.significant}
    syscalls = {r.case for r in rows if r.case.startswith("lat_syscall ")}
    assert len(syscalls) == 6 and set(flagged) == syscalls
    for c in flagged.values():
        assert c.verdict == stats.SLOWER and c.change_text == "10.0% slower"
        assert c.ratio == pytest.approx(1.10, rel=1e-3)


def test_meta_differences_name_everything_but_the_kernel(base_run, tmp_path):
    other = tmp_path / "other" / "h" / "k2" / "r"
    shutil.copytree(base_run, other)
    set_meta(other, kernel_release="9.9", kernel_version="#9", run_id="r", governor="performance",
             mitigations={"spectre_v2": "Vulnerable", "meltdown": "Not affected"},
             kernel_cmdline="quiet mitigations=off", compiler="clang 16", started_utc="2030-01-01")
    diffs = compare.meta_differences(side(base_run).meta, side(other).meta)
    keys = [k for k, _, _ in diffs]
    assert set(keys) == {"governor", "mitigations.spectre_v2", "kernel_cmdline", "compiler"}
    d = dict((k, (a, b)) for k, a, b in diffs)
    assert d["governor"] == ("-", "performance")


def test_missing_case_is_missing_not_zero(tmp_path, base_run):
    other = tmp_path / "o" / "h" / "k2" / "r"
    shutil.copytree(base_run, other)
    p = other / "samples.jsonl"
    p.write_text("".join(ln + "\n" for ln in p.read_text().splitlines() if "lat_proc fork" not in ln))
    rows = {r.case: r.cmp for r in compare.compare_sides(side(base_run), side(other), FAST)}
    c = rows["lat_proc fork"]
    assert c.verdict == stats.MISSING and c.other != c.other  # nan
    assert compare_text.row_cells(compare.Row("lat_proc fork", "", "latency", c))["other"] == "-"


def test_compare_cli_text_and_csv(fixture_runs, tmp_path, capsys):
    out_csv = tmp_path / "c.csv"
    rc = compare_main(["--no-prior", str(fixture_runs[0]), str(fixture_runs[1]), "--boot", "300", "--csv", str(out_csv)])
    out, err = capsys.readouterr()
    assert_clean_exit(rc, err, 0)
    assert "Comparing testhost/6.6.0-new" in out and "against baseline testhost/6.1.0-base" in out
    assert "significantly slower" in out and "% slower" in out and "lower is better" in out
    assert "higher is better" in out
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    # the fixture's kernel slowed every system call by 10%, a fifth of its
    # CPU-bound cases: one run a side measures the drift on its own cases,
    # which those widen, and write's noisy reps (CI 1.00-1.19) stay short of it
    sys_rows = {r["case"]: r["verdict"] for r in rows if r["case"].startswith("lat_syscall ")}
    assert len(sys_rows) == 6 and set(sys_rows.values()) <= {stats.SLOWER, stats.INCONCLUSIVE}
    assert sum(v == stats.SLOWER for v in sys_rows.values()) >= 5
    assert not any(r["verdict"].startswith("significantly") for r in rows
                   if r["case"].startswith(("lat_proc", "lat_sig", "bw_mem", "lat_mem_rd")))
    assert rows[0]["base"] == "testhost/6.1.0-base"


def test_compare_cli_changed_only(fixture_runs, capsys):
    rc = compare_main(["--no-prior", str(fixture_runs[0]), str(fixture_runs[1]), "--boot", "300", "--changed"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "lat_syscall null" in out and "bw_pipe stream" in out
    assert "lat_proc fork" not in out and "no significant change" not in out.split("Summary")[0]


def test_compare_cli_min_effect(fixture_runs, capsys):
    rc = compare_main(["--no-prior", str(fixture_runs[0]), str(fixture_runs[1]), "--boot", "300", "--changed",
                       "--min-effect", "30%"])
    out = capsys.readouterr().out
    assert rc == 0 and "No case changed significantly." in out


def test_compare_cli_usage_errors(fixture_runs, capsys):
    rc = compare_main([])
    assert_clean_exit(rc, capsys.readouterr().err, 2, "compare: the following arguments are required: BASE, OTHER")
    rc = compare_main(["--no-prior", str(fixture_runs[0]), str(fixture_runs[1]), "--min-effect", "abc"])
    assert_clean_exit(rc, capsys.readouterr().err, 2, "compare: argument --min-effect: not a percentage: 'abc'")
    # BASE holding several kernels is ambiguous
    rc = compare_main(["--no-prior", str(fixture_runs[0].parent), str(fixture_runs[1])])
    assert_clean_exit(rc, capsys.readouterr().err, 2,
                      f"compare: BASE {fixture_runs[0].parent} holds runs of several kernels (testhost/6.1.0-base, "
                      "testhost/6.6.0-new); give the directory of one kernel")


def test_compare_cli_missing_dir(fixture_runs, capsys):
    rc = compare_main(["--no-prior", str(fixture_runs[0]), "/nonexistent/dir"])
    assert_clean_exit(rc, capsys.readouterr().err, 1, "warning: /nonexistent/dir: no such file or directory",
                      "compare: OTHER /nonexistent/dir: no usable run found")


def test_summarize_lists_failures_and_interrupted_runs(tmp_path, gen, capsys):
    run = gen.make_run(tmp_path, "h", "k", seed=3, reps=2, samples=3, cases="medium")
    set_meta(run, status="interrupted")
    rc = summarize_main([str(run), "--csv", str(tmp_path / "s.csv")])
    out, err = capsys.readouterr()
    assert rc == 0
    assert "marked 'interrupted'" in out
    assert "skipped" in out and "no IPv6 on this machine" in out
    assert "failed" in out and "No space left on device" in out
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    assert len(rows) == len(gen.suite_cases("medium")) - 3  # the three ipv6 UDP cases were skipped
    assert {r["unit"] for r in rows} == {"ns", "MB/s"}


def test_summarize_units(fixture_runs, capsys):
    """The unit sits beside each value; about three significant figures."""
    assert summarize_main([str(fixture_runs[0]), "--cases"]) == 0
    out = capsys.readouterr().out

    def value_of(start):
        line = next(ln for ln in out.splitlines() if ln.startswith(start))
        return re.search(r"\s(\d+(?:\.\d+)?) (ns|µs|ms|MB/s|GB/s)\b", line).groups()

    num, unit = value_of("lat_proc fork")
    assert unit == "µs" and len(num.replace(".", "")) == 3
    assert value_of("lat_syscall null")[1] == "ns"
    assert value_of("bw_pipe")[1] in ("MB/s", "GB/s")
    # the category tables come first, the case list after them
    assert out.index("null call") < out.index("Every case.") < out.index("lat_syscall null")
    assert value_of("null call")[1] == "ns"
    assert all(len(ln) <= 100 for ln in out.splitlines())


def test_compare_cli_only(fixture_runs, capsys):
    rc = compare_main(["--no-prior", str(fixture_runs[0]), str(fixture_runs[1]), "--boot", "300", "--only", "^lat_syscall (null|read)"])
    out = capsys.readouterr().out
    assert rc == 0 and "adjusted for the 2 cases compared" in out
    assert "lat_syscall null" in out and "lat_syscall stat" not in out
    assert compare_main(["--no-prior", str(fixture_runs[0]), str(fixture_runs[1]), "--only", "("]) == 2
    capsys.readouterr()
    # a pattern no case matches is a usage error, not a comparison of the controls alone
    for extra in ([], ["--series"]):
        assert compare_main(["--no-prior", str(fixture_runs[0]), str(fixture_runs[1]), "--only", "^nothing$"]
                            + extra) == 2
        got = capsys.readouterr()
        assert "--only '^nothing$': no case of these runs matches" in got.err and got.out == ""


@pytest.mark.parametrize("run_dir", recorded_runs(), ids=lambda p: p.name)
def test_recorded_run_split_in_halves_is_aa(run_dir):
    """Every recorded run under tests/data (synthetic or real): its even and
    odd reps, compared as two sides, show no significant change."""
    run = load.load_run(run_dir, load.Warnings())

    def half(parity, label):
        s = compare.Side(label, [run])
        for c in s.cases.values():
            c.reps = {k: v for k, v in c.reps.items() if k[1] % 2 == parity}
        s.cases = {k: c for k, c in s.cases.items() if c.reps}
        s.id = label
        return s
    even, odd = half(0, "even"), half(1, "odd")
    opts = compare.Options(n_boot=300, min_reps=2)
    rows = compare.compare_sides(even, odd, opts)
    assert rows
    assert [(r.case, r.cmp.change_text) for r in rows if r.cmp.significant] == []


def test_summarize_tiny_run(tmp_path, gen, capsys):
    cases = [c for c in gen.suite_cases("small") if c["bench"] == "lat_syscall" and c["variant"] == "null"]
    run = gen.make_run(tmp_path, "h", "k", seed=5, reps=1, samples=2, cases=cases, failures=False)
    assert summarize_main([str(run), "--cases"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("lat_syscall null"))
    assert line.split()[2] == "1" and "±" not in line  # no spread between reps with one rep
    assert line.rstrip().endswith("-")                 # and no detectable change


def test_single_run_sides_get_the_drift_note(tmp_path, gen, capsys):
    """One run per side and no other runs: compare says the intervals
    cannot show a drift between runs; with both sides pooling two runs it
    measures that drift instead (tests/scripts/test_kb_run_level.py)."""
    for kernel, seeds in (("a", (1,)), ("b", (3,))):
        for s in seeds:
            gen.make_run(tmp_path, "h", kernel, seed=s, reps=3, samples=3, cases="small", run_id=f"r{s}")
    assert compare_main(["--no-prior", str(tmp_path / "h" / "a"), str(tmp_path / "h" / "b"), "--boot", "100"]) == 0
    assert "note: one run on a side, no kernel with two runs on this host and no prior" in capsys.readouterr().out
    for kernel, s in (("a", 2), ("b", 4)):
        gen.make_run(tmp_path, "h", kernel, seed=s, reps=3, samples=3, cases="small", run_id=f"r{s}")
    assert compare_main(["--no-prior", str(tmp_path / "h" / "a"), str(tmp_path / "h" / "b"), "--boot", "100"]) == 0
    out = capsys.readouterr().out
    assert "note: one run on a side" not in out and "Run level (host only): measured on this host from 4 runs" in out
