"""The same runs give the same bytes whatever Python's string hashing:
summarize, compare, the series, report and plot, each run under two
PYTHONHASHSEED values, write identical text, CSV, JSON, page (its
"Generated" date apart) and chart files.  A set's or dict's iteration
order over strings changes with the hash seed; where it reached a
bootstrap's seed or the order of its data (a scaling case's bootstrap was
seeded from a text holding a set of disturbed reps), the mde of a case
moved from one call to the next."""
import os
import re
import subprocess
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
SEEDS = ("1", "2")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, gen):
    """Three kernels of one host (two runs, two runs, one run), each run with
    the CPU and memory controls and a scaling case whose reps are partly
    disturbed (a set of rep keys in the model)."""
    root = tmp_path_factory.mktemp("hashseed")
    seed = 500
    for kernel, n, scale in (("6.1.0", 2, None), ("6.2.0", 2, {r"^lat_syscall stat": 1.2}), ("6.3.0", 1, None)):
        for i in range(n):
            seed += 1
            d = gen.make_run(root, "h", kernel, seed=seed, reps=4, samples=3, cases="small", scale=scale,
                             run_id=f"20250102T00000{i}Z-{seed:06x}")
            gen.add_control(d, 1.0, seed=seed + 100)
            gen.add_control(d, 1.0, seed=seed + 200, variant="mem", ns=2.0)
            gen.add_scaling(d, "lat_syscall null", 60.0, seed=seed + 300, disturbed_every=5)
    return root


def _run(argv, seed, cwd):
    env = dict(os.environ, PYTHONHASHSEED=seed, KBENCH_JOBS="1")
    p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    assert p.returncode == 0, (argv, p.stderr)
    return p.stdout


def _outputs(runs, tmp_path, seed):
    """{what: bytes} of every entry point's outputs under one hash seed."""
    out = tmp_path / seed
    out.mkdir()
    k = lambda name: str(runs / "h" / name)  # noqa: E731
    got = {
        "summarize": _run([str(SCRIPTS / "summarize"), str(runs), "--cases", "--csv", "s.csv"], seed, out),
        "compare": _run([str(SCRIPTS / "compare"), k("6.1.0"), k("6.2.0"), "--csv", "c.csv", "--json", "c.json"],
                        seed, out),
        "series": _run([str(SCRIPTS / "compare"), "--series", str(runs), "--csv", "r.csv", "--json", "r.json"],
                       seed, out),
        "report": _run([str(SCRIPTS / "report"), str(runs), "--out", "page.html", "--series"], seed, out),
        "plot": _run([str(SCRIPTS / "plot"), str(runs), "--out", "plots", "--samples"], seed, out),
    }
    got = {k: v.replace(str(out), "OUT") for k, v in got.items()}
    for f in sorted(out.rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            if f.name == "page.html":
                data = re.sub(rb"Generated [^<]*UTC\.", b"Generated DATE.", data)
            got[str(f.relative_to(out))] = data
    return got


def test_outputs_do_not_depend_on_the_hash_seed(runs, tmp_path):
    a, b = (_outputs(runs, tmp_path, s) for s in SEEDS)
    assert sorted(a) == sorted(b)
    # what is compared: every entry point, its files, and charts of every kind
    assert {"summarize", "compare", "series", "report", "plot", "s.csv", "c.csv", "c.json", "r.csv", "r.json",
            "page.html"} <= set(a)
    assert any(k.startswith("plots/samples_") for k in a) and any(k.startswith("plots/bars_") for k in a)
    assert "Scaling" in a["summarize"] and "lat_syscall null" in a["summarize"]
    differ = [k for k in a if a[k] != b[k]]
    assert not differ, f"these differ between PYTHONHASHSEED={SEEDS[0]} and {SEEDS[1]}: {differ}"


def test_the_page_is_the_same_made_in_one_process_or_two(runs, tmp_path, monkeypatch):
    """report draws what needs the runs alone (curves, strips, scaling,
    control traces) in a second process while it compares them (in two,
    with one kernel: charts.page_parts): the page is the same bytes as made
    in one process (KBENCH_JOBS=1), with three kernels and with one."""
    from kbench import charts
    from kbench.model import workers
    monkeypatch.setenv("KBENCH_JOBS", "1")
    assert charts.Background(os.getpid).result() == os.getpid()
    monkeypatch.setenv("KBENCH_JOBS", "2")
    if workers.count(workers.PARALLEL_FROM) >= 2:
        assert charts.Background(os.getpid).result() != os.getpid()
    for which, src, said, more in (("three", runs, "3 kernel(s)", []), ("one", runs / "h" / "6.1.0", "1 kernel(s)", []),
                                   ("three-no-samples", runs, "3 kernel(s)", ["--no-samples"])):
        pages = []
        for jobs in ("1", "2"):
            out = tmp_path / which / jobs
            out.mkdir(parents=True)
            env = dict(os.environ, KBENCH_JOBS=jobs)
            p = subprocess.run([str(SCRIPTS / "report"), str(src), "--out", str(out / "page.html")] + more,
                               capture_output=True, text=True, env=env, timeout=300)
            assert p.returncode == 0, p.stderr
            assert said in p.stdout
            pages.append(re.sub(r"Generated [^<]*UTC\.", "", (out / "page.html").read_text()))
        assert "<h2 id='scaling'>" in pages[0] and "<svg class='trace'" in pages[0]
        assert ("class='strips'" in pages[0]) == (not more) and ("id='charts'" in pages[0]) == (which != "one")
        assert pages[0] == pages[1], which
