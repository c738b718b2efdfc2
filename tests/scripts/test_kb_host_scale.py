"""The host's drift scale (drift.host_scales): two runs of one kernel on a
host say, over all their cases at once, how far this host drifts against
the built-in prior, per domain; every case keeps the prior's shape.

Synthetic hosts drawn from the model itself, with fixed seeds: each case
drifts between runs by the prior's tau times the host's factor, and each
pair of runs adds a factor of its own (the machine moves more between some
pairs of moments than others: drift.MOMENT_SD)."""
import math
import re

import numpy as np
import pytest

from kbench.model import compare, drift, stats

PRIOR = drift.load_prior()
CASES = sorted(k for k in PRIOR.cases if not k.startswith("cell:") and not k.startswith("ctl_machine"))


def _domain(key):
    return "memory" if key.split(" ", 1)[0] in ("bw_mem", "lat_mem_rd") else "cpu"


def _se(rng):
    """A run's standard error of one case (log units): 0.3-3%."""
    return 0.01 * math.exp(rng.normal(0.0, 0.5))


def _runs(rng, factor, k, se, moment_sd=None):
    """k runs of one kernel on a host drifting `factor` times the prior:
    [{case: (theta, se)}].  Each run's moment moves the whole run by the
    host's factor times a draw of the moment's own (log-normal) size, of
    sd drift.MOMENT_SD per domain (or moment_sd)."""
    out = []
    for _ in range(k):
        m = {d: math.exp(rng.normal(0.0, sd if moment_sd is None else moment_sd))
             for d, sd in drift.MOMENT_SD.items()}
        run = {}
        for c in CASES:
            tau = math.sqrt(PRIOR.get(c)[0]) * factor * m[_domain(c)]
            run[c] = (rng.normal(0.0, tau) + rng.normal(0.0, se[c]), se[c])
        out.append(run)
    return out


def _noise(runs, scales=True):
    spreads = stats.run_spreads([runs])
    sc = drift.host_scales(spreads, PRIOR, _domain, len(runs) - 1) if scales else {}
    return stats.RunNoise(spreads, runs=len(runs), kernels=1, prior=PRIOR, scales=sc, domain_of=_domain)


def _coverage(noise, pair):
    """The share of cases whose A/A difference in `pair` (two new runs)
    falls inside its 95% interval: the two runs' standard errors (10
    degrees of freedom each) and the run level's tau2 on each side,
    Welch-Satterthwaite's df, as stats.compare combines them."""
    a, b = pair
    hit = 0
    for c in CASES:
        (ta, sa), (tb, sb) = a[c], b[c]
        tau2, dfr = noise.tau2(c, (sa * sa + sb * sb) / 2.0)
        va, vb, vr = sa * sa, sb * sb, 2.0 * tau2
        tot = va + vb + vr
        df = tot * tot / (va * va / 10 + vb * vb / 10 + (vr * vr / dfr if vr > 0 else 0.0))
        hit += abs(ta - tb) < stats.t_quantile(0.05, df) * math.sqrt(tot)
    return hit / len(CASES)


@pytest.mark.parametrize("factor", [0.5, 1.0, 2.0])
def test_two_runs_find_the_hosts_factor(factor):
    """Hosts at 0.5x, 1x and 2x the prior, without the moment's variation:
    the fit is within 15% of the truth in both domains, the factor used is
    never below the fit, and with one run difference its df is 2-6."""
    rng = np.random.default_rng(7)
    se = {c: _se(rng) for c in CASES}
    runs = _runs(rng, factor, 2, se, moment_sd=0.0)
    sc = drift.host_scales(stats.run_spreads([runs]), PRIOR, _domain, 1)
    assert set(sc) == {"cpu", "memory"}
    for s in sc.values():
        assert s.fit == pytest.approx(factor, rel=0.15)
        assert s.fit <= s.factor <= 1.4 * s.fit
        assert 1.5 < s.df < 6.0 and s.moments == 1 and s.cases >= drift.MIN_SCALE_CASES


@pytest.mark.parametrize("factor", [0.5, 1.0, 2.0])
def test_held_out_aa_pairs_are_covered_90_to_99_percent(factor):
    """Twenty hosts at each factor, each with two runs of history and a
    held-out A/A pair, every run at its own moment: the held-out pairs'
    95% intervals cover 90-99% of the cases on average, and never under
    80% on one host (a drifty pair after a calm history)."""
    rng = np.random.default_rng(11)
    covs = []
    for _ in range(20):
        se = {c: _se(rng) for c in CASES}
        noise = _noise(_runs(rng, factor, 2, se))
        covs.append(_coverage(noise, _runs(rng, factor, 2, se)))
    assert 0.90 <= sum(covs) / len(covs) <= 0.99
    assert min(covs) >= 0.80


def test_a_calm_host_gets_narrower_intervals_than_the_prior_gives():
    """On a host at 0.5x the prior the run level of a case is about a
    quarter of the prior's variance; on one at 2x it is larger than the
    prior's: the scale follows the host both ways."""
    rng = np.random.default_rng(5)
    se = {c: _se(rng) for c in CASES}
    c = "lat_syscall null"
    prior_tau2 = PRIOR.get(c)[0]
    calm = _noise(_runs(rng, 0.5, 2, se, moment_sd=0.0))
    rough = _noise(_runs(rng, 2.0, 2, se, moment_sd=0.0))
    assert calm.tau2(c)[0] < 0.5 * prior_tau2
    assert rough.tau2(c)[0] > 1.5 * prior_tau2


def test_more_runs_tighten_the_scale():
    """The factor's degrees of freedom grow with the run differences: a
    kernel's 6 runs give 5 times those of 2 runs (less the cases' scatter)."""
    rng = np.random.default_rng(3)
    se = {c: _se(rng) for c in CASES}
    two = drift.host_scales(stats.run_spreads([_runs(rng, 1.0, 2, se)]), PRIOR, _domain, 1)
    six = drift.host_scales(stats.run_spreads([_runs(rng, 1.0, 6, se)]), PRIOR, _domain, 5)
    assert six["cpu"].df > 3.5 * two["cpu"].df


def test_a_single_run_keeps_the_prior_alone():
    """No moment, no factor: a host with one run of each kernel keeps the
    prior's tau2 and df for every case, exactly as before the scale."""
    assert drift.host_scales({}, PRIOR, _domain, 0) == {}
    n = stats.RunNoise({}, prior=PRIOR)
    for c in CASES[:20]:
        assert n.tau2(c) == PRIOR.get(c)
    assert n.scale_of(CASES[0]) is None


def test_few_cases_in_a_domain_give_no_factor():
    sp = {f"lat_syscall c{i}": stats.RunSpread(1e-4, 1, 1e-5) for i in range(drift.MIN_SCALE_CASES - 1)}
    assert drift.host_scales(sp, PRIOR, _domain, 1) == {}


def test_the_fit_on_fixed_points():
    """ss = (w + s t2) dof exactly for every point: the likelihood's
    maximum is s; points no wider than their reps' noise give 0."""
    pts = [(2 * (1e-4 + 0.25 * t2), 2, 1e-4, t2) for t2 in (1e-4, 4e-4, 9e-4, 2.5e-3)]
    assert drift._fit_scale(pts) == pytest.approx(0.25, rel=1e-6)
    assert drift._fit_scale([(1e-4, 1, 2e-4, 1e-3)] * 5) == 0.0


def test_a_summary_cell_takes_the_widest_domain():
    sc = {"cpu": drift.HostScale("cpu", 0.5, 0.45, 5.0, 100, 1),
          "memory": drift.HostScale("memory", 1.5, 1.4, 5.0, 60, 1)}
    n = stats.RunNoise({}, prior=PRIOR, scales=sc, domain_of=_domain)
    assert n.scale_of("cell:Memory latency:main mem").domain == "memory"
    assert n.scale_of("lat_syscall null").domain == "cpu"
    tau2, df = n.tau2("lat_syscall null")
    assert tau2 == pytest.approx(PRIOR.get("lat_syscall null")[0] * 0.25)
    assert df == min(PRIOR.get("lat_syscall null")[1], 5.0)


def _host_runs(gen, root, mem_factors, scales=None):
    """Runs of one kernel on one host (fixture cases), the memory control's
    speed of each given by mem_factors, the memory-bound cases moving with
    it; a steady CPU control in each.  scales: per run, more {regex: factor}
    for its cases."""
    runs = []
    for i, f in enumerate(mem_factors):
        d = gen.make_run(root, kernel="6.1.0-a", seed=40 + i, reps=6, cases="medium",
                         scale={r"^(bw_mem|lat_mem_rd)": f, **(scales[i] if scales else {})})
        gen.add_control(d, 1.0, seed=60 + i)
        gen.add_control(d, f, seed=80 + i, variant="mem", ns=2.0)
        runs.append(d)
    return runs


def test_a_memory_regime_between_the_hosts_runs_leaves_memory_to_the_prior(tmp_path, gen):
    """Two runs whose memory control moved 50% (a regime switch): the CPU
    cases get the host's factor, the memory-bound ones keep the prior's
    (a comparison across such a shift never judges them, so the drift its
    memory verdicts rest on is the drift without one); with the memory
    steady both domains get one."""
    from kbench.model import load
    from kbench.views import compare_text
    opts = compare.Options(prior=PRIOR)
    shifted = load.load_runs(_host_runs(gen, tmp_path / "a", [1.0, 1.5]), load.Warnings())
    noise = compare.measure_run_noise([shifted], opts).get("testhost")
    assert set(noise.scales) == {"cpu", "cross"}
    assert noise.scale_of("bw_mem rd size_kb=262144") is None
    # the run-level line says why, and what two more runs may give
    assert noise.prior_across == ("memory",)
    text = " ".join(compare_text.scale_text(noise).split())
    assert "; memory-bound cases keep the prior (their only runs are across a machine shift, and drifted as far " \
        "as the prior; two more runs of a kernel may give them runs without one, and narrower intervals)" in text
    assert "memory-bound cases keep the prior (too few cases)" not in text
    steady = load.load_runs(_host_runs(gen, tmp_path / "b", [1.0, 1.0]), load.Warnings())
    n2 = compare.measure_run_noise([steady], opts).get("testhost")
    assert set(n2.scales) == {"cpu", "cross", "memory"} and n2.prior_across == ()
    off = compare.measure_run_noise([steady], compare.Options(prior=PRIOR, host_scale=False)).get("testhost")
    assert off.scales == {}


def test_shift_free_keeps_the_largest_set_of_runs_without_a_shift():
    """drift.shift_free: the run in most shifted pairs leaves first; one
    regime switch keeps the larger regime; no shift keeps every run; two
    runs across a shift keep one."""
    assert drift.shift_free(4, []) == [0, 1, 2, 3]
    assert drift.shift_free(4, [(0, 3), (1, 3), (2, 3)]) == [0, 1, 2]
    switch = [(i, j) for i in (0, 1) for j in (2, 3, 4)]          # runs 0-1 in one regime, 2-4 in another
    assert drift.shift_free(5, switch) == [2, 3, 4]
    assert drift.shift_free(2, [(0, 1)]) == [0]                   # of equals, the later run leaves
    assert len(drift.shift_free(3, [(0, 1), (1, 2), (0, 2)])) == 1


def test_runs_of_one_memory_regime_give_the_memory_scale(tmp_path, gen):
    """Three runs, the third in another memory regime (its memory control
    50% slower, the memory-bound cases with it): the memory-bound cases'
    scale comes from the first two runs alone (one run difference), not
    across the switch; the CPU-bound cases keep all three runs."""
    from kbench.model import load
    runs = load.load_runs(_host_runs(gen, tmp_path / "a", [1.0, 1.0, 1.5]), load.Warnings())
    noise = compare.measure_run_noise([runs], compare.Options(prior=PRIOR)).get("testhost")
    assert set(noise.scales) == {"cpu", "cross", "memory"}
    assert (noise.scales["memory"].moments, noise.scales["memory"].across) == (1, False)
    assert (noise.scales["cpu"].moments, noise.scales["cpu"].across) == (2, False)


def test_a_small_memory_shift_bounds_the_memory_scale_from_above(tmp_path, gen):
    """Two runs whose memory control moved 6%, the memory-bound cases with
    it: no two runs without a shift, so the memory-bound scale is fitted
    across it, kept because it is below the prior, at least the scale of
    two steady runs, and the scale line says it is an upper bound."""
    from kbench.model import load
    from kbench.views import compare_text
    opts = compare.Options(prior=PRIOR)
    moved = load.load_runs(_host_runs(gen, tmp_path / "a", [1.0, 1.06]), load.Warnings())
    noise = compare.measure_run_noise([moved], opts).get("testhost")
    steady = load.load_runs(_host_runs(gen, tmp_path / "b", [1.0, 1.0]), load.Warnings())
    calm = compare.measure_run_noise([steady], opts).get("testhost")
    mem = noise.scales["memory"]
    assert mem.across and mem.factor < 1 and mem.fit > calm.scales["memory"].fit
    assert not noise.scales["cpu"].across
    text = " ".join(compare_text.scale_text(noise).split())
    assert "memory-bound ones (at most: fitted across a machine shift between the runs; two more runs of a kernel " \
        "may give it runs without one, and narrower intervals)" in text
    assert "memory-bound cases keep the prior" not in text


def test_compare_summarize_and_the_page_state_the_scale_in_one_line(tmp_path, gen, capsys):
    """Two runs of the baseline kernel and one of another: summarize,
    compare and the page each say in the run-level line how far this host
    drifts against the prior; --no-host-scale leaves it out."""
    import html
    import re
    from kbench.cli import compare_main, report_main, summarize_main
    base = _host_runs(gen, tmp_path / "results", [1.0, 1.0])
    other = gen.make_run(tmp_path / "results", kernel="6.6.0-b", seed=90, reps=6, cases="medium")
    gen.add_control(other, 1.0, seed=91)
    gen.add_control(other, 1.0, seed=92, variant="mem", ns=2.0)
    line = re.compile(r"this host drifts [0-9.]+x the built-in prior on its \d+ CPU-bound cases"
                      r"(, [0-9.]+x on its \d+ cross-CPU ones)? and [0-9.]+x on its "
                      r"\d+ memory-bound ones \(2 runs of 6\.1\.0-a\)")
    def flat(text):   # the words of wrapped text, a line broken after a hyphen joined again
        return re.sub(r"-\s+", "-", " ".join(text.split()))
    assert summarize_main([str(base[0].parent)]) == 0
    assert line.search(flat(capsys.readouterr().out))
    assert compare_main([str(base[0]), str(other), "--boot", "200"]) == 0
    out = flat(capsys.readouterr().out)
    assert "Run level (host)" in out and line.search(out)
    assert compare_main([str(base[0]), str(other), "--boot", "200", "--no-host-scale"]) == 0
    assert not re.search(r"drifts [0-9.]+x the built-in prior", capsys.readouterr().out)
    page = tmp_path / "page.html"
    assert report_main([str(tmp_path / "results"), "--baseline", "testhost/6.1.0-a", "--out", str(page), "--plots",
                        str(tmp_path / "plots"), "--no-samples", "--boot", "200"]) == 0
    capsys.readouterr()
    assert line.search(flat(html.unescape(page.read_text())))


def test_cases_across_cpus_take_their_own_scale_only_where_it_is_larger(tmp_path, gen):
    """Runs of one kernel whose cases across CPUs (two parties on two CPUs,
    @cross or @unpinned) moved 30% while the rest stayed: they get their
    own factor, above the CPU-bound cases', and the scale line names it.
    Where they stayed and the others moved, or nothing moved, they take
    the CPU-bound cases' factor: never narrower than it, and the line
    does not repeat it."""
    from kbench.model import load
    from kbench.views import compare_text

    def noise(root, cross=1.0, other=1.0):
        moved = {r" @(cross|unpinned)$": cross, r"^(lat_syscall|lat_sig|lat_pipe rt @same)": other}
        loaded = load.load_runs(_host_runs(gen, root, [1.0, 1.0], [{}, moved]), load.Warnings())
        return loaded, compare.measure_run_noise([loaded], compare.Options(prior=PRIOR)).get("testhost")

    loaded, moved = noise(tmp_path / "a", cross=1.3)
    case = loaded[0].cases

    def group(c):
        return drift.scale_group(compare.domain_of(c), c)
    assert {group(c) for c in case.values()} == {"cpu", "cross", "memory", "fs"}
    assert [group(case[n]) for n in ("lat_pipe rt @cross", "lat_pipe rt @unpinned", "lat_pipe rt @same",
                                     "lat_syscall null")] == ["cross", "cross", "cpu", "cpu"]
    cross, cpu = moved.scales["cross"], moved.scales["cpu"]
    assert not cross.borrowed and cross.factor > 1.5 * cpu.factor
    assert moved.scale_of("lat_pipe rt @cross") is cross and moved.scale_of("lat_pipe rt @same") is cpu
    text = " ".join(compare_text.scale_text(moved).split())
    assert re.search(r"on its \d+ CPU-bound cases, [0-9.]+x on its \d+ cross-CPU ones", text)
    _, calm = noise(tmp_path / "b", other=1.3)
    assert calm.scales["cross"].borrowed
    assert calm.scale_of("lat_pipe rt @cross").factor == calm.scales["cpu"].factor
    assert "cross-CPU" not in compare_text.scale_text(calm)
    _, still = noise(tmp_path / "c")        # which fit is the larger is chance here: never the narrower
    assert still.scale_of("lat_pipe rt @cross").factor >= still.scales["cpu"].factor
