"""A first comparison (one run a side, no history on the host): the
built-in drift prior (kbench.drift, RunNoise with a prior), the memory
control's domain, and the two families of the adjustment; on synthetic
runs with known drift."""
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from kbench import cli
from kbench.model import compare, drift, load, stats
from kbench.views import compare_text
from kbench.views import export

T0 = 1_000_000_000


def _run(run_id, cases, host="h", kernel="k", meta=None):
    """A load.Run from {name: (bench, variant, metric, [rep values])}: each
    rep three samples around its value."""
    run = load.Run(Path(run_id), dict(meta or {}, run_id=run_id), run_id, host, kernel, "complete")
    for name, (bench, variant, metric, reps, *ctl) in cases.items():
        c = load.Case(name, bench, variant, "", "unpinned", metric, control=bool(ctl and ctl[0]))
        for i, v in enumerate(reps):
            c.reps[(run_id, i)] = [v * 0.999, v, v * 1.001]
            c.rep_start[(run_id, i)] = T0 + i * 1_000_000
        run.cases[name] = c
    return run


def _drifted_runs(rng, taus, n_runs, tag, reps=6, rep_cv=0.01):
    """n_runs runs of one kernel: case i's every rep shifted by one draw of
    N(0, taus[i]) per run (the drift between runs), reps N(0, rep_cv)."""
    out = []
    for r in range(n_runs):
        cases = {}
        for i, tau in enumerate(taus):
            off = rng.normal(0.0, tau)
            vals = list(1000.0 * np.exp(off + rng.normal(0.0, rep_cv, reps)))
            cases[f"lat_x c{i}"] = ("lat_x", f"c{i}", "latency", vals)
        out.append(_run(f"{tag}{r}", cases))
    return out


def _prior_from(runs, inflate=drift.DEFAULT_INFLATE):
    opts = compare.Options(n_boot=300)
    est = [[compare.run_estimates(r, opts) for r in runs]]
    taus = drift.estimate(drift.run_spreads(est), inflate=inflate)
    return drift.from_json(drift.to_json(taus, {"runs": len(runs), "boots": 1}, "test"))


def test_prior_only_coverage_on_drifted_aa_is_90_to_99_percent():
    """Cases drift between runs by tau in 1..8% (reps 1%): a prior made
    from 8 A/A runs, then fresh A/A pairs judged with the prior alone: the
    intervals hold 1 for 90-99% of the cases.  Without the prior
    (--no-prior) the intervals hold the reps' noise alone (one run a side
    never scales the run level past what it starts from), and cover well
    under half of the cases that drift."""
    rng = np.random.default_rng(7)
    taus = list(np.linspace(0.01, 0.08, 40))
    prior = _prior_from(_drifted_runs(rng, taus, 8, "p"))
    held = with_none = total = 0
    for trial in range(6):
        a, b = _drifted_runs(rng, taus, 2, f"t{trial}-")
        for p, acc in ((prior, "prior"), (None, "none")):
            opts = compare.Options(n_boot=300, prior=p)
            rep = compare.run_compare(compare.Side("A", [a]), compare.Side("B", [b]), opts)
            inside = sum(1 for r in rep.rows if r.cmp.lo <= 1.0 <= r.cmp.hi)
            if acc == "prior":
                held += inside
                total += len(rep.rows)
            else:
                with_none += inside
    assert 0.90 <= held / total <= 0.99, held / total
    assert with_none / total < 0.5, with_none / total


def test_prior_tau_follows_the_drift_and_has_a_floor():
    rng = np.random.default_rng(3)
    taus = [0.0, 0.02, 0.1] * 5
    prior = _prior_from(_drifted_runs(rng, taus, 8, "p"), inflate=1.0)
    got = [math.sqrt(prior.get(f"lat_x c{i}")[0]) for i in range(len(taus))]
    assert all(g >= drift.TAU_FLOOR for g in got)
    # moderated estimates keep the order of the true drift on average
    means = [np.mean(got[k::3]) for k in range(3)]
    assert means[0] < means[1] < means[2], means
    assert 0.05 < means[2] < 0.15, means
    # a case the A/A runs did not have: its bench's largest tau
    assert prior.get("lat_x other")[0] == pytest.approx(max(got) ** 2, rel=1e-3)
    assert prior.get("lat_y z")[0] == pytest.approx(prior.default[0] ** 2)


def test_prior_file_round_trip_and_errors(tmp_path):
    obj = drift.to_json({"lat_a x": (0.02, 5.0), "lat_a y": (0.04, 7.0), "lat_b z": (0.01, 3.0)},
                        {"runs": 3}, "m")
    p = tmp_path / "prior.json"
    p.write_text(json.dumps(obj))
    pr = drift.load_prior(p)
    assert pr.get("lat_a x") == (pytest.approx(0.0004), 5.0)
    assert pr.benches["lat_a"] == (0.04, 5.0)
    for bad in ("{", json.dumps({"schema": "x"}), json.dumps(dict(obj, default={"tau": -1, "df": 2}))):
        p.write_text(bad)
        with pytest.raises(drift.PriorError):
            drift.load_prior(p)
    with pytest.raises(drift.PriorError):
        drift.load_prior(tmp_path / "missing.json")


def test_the_built_in_prior_loads_and_covers_the_headline_cases():
    pr = drift.load_prior()
    assert pr.source.get("runs", 0) >= 3
    for name in ("lat_syscall null", "lat_proc fork", "bw_mem rd size_kb=262144", "ctl_machine alu"):
        assert pr.has(name), name
    # process creation drifts far more between runs than a null system call
    assert pr.get("lat_proc fork")[0] > pr.get("lat_syscall null")[0]


def _mem_runs(mem_factor, syscall_factor):
    """Two runs: CPU control flat; the memory control, a bw_mem case and a
    lat_syscall case scaled in run b."""
    def cases(mf, sf):
        return {
            "ctl_machine alu": ("ctl_machine", "alu", "latency", [1.2, 1.21, 1.19, 1.2, 1.2], True),
            "ctl_machine mem": ("ctl_machine", "mem", "bandwidth", [40000 / mf * x for x in (1, 1.01, .99, 1, 1)],
                                True),
            "bw_mem rd size_kb=262144": ("bw_mem", "rd", "bandwidth",
                                         [28000 / mf * x for x in (1, 1.01, .99, 1.005, 1)]),
            "lat_syscall null": ("lat_syscall", "null", "latency", [1000 * sf * x for x in (1, 1.01, .99, 1, 1)]),
        }
    return _run("a", cases(1.0, 1.0)), _run("b", cases(mem_factor, syscall_factor))


def test_a_memory_regime_shift_is_the_machine_and_judges_out_memory_cases_only():
    """The memory control 3x slower (with the built-in prior: far beyond
    any run's drift of it) and the system call 25% slower: the memory-bound
    case is not judged, the system call is."""
    a, b = _mem_runs(3.0, 1.25)
    rep = compare.run_compare(compare.Side("A", [a]), compare.Side("B", [b]),
                              compare.Options(n_boot=300, prior=drift.load_prior()))
    assert rep.shift.memory_shifted and not rep.shift.shifted
    by = {r.case: r.cmp for r in rep.rows}
    assert by["bw_mem rd size_kb=262144"].verdict == stats.MACHINE
    assert by["lat_syscall null"].verdict == stats.SLOWER
    text = compare_text.format_report(rep, opts=compare.Options(n_boot=300))
    assert "WARNING: MEMORY SHIFT" in text and "MACHINE SHIFT" not in text
    buf = io.StringIO()
    export.write_json([rep], buf)
    assert '"memory_shift": true' in buf.getvalue()
    # the run level as the words give it: each group's drift against the prior's, what measured
    # it, and a two-party group's widening (set here: these runs have no two-party cases)
    level = json.loads(buf.getvalue())[0]["run_level"]
    assert set(level["scale"]) == set(rep.scale) and level["widened"] == {}
    for g, (a, b, src) in rep.scale.items():
        assert level["scale"][g] == {"drift": pytest.approx(math.sqrt(a)), "reps": pytest.approx(math.sqrt(b)),
                                     "source": src}
    # one run a side: how far the memory-bound cases followed the memory controls' move, measured
    assert set(level["followed"]) == set(rep.follow) == {"memory"}
    assert level["followed"]["memory"] == pytest.approx(math.sqrt(rep.follow["memory"]))
    rep.bulk, rep.follow = {"cross": 4.0}, {"memory": 0.04}
    buf = io.StringIO()
    export.write_json([rep], buf)
    assert json.loads(buf.getvalue())[0]["run_level"]["widened"] == {"cross": 2.0}
    assert json.loads(buf.getvalue())[0]["run_level"]["followed"] == {"memory": pytest.approx(0.2)}
    words = compare_text.format_report(rep, opts=compare.Options(n_boot=300, prior=drift.load_prior()))
    assert "cross-CPU cases moved together 2x" in words
    assert "followed the memory controls' move, against how far their slopes' prior allows" in words
    assert "memory-bound cases 0.2x." in words


def test_without_a_memory_shift_the_memory_case_is_judged():
    a, b = _mem_runs(1.0, 1.0)
    b.cases["bw_mem rd size_kb=262144"].reps = {k: [x / 1.35 for x in v]
                                                  for k, v in b.cases["bw_mem rd size_kb=262144"].reps.items()}
    # (the case moves alone, with one run a side: judged as any other with
    # alone=False; the rule itself: test_kb_alone.py)
    rep = compare.run_compare(compare.Side("A", [a]), compare.Side("B", [b]), compare.Options(n_boot=300,
                                                                                              alone=False))
    assert not rep.shift.memory_shifted
    assert {r.case: r.cmp for r in rep.rows}["bw_mem rd size_kb=262144"].verdict == stats.SLOWER


def _cmp(p, ratio=1.25):
    c = stats.Comparison("latency", 1.0, ratio, ratio, ratio * 0.9, ratio * 1.1, p, p, 5, 5, 15, 15, stats.SAME,
                         stats.speed_change(ratio, "latency"), mde=0.05)
    return c


def test_each_family_is_adjusted_for_its_own_number_of_cases():
    """One primary case at p = 0.004 among 10 primary and 290 secondary
    cases with p = 0.5: adjusted over all 300 it is q = min(0.004 * 300,
    0.5) = 0.5 (not significant); within its family of 10, q = 0.04
    (significant)."""
    def make():
        return [_cmp(0.004)] + [_cmp(0.5, 1.0) for _ in range(299)]
    fams = [stats.PRIMARY] * 10 + [stats.SECONDARY] * 290
    one = stats.decide(make())
    two = stats.decide(make(), families=fams)
    assert one[0].q == pytest.approx(0.5) and one[0].verdict != stats.SLOWER
    assert two[0].q == pytest.approx(0.04) and two[0].verdict == stats.SLOWER
    assert [c.family for c in two[:11]] == fams[:11]
    # a secondary case at the same p stays unflagged: its family has 290 cases
    three = make()
    three[0], three[20] = three[20], three[0]
    stats.decide(three, families=fams)
    assert three[20].q == pytest.approx(0.5)
    assert three[20].verdict != stats.SLOWER


def test_compare_counts_the_summary_table_cases_as_the_primary_family(fixture_runs):
    base_dir, new_dir = fixture_runs
    w = load.Warnings()
    a = compare.Side("A", load.load_runs([base_dir], w))
    b = compare.Side("B", load.load_runs([new_dir], w))
    primary = compare.primary_names(a, b)
    # two families: every case behind the tables, and the others
    rep = compare.run_compare(a, b, compare.Options(n_boot=200, families="two"))
    fam = {r.case: r.cmp.family for r in rep.rows if r.cmp.comparable}
    assert fam["lat_syscall null"] == stats.PRIMARY
    assert stats.SECONDARY in fam.values()
    prim = sorted(k for k, v in fam.items() if v == stats.PRIMARY)
    assert prim == sorted(set(primary) & set(fam))
    text = compare_text.format_report(rep, opts=compare.Options(n_boot=200))
    assert f"the {len(prim)} cases behind the summary tables (primary)" in text
    # the default: one family per summary table
    rep = compare.run_compare(a, b, compare.Options(n_boot=200))
    fam = {r.case: r.cmp.family for r in rep.rows if r.cmp.comparable}
    assert fam["lat_syscall null"] == f"{stats.PRIMARY}: {primary['lat_syscall null']}"
    assert fam["lat_syscall null"] != fam["lat_pipe rt @same"] and fam["lat_syscall read"] == fam["lat_syscall null"]
    tables = {v for v in fam.values() if v.startswith(stats.PRIMARY)}
    assert len(tables) >= 4
    text = " ".join(compare_text.format_report(rep, opts=compare.Options(n_boot=200)).split())
    assert f"the cases behind each summary table (primary: {len(tables)} tables" in text
    one = compare.run_compare(a, b, compare.Options(n_boot=200, families="one"))
    assert all(r.cmp.family == "" for r in one.rows)
    assert "adjusted for the" in compare_text.format_report(one, opts=compare.Options(n_boot=200, families="one"))


def test_compare_cli_says_which_run_level_it_used(tmp_path, capsys, gen):
    root = tmp_path / "r"
    gen.make_run(root, host="hx", kernel="6.1.0-a", seed=11, reps=5)
    gen.make_run(root, host="hx", kernel="6.1.0-b", seed=12, reps=5)
    base, other = str(root / "hx" / "6.1.0-a"), str(root / "hx" / "6.1.0-b")
    assert cli.compare_main([base, other, "--boot", "200"]) == 0
    out = capsys.readouterr().out
    n = len(drift.load_prior(None).cases)
    said = f"Run level (prior): no kernel of this host has two runs: the built-in drift prior ({n} cases)."
    # compare adds how far the runs compared drift against it, per domain, and what measured that
    assert said[:-1] + "; scaled to the moment of these runs: CPU-bound cases " in out
    assert "(the bulk of this comparison's cases)" in out
    assert cli.compare_main([base, other, "--boot", "200", "--no-prior"]) == 0
    out = capsys.readouterr().out
    assert "Run level (prior)" not in out and "no prior (--no-prior)" in out
    assert cli.summarize_main([base]) == 0
    # the summary says it in one line of its own: what the tool uses, not where the prior came from
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "Run level" in ln]
    assert lines == [said]
    # a second run of the base kernel: the host's runs, weighed against the prior
    gen.make_run(root, host="hx", kernel="6.1.0-a", seed=13, reps=5)
    assert cli.compare_main([str(root / "hx" / "6.1.0-a"), other, "--boot", "200"]) == 0
    assert "Run level (host): measured on this host from 2 runs" in capsys.readouterr().out


def test_bad_prior_options_exit_cleanly(tmp_path, capsys, gen):
    root = tmp_path / "r"
    gen.make_run(root, host="hx", kernel="6.1.0-a", seed=11, reps=5)
    d = str(root / "hx" / "6.1.0-a")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert cli.compare_main([d, d, "--prior", str(bad)]) == 2
    assert "--prior" in capsys.readouterr().err
    assert cli.compare_main([d, d, "--prior", str(bad), "--no-prior"]) == 2
    assert cli.drift_prior_main([d, "--out", str(tmp_path / "p.json")]) == 1
    assert "two runs or more" in capsys.readouterr().err
    assert cli.drift_prior_main([d, "--inflate", "0.5"]) == 2


def test_drift_prior_cli_writes_a_prior_compare_reads(tmp_path, capsys, gen):
    root = tmp_path / "r"
    for seed in (21, 22, 23):
        gen.make_run(root, host="hx", kernel="6.1.0-a", seed=seed, reps=5)
    out = tmp_path / "p.json"
    assert cli.drift_prior_main([str(root), "--out", str(out), "--machine", "test VM"]) == 0
    pr = drift.load_prior(out)
    assert pr.source["runs"] == 3 and pr.source["machine"] == "test VM"
    assert pr.has("lat_syscall null")
    assert "from 3 runs of 1 kernel(s)" in capsys.readouterr().err


def test_cases_of_one_binary_pool_their_drift():
    """Two binaries, each case of lat_a drifting 2% between runs and each of
    lat_b 8%: from only 4 runs (3 degrees of freedom a case, each case's own
    spread a rough guess), the moderated drift of every case sits near its
    binary's, with many more degrees of freedom than 3."""
    rng = np.random.default_rng(11)
    runs = []
    for r in range(4):
        cases = {}
        for b, tau in (("lat_a", 0.02), ("lat_b", 0.08)):
            for i in range(12):
                vals = list(1000.0 * np.exp(rng.normal(0.0, tau) + rng.normal(0.0, 0.005, 6)))
                cases[f"{b} c{i}"] = (b, f"c{i}", "latency", vals)
        runs.append(_run(f"r{r}", cases))
    est = [[compare.run_estimates(r, compare.Options(n_boot=300)) for r in runs]]
    got = drift.moderate(drift.run_spreads(est))
    a = [math.sqrt(got[f"lat_a c{i}"][0]) for i in range(12)]
    b = [math.sqrt(got[f"lat_b c{i}"][0]) for i in range(12)]
    assert all(0.008 < x < 0.035 for x in a), a
    assert all(0.045 < x < 0.13 for x in b), b
    assert min(df for _, df in got.values()) > 10


def test_compare_cli_families_and_the_family_column(tmp_path, capsys, fixture_runs):
    import csv
    out_csv = tmp_path / "c.csv"
    base, new = (str(p) for p in fixture_runs)
    assert cli.compare_main([base, new, "--boot", "200", "--no-prior", "--csv", str(out_csv)]) == 0
    assert "adjusted within families" in capsys.readouterr().out
    fams = {r["case"]: r["family"] for r in csv.DictReader(out_csv.open())}
    assert fams["lat_syscall null"] == "primary: Processor and processes" and "secondary" in fams.values()
    assert cli.compare_main([base, new, "--boot", "200", "--no-prior", "--families", "two", "--csv",
                             str(out_csv)]) == 0
    assert "adjusted within two families" in capsys.readouterr().out
    assert {r["family"] for r in csv.DictReader(out_csv.open())} >= {"primary", "secondary"}
    assert cli.compare_main([base, new, "--boot", "200", "--no-prior", "--families", "one", "--csv", str(out_csv)]) == 0
    out = capsys.readouterr().out
    assert "adjusted for the" in out and "families" not in out.split("Faster/slower")[0].split("Welch t)")[-1]
    assert {r["family"] for r in csv.DictReader(out_csv.open())} == {""}
    assert cli.compare_main([base, new, "--families", "some"]) == 2


def test_a_bimodal_case_takes_the_drift_of_its_runs_medians():
    """Reps of a case in two modes (fast or slow per process): the low
    quantile stays in the fast mode in every run that draws enough fast
    reps, so its own spread between runs is small, but the mix moves the
    runs' medians: with bulk (the medians' spread) the case's tau is at
    least that; without, it is not."""
    spreads = {"bw_x y": drift.RunSpread(ss=5 * 0.01 ** 2, dof=5, within=0.005 ** 2)}
    bulk = {"bw_x y": drift.RunSpread(ss=5 * 0.17 ** 2, dof=5, within=0.2 ** 2)}
    assert drift.estimate(spreads)["bw_x y"][0] < 0.02
    assert drift.estimate(spreads, bulk=bulk)["bw_x y"][0] == pytest.approx(0.17, rel=1e-6)


def test_the_page_says_which_run_level_and_plan_it_used(tmp_path, gen):
    root = tmp_path / "r"
    gen.make_run(root, host="hx", kernel="6.1.0-a", seed=31, reps=5)
    gen.make_run(root, host="hx", kernel="6.1.0-b", seed=32, reps=5)
    page = tmp_path / "index.html"
    assert cli.report_main([str(root), "--out", str(page), "--no-samples", "--boot", "100"]) == 0
    text = " ".join(page.read_text().split())
    assert "Run level on hx (prior): no kernel of this host has two runs" in text
    assert "If the host drifts as the built-in prior assumes" in text
    assert "within families: the cases behind each summary table" in text


def test_drift_prior_at_least_an_earlier_prior_only_widens(tmp_path, capsys, gen):
    root = tmp_path / "r"
    for seed in (31, 32, 33):
        gen.make_run(root, host="hx", kernel="6.1.0-a", seed=seed, reps=5)
    plain = tmp_path / "plain.json"
    assert cli.drift_prior_main([str(root), "--out", str(plain)]) == 0
    new = drift.load_prior(plain)
    wide, narrow = "lat_syscall null", "lat_proc fork"
    assert new.has(wide) and new.has(narrow)
    t_wide, t_narrow = math.sqrt(new.get(wide)[0]), math.sqrt(new.get(narrow)[0])
    # an earlier prior from other boots: one case drifting far more than these
    # runs show, one far less, one case these runs lack, a bench fallback
    earlier = {"schema": drift.SCHEMA,
               "source": {"runs": 4, "boots": 2, "run_ids": ["e1", "e2", "e3", "e4"], "machine": "old VM"},
               "method": "test", "default": {"tau": 0.001, "df": 9.0},
               "benches": {"lat_pipe": {"tau": 0.5, "df": 7.0}},
               "cases": {wide: {"tau": t_wide * 3, "df": 5.0}, narrow: {"tau": t_narrow / 3, "df": 6.0},
                         "lat_gone x": {"tau": 0.2, "df": 8.0}}}
    ef = tmp_path / "earlier.json"
    ef.write_text(json.dumps(earlier))
    out = tmp_path / "both.json"
    capsys.readouterr()
    assert cli.drift_prior_main([str(root), "--out", str(out), "--at-least", str(ef)]) == 0
    assert "in all 7 runs" in capsys.readouterr().err
    both = drift.load_prior(out)
    assert both.get(wide) == pytest.approx(((t_wide * 3) ** 2, 5.0), rel=1e-3)      # the earlier's, its df
    assert both.get(narrow) == pytest.approx(new.get(narrow), rel=1e-3)             # the new runs'
    assert both.has("lat_gone x") and both.get("lat_gone x") == pytest.approx((0.04, 8.0))
    pipes = [k for k in new.cases if k.startswith("lat_pipe ")]
    assert pipes and all(both.get(k)[0] == pytest.approx(0.25, rel=1e-3) for k in pipes)  # the bench fallback
    assert all(math.sqrt(both.get(k)[0]) >= math.sqrt(new.get(k)[0]) - 1e-5 for k in new.cases)
    s = both.source
    assert s["runs"] == 7 and s["boots"] == 2 + new.source["boots"]
    assert set(s["run_ids"]) == set(new.source["run_ids"]) | {"e1", "e2", "e3", "e4"}
    assert s["at_least"]["machine"] == "old VM"
    assert "at least that of the earlier prior earlier.json" in json.loads(out.read_text())["method"]
    # the earlier prior made from these very runs: refused, nothing written
    again = tmp_path / "again.json"
    assert cli.drift_prior_main([str(root), "--out", str(again), "--at-least", str(out)]) == 2
    assert "give only runs it was not made from" in capsys.readouterr().err and not again.exists()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert cli.drift_prior_main([str(root), "--out", str(again), "--at-least", str(bad)]) == 2
    assert "--at-least" in capsys.readouterr().err and not again.exists()
