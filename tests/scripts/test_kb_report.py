"""Charts and the HTML page: written, not empty, well-formed, complete,
self-contained, escaped."""
import html
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kb_helpers import assert_clean_exit, rewrite_samples, set_meta
from kbench.model import compare, groups as groups_mod, load, stats
from kbench.views import plot
from kbench.cli import plot_main, report_main

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
PNG = b"\x89PNG\r\n\x1a\n"


class Checker(HTMLParser):
    VOID = {"meta", "br", "img", "input", "link", "hr", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.srcs, self.scripts = [], [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if a.get(k):
                self.srcs.append(a[k])
        if tag == "script":
            self.scripts.append(a)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            self.errors.append((tag, self.getpos()))


def check_html(text):
    p = Checker()
    p.feed(text)
    p.close()
    assert p.errors == [] and p.stack == []
    return p


def groups_of(path):
    return groups_mod.group_runs(load.load_runs([path], load.Warnings()))


def test_plots_are_written(tmp_path, fixture_runs):
    groups = groups_of(fixture_runs[0].parent)
    base, new = (compare.Side.from_group(g) for g in groups)
    rows = compare.compare_sides(base, new, compare.Options(n_boot=200))
    bars = plot.category_bars(groups[0].label, [(groups[1].label, rows)], tmp_path, ("png", "svg"))
    assert "Processor and processes" in bars and "Local communication bandwidth" in bars
    curves = plot.size_curves(groups, tmp_path, ("png", "svg"))
    assert set(curves) == {"mem_latency", "mem_bandwidth", "file_reread"}
    for g in groups:  # strip plots of a few cases only: keep the test fast
        g.cases = {k: v for k, v in g.cases.items() if k.startswith(("lat_syscall n", "bw_pipe"))}
    strips = plot.strip_plots(groups, tmp_path, ("png",))
    assert set(strips) == {"lat_syscall null", "bw_pipe stream chunk_kb=64 @same"}
    files = [p for ps in list(bars.values()) + list(curves.values()) for p in ps] + list(strips.values())
    for f in files:
        data = Path(f).read_bytes()
        if str(f).endswith(".png"):
            assert data.startswith(PNG) and len(data) > 5000
        else:
            assert b"<svg" in data[:1000] and len(data) > 5000


@pytest.fixture
def hostile_results(tmp_path, fixture_runs):
    """The fixture runs with hostile strings in host, kernel, command line
    and a case name."""
    root = tmp_path / "results"
    shutil.copytree(fixture_runs[0].parent, root / "testhost")
    runs = sorted(p.parent for p in root.rglob("meta.json"))
    set_meta(runs[1], host="<script>alert('h')</script>", kernel_release="6.6<img src=x onerror=alert(1)>",
             kernel_cmdline="quiet \"a\" & <b>bold</b>", governor="performance")

    def evil(o):
        if o["case"] == "lat_syscall null":
            o["case"] = "lat_syscall null <i>x</i>"
        return o
    rewrite_samples(runs[1], evil)
    return root


def test_report_page(tmp_path, hostile_results, capsys):
    out = tmp_path / "site" / "index.html"
    rc = report_main(["--no-prior", str(hostile_results), "--out", str(out), "--plots", str(tmp_path / "site" / "plots"),
                      "--formats", "png", "--no-samples", "--boot", "300", "--baseline", "testhost/6.1.0-base"])
    assert rc == 0, capsys.readouterr().err
    text = out.read_text()
    parsed = check_html(text)
    # escaped everywhere
    for raw in ("<script>alert", "<img src=x", "<b>bold</b>", "<i>x</i>"):
        assert raw not in text
    assert "&lt;script&gt;alert(&#x27;h&#x27;)&lt;/script&gt;" in text
    assert "lat_syscall null &lt;i&gt;x&lt;/i&gt;" in text
    # self-contained: no network, relative links to existing files
    assert all(s["src"] is None if "src" in s else True for s in parsed.scripts)
    assert not re.search(r"(src|href)=['\"](https?:)?//", text)
    for link in parsed.srcs:
        if link.startswith(("#", "data:")):
            continue
        assert (out.parent / link).exists(), link
    # every case of every run is on the page, as the whole text of a cell
    groups = groups_of(hostile_results)
    for g in groups:
        for name in g.cases:
            assert f"<td>{html.escape(name)}</td>" in text, name
    # the summary cells: coloured by the verdict and the size of the change
    # (s = slower, f = faster; 1 below 10%, 2 below 30%), the case and its
    # ratio in the title, each on its own case's cell
    cells = {}
    for cls, desc, ratio in re.findall(r"<td class='num ([a-z0-9]*)' data-v='[0-9.]+' "
                                       r"title='([^;']+); ratio to baseline ([0-9.]+), ", text):
        cells.setdefault(desc, (cls, ratio))
    base, new = (compare.Side.from_group(g) for g in sorted(groups, key=lambda g: g.label != "testhost/6.1.0-base"))
    rows = {r.case: r.cmp for r in compare.compare_sides(base, new, compare.Options(n_boot=300))}
    stat, pipe = rows["lat_syscall stat"], rows["bw_pipe stream chunk_kb=64 @same"]
    assert stat.verdict == stats.SLOWER and 3 <= -stat.change < 10      # 9.3% slower
    assert pipe.verdict == stats.FASTER and 10 <= pipe.change < 30     # 23.5% faster
    assert cells["lat_syscall stat"] == ("s1", f"{stat.ratio:.3f}")
    assert cells["bw_pipe stream chunk_kb=64 @same"] == ("f2", f"{pipe.ratio:.3f}")
    # the differing conditions are highlighted
    assert re.search(r"<tr class='diff'><td>governor</td>", text)
    assert re.search(r"<tr class='diff'><td>kernel_cmdline</td>", text)
    assert "<tr class='diff'><td>started_utc" not in text
    # the raw files are not beside the page (site/ and results/): not linked, but where they are is said
    assert "samples.jsonl</a>" not in text and f"in <code>{tmp_path / 'results'}" in text
    # problems from runs.jsonl are listed
    assert "No space left on device" in text


def test_report_single_kernel_and_baseline_option(tmp_path, fixture_runs, capsys):
    out = tmp_path / "index.html"
    args = ["--out", str(out), "--plots", str(tmp_path / "p"), "--formats", "png", "--no-samples", "--boot", "200"]
    assert report_main(["--no-prior", str(fixture_runs[1])] + args) == 0
    check_html(out.read_text())
    assert report_main(["--no-prior", str(fixture_runs[0].parent), "--baseline", "6.6.0-new"] + args) == 0
    assert "Baseline: <b>testhost/6.6.0-new</b>" in out.read_text()
    capsys.readouterr()
    rc = report_main(["--no-prior", str(fixture_runs[0].parent), "--baseline", "nosuch"] + args)
    assert_clean_exit(rc, capsys.readouterr().err, 2, "report: --baseline 'nosuch' matches no kernel found; there "
                      "are: testhost/6.1.0-base, testhost/6.6.0-new")
    rc = report_main(["--no-prior", str(tmp_path / "empty")] + args)
    assert_clean_exit(rc, capsys.readouterr().err, 1, f"warning: {tmp_path / 'empty'}: no such file or directory",
                      f"report: no usable run found in {tmp_path / 'empty'}")


@pytest.mark.parametrize("name", ["summarize", "compare", "plot", "report"])
def test_entry_points_help(name):
    p = subprocess.run([str(SCRIPTS / name), "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "usage:" in p.stdout
    # every option the help mentions is one the script has (report's --series wrote of --csv/--json)
    opts = set(re.findall(r"^\s+(--[a-z][a-z-]*)", p.stdout, re.M))
    assert set(re.findall(r"--[a-z][a-z-]*[a-z]", p.stdout)) - {"--help"} <= opts


def test_entry_point_bad_input_says_what_is_wrong(tmp_path):
    d = tmp_path / "r" / "h" / "k" / "run"
    d.mkdir(parents=True)
    (d / "meta.json").write_bytes(b"\xff\xfe[")
    (d / "samples.jsonl").write_text("")
    env = dict(os.environ, LC_ALL="C", LANG="C")
    p = subprocess.run([str(SCRIPTS / "summarize"), str(d)], capture_output=True, text=True, env=env, timeout=60)
    assert_clean_exit(p.returncode, p.stderr, 1, f"warning: {d}/meta.json:1: not valid UTF-8 (byte 0); run skipped",
                      f"summarize: no usable run found in {d}")
    p = subprocess.run([str(SCRIPTS / "compare"), "--min-effect"], capture_output=True, text=True, timeout=60)
    assert_clean_exit(p.returncode, p.stderr, 2, "compare: argument --min-effect: expected one argument")


def test_plot_cli(tmp_path, fixture_runs, capsys):
    """By default the charts a person looks at (bars per category, the
    curves); the raw-sample charts only with --samples."""
    rc = plot_main([str(fixture_runs[0].parent), "--out", str(tmp_path / "a"), "--formats", "svg", "--boot", "200"])
    assert rc == 0 and "chart file(s)" in capsys.readouterr().out
    svgs = {p.name for p in (tmp_path / "a").glob("*.svg")}
    assert len(svgs) >= 8 and not list((tmp_path / "a").glob("*.png"))
    assert any(n.startswith("bars_") for n in svgs) and any(n.startswith("curve_") for n in svgs)
    assert not any(n.startswith("samples_") for n in svgs)
    assert plot_main([str(fixture_runs[0].parent), "--out", str(tmp_path / "b"), "--formats", "png", "--boot", "200",
                      "--samples"]) == 0
    pngs = {p.name for p in (tmp_path / "b").glob("*.png")}
    assert any(n.startswith("samples_lat_syscall_null") for n in pngs) and svgs <= {n[:-3] + "svg" for n in pngs}
    assert plot_main(["--formats", "gif"]) == 2
    assert plot_main([str(fixture_runs[0].parent), "--samples", "--no-samples"]) == 2
