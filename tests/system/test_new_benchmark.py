"""A new benchmark is one new file: declared in it, it is built, run, and
placed in its own category's summary table and on the page, with no other
file of the project edited.

The test copies the Makefile and src/ into a scratch tree (the repository is
never written), adds src/bench/lat_widget.cpp there, and lets the Makefile
build it.  The harness objects of the build under test are copied along with
their times, so only the new file compiles.
"""
import html as html_mod
import os
import re
import shutil
import subprocess
import sys

import pytest

WIDGET = r'''// lat_widget — a test benchmark: a few additions per operation.
//
// One op    = spin: 8 dependent additions; twice: 16.
// Timed     = run() only.
// Placement = one party.
// Caveats   = none: it exists to test the declaration path.
#include "harness/bench.hpp"

namespace {

void spin(std::uint64_t iters, int n) {
  std::uint64_t x = 0;
  while (iters--)
    for (int i = 0; i < n; ++i) {
      x += i;
      kbench::do_not_optimize(x);
    }
}

class Spin final : public kbench::Fixture {
 public:
  explicit Spin(int n) : n_(n) {}
  void run(std::uint64_t iters) override { spin(iters, n_); }

 private:
  int n_;
};

}  // namespace

KBENCH_MAIN("lat_widget", kbench::category("Widgets and gadgets", 7).bench_rank(1),
            {kbench::fixture<Spin>("twice", 16).summary(kbench::column("two spins", 2).note("16 adds")),
             kbench::fixture<Spin>("spin", 8).summary(kbench::column("one spin", 1).note("8 adds"))})
'''


@pytest.fixture(scope="module")
def widget_build(tmp_path_factory, root, build_dir):
    """(bin dir holding only lat_widget, scratch tree)."""
    tree = tmp_path_factory.mktemp("tree")
    for name in ("Makefile", "VERSION"):
        shutil.copy2(root / name, tree / name)
    shutil.copytree(root / "src", tree / "src")
    (tree / "src" / "bench" / "lat_widget.cpp").write_text(WIDGET)
    build = tree / "build"
    # the harness library and its objects, times kept: make rebuilds none of it
    # (the ASan build of make test compiles the harness as one unit: UNITY=1)
    unity = (build_dir / "obj" / "unity" / "harness.o").is_file()
    for part in (("obj", "unity"), ("unity",)) if unity else (("obj", "harness"),):
        shutil.copytree(build_dir.joinpath(*part), build.joinpath(*part))
    shutil.copytree(build_dir / "lib", build / "lib")
    # and the stamp of the flags they were built with (the Makefile rebuilds
    # every object when it is missing or says other flags)
    shutil.copy2(build_dir / "build-info.txt", build / "build-info.txt")
    # the flags of the build under test (make test-asan passes its own)
    flags = os.environ.get("KBENCH_TEST_CXXFLAGS")
    ldflags = os.environ.get("KBENCH_TEST_LDFLAGS")
    r = subprocess.run(["make", "-C", str(tree), "BUILD=build", "build/bin/lat_widget"] + (["UNITY=1"] if unity else [])
                       + ([f"CXXFLAGS={flags}"] if flags else [])
                       + ([f"LDFLAGS={ldflags}"] if ldflags is not None else []),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "lat_widget.cpp" in r.stdout and "src/harness/" not in r.stdout  # only the new file compiled
    assert "one unit" not in r.stdout
    bins = tree / "bins"
    bins.mkdir()
    shutil.copy2(build / "bin" / "lat_widget", bins / "lat_widget")
    return bins, tree


def test_new_benchmark_lists_its_declaration(widget_build):
    bins, _ = widget_build
    r = subprocess.run([str(bins / "lat_widget"), "--list"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    import json
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["case"] for x in lines] == ["lat_widget twice", "lat_widget spin"]
    assert {x["category"] for x in lines} == {"Widgets and gadgets"}
    assert [x["rank"] for x in lines] == [1000, 1001]
    assert lines[1]["summary"]["column"] == "one spin" and lines[1]["summary"]["order"] == 1


def test_new_benchmark_reaches_the_tables_and_the_page(widget_build, driver, root, tmp_path):
    bins, _ = widget_build
    out = tmp_path / "results"
    r = subprocess.run([str(driver), "--bin-dir", str(bins), "--out", str(out), "--quick", "--no-controls",
                        "--no-table", "--seed", "1"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    run_dir = r.stdout.strip().splitlines()[-1]
    assert os.path.isfile(os.path.join(run_dir, "cases.jsonl"))

    py = sys.executable
    s = subprocess.run([py, str(root / "scripts" / "summarize"), "--cases", str(out)], capture_output=True,
                       text=True, timeout=300)
    assert s.returncode == 0, s.stderr
    # the category table first (its columns in declared order), then the cases
    parts = s.stdout.split("== Widgets and gadgets")
    assert len(parts) == 3, s.stdout
    table, cases = parts[1], parts[2]
    assert table.index("one spin") < table.index("two spins") and "8 adds" in table
    assert "lat_widget twice" in cases and "lat_widget spin" in cases
    assert "== Other" not in s.stdout

    page = tmp_path / "index.html"
    p = subprocess.run([py, str(root / "scripts" / "report"), str(out), "--out", str(page), "--plots",
                        str(tmp_path / "plots"), "--no-samples", "--boot", "200"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    text = html_mod.unescape(page.read_text())
    # the summary table of the new category, columns in declared order
    m = re.search(r"Widgets and gadgets.*?</table>", text, re.S)
    assert m, "no table for the new category on the page"
    table = m.group(0)
    assert table.index("one spin") < table.index("two spins")
    assert "8 adds" in table and "16 adds" in table
    # and the cases in the page's per-case section under the same category
    assert text.count("lat_widget spin") >= 1


def test_legacy_mapping_agrees_with_the_binaries(bin_dir):
    """The mapping for runs recorded before declarations (scripts/kbench/
    legacy.py) says what today's binaries declare: same category, rank of
    category and bench, direction, unit, summary column and curve."""
    import json
    from kbench.model import legacy, load, runs
    n = 0
    for b in sorted(bin_dir.iterdir()):
        if b.name.startswith("kbench-"):  # the driver and kbench-campaign, as the driver skips them
            continue
        r = subprocess.run([str(b), "--list"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, (b, r.stderr)
        for line in r.stdout.splitlines():
            o = json.loads(line)
            d = legacy.declaration(o["bench"], o["variant"], runs.parse_params(o["params"]), o["metric"])
            if o["bench"] == "lat_ctx" and o["variant"] == "ring" and o["summary"]:
                # The one declaration that changed on purpose (issue 14): the
                # switch is ring - overhead since the overhead variant exists;
                # runs recorded before declarations have no overhead case, and
                # keep ring - work.
                assert o["summary"] == dict(d["summary"], minus="overhead", note="switch = ring - overhead, @same")
                d = dict(d, summary=o["summary"])
            if o["bench"] == "lat_proc" and o["variant"] == "fork":
                # Changed on purpose too (issue 60): fork forks from a small static helper since; runs
                # recorded before declarations forked from the harness's own process, and keep its note.
                assert o["summary"] == dict(d["summary"], note="parent: a small static process")
                d = dict(d, summary=o["summary"])
            for k in ("category", "category_rank", "direction", "unit", "summary", "curve"):
                assert o[k] == d[k], (o["case"], k, o[k], d[k])
            assert o["rank"] // 1000 == d["rank"] // 1000, o["case"]
            n += 1
    assert n >= 270
