"""Labelled kernels, from `kbench-run --label` to the scripts: runs of one
release with different labels are different kernels, each with a directory
of its own (results/<host>/<release>[<label>]/), and compare, summarize,
report and plot take each by the name the tables print (HOST/RELEASE[LABEL]),
in that layout and in results recorded before it (every label's runs in
results/<host>/<release>/).  The driver runs the fake benchmarks; nothing
here looks at a number."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from driver_runner import run_dir_of, run_driver

REPS = "3"


def _script(root, name, *args):
    return subprocess.run([sys.executable, str(root / "scripts" / name), *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ, KBENCH_JOBS="1"))


@pytest.fixture(scope="module")
def results(driver, tmp_path_factory):
    """A results root with three kernels of this machine's release: plain,
    [A] and [B]; (root, host, release)."""
    out = tmp_path_factory.mktemp("labels") / "results"
    for label in (None, "A", "B"):
        args = ["--reps", REPS, "--only", "^fake_good", "--no-controls", "--no-table", "--out", out]
        proc = run_driver(driver, *args, *(["--label", label] if label else []))
        assert proc.returncode == 0, proc.stderr
        run = run_dir_of(proc)
        meta = json.loads((run / "meta.json").read_text())
        kernel_dir = meta["kernel_release"] + (f"[{label}]" if label else "")
        assert run.parent == out / meta["host"] / kernel_dir, run
    return out, meta["host"], meta["kernel_release"]


def _compared(proc):
    """(baseline, other) of compare's 'Comparing OTHER (...) against baseline BASE (...)' line."""
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("Comparing "))
    other, _, rest = line[len("Comparing "):].partition(" (")
    base = rest.split("against baseline ", 1)[1].split(" (", 1)[0]
    return base, other


def _layouts(results, tmp_path):
    """The results as kbench-run writes them, and as results recorded
    before labels had directories of their own: every run in <release>/."""
    out, host, release = results
    old = tmp_path / "old"
    shutil.copytree(out, old)
    for label in ("A", "B"):
        labelled = old / host / f"{release}[{label}]"
        for run in labelled.iterdir():
            run.rename(old / host / release / run.name)
        labelled.rmdir()
    return [out, old]


def test_compare_takes_each_labelled_kernel_by_its_name(root, results, tmp_path):
    _, host, release = results
    a, b, plain = f"{host}/{release}[A]", f"{host}/{release}[B]", f"{host}/{release}"
    for res in _layouts(results, tmp_path):
        assert _compared(_script(root, "compare", "--results", res, a, b)) == (a, b)
        assert _compared(_script(root, "compare", "--results", res, plain, b)) == (plain, b)
        # a path with the name at its end, as the shell gives it
        assert _compared(_script(root, "compare", res / a, res / b)) == (a, b)


def test_a_name_that_matches_nothing_is_said(root, results, tmp_path):
    _, host, release = results
    for res in _layouts(results, tmp_path):
        proc = _script(root, "compare", "--results", res, f"{host}/{release}[C]", f"{host}/{release}[B]")
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        said = proc.stderr.split(f"{host}/{release}[C]: no kernel of that name in ", 1)[1].splitlines()[0]
        assert all(f"{host}/{release}{x}" in said for x in ("", "[A]", "[B]")), said


def test_series_json_holds_every_step_and_its_rows(root, results, tmp_path):
    _, host, release = results
    a, b = f"{host}/{release}[A]", f"{host}/{release}[B]"
    for i, res in enumerate(_layouts(results, tmp_path)):
        js = tmp_path / f"series{i}.json"
        proc = _script(root, "compare", "--series", "--results", res, a, b, "--json", js)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(js.read_text())
        assert doc["kernels"] == [a, b]
        (step,) = doc["steps"]
        assert (step["from"], step["to"]) == (a, b)
        cases = {r["case"]: r for r in step["rows"]}
        assert set(cases) == {"fake_good a", "fake_good b size=64"}
        for r in cases.values():
            assert (r["base"], r["other"]) == (a, b) and r["verdict"] and r["ratio"] > 0
        assert sum(step["verdicts"].values()) == len(step["rows"])


def test_summarize_report_and_plot_take_the_names(root, results, tmp_path):
    _, host, release = results
    a, b = f"{host}/{release}[A]", f"{host}/{release}[B]"
    for i, res in enumerate(_layouts(results, tmp_path)):
        s = _script(root, "summarize", "--results", res, a)
        assert s.returncode == 0, s.stderr
        assert f"{a}: 1 run" in s.stdout and b not in s.stdout
        page = tmp_path / f"index{i}.html"
        r = _script(root, "report", "--results", res, a, b, "--baseline", a, "--out", page)
        assert r.returncode == 0, r.stderr
        assert f"2 kernel(s), 2 run(s); baseline {a}" in r.stdout
        p = _script(root, "plot", "--results", res, b, a, "--baseline", a, "--no-samples",
                    "--out", tmp_path / f"plots{i}")
        assert p.returncode == 0, p.stderr
        assert any((tmp_path / f"plots{i}").iterdir())
