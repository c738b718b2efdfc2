"""The HTML page as a published file: one self-contained file whose charts
are embedded, links to raw files only where they resolve; and its reading
(scoreboard, ratio and interval in the cells, anchors, filter, wording)."""
import base64
import math
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kbench.cli import report_main
from kbench.views import page as page_mod

PNG = b"\x89PNG\r\n\x1a\n"


class Refs(HTMLParser):
    """Every reference of the page: img src, href, and the ids."""

    def __init__(self):
        super().__init__()
        self.imgs, self.hrefs, self.ids, self.other = [], [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(a["id"])
        if tag == "img":
            self.imgs.append(a.get("src") or "")
        elif a.get("href"):
            self.hrefs.append(a["href"])
        for k in ("src", "data", "srcset", "poster"):
            if tag != "img" and a.get(k):
                self.other.append((tag, k, a[k]))


def refs_of(text):
    p = Refs()
    p.feed(text)
    p.close()
    return p


@pytest.fixture(scope="module")
def pages(tmp_path_factory, fixture_runs):
    """Two pages of the fixture runs, with the raw-sample charts: one
    written apart from the runs (site/), one at the root of the results
    beside them."""
    root = tmp_path_factory.mktemp("page")
    results = root / "results"
    shutil.copytree(fixture_runs[0].parent, results / "testhost")
    apart = root / "site" / "index.html"
    beside = results / "index.html"
    for out in (apart, beside):
        assert report_main(["--no-prior", str(results), "--out", str(out), "--boot", "200"]) == 0
    return apart, beside, results


def test_charts_are_embedded_and_the_page_works_copied_alone(pages, tmp_path):
    apart, _, _ = pages
    text = apart.read_text()
    r = refs_of(text)
    # no chart file was written beside the page, and none is referenced
    assert not list(apart.parent.glob("*.png")) and not (apart.parent / "plots").exists()
    assert r.imgs and r.other == []
    kinds = set()
    for src in r.imgs:
        m = re.fullmatch(r"data:image/(png|svg\+xml);base64,([A-Za-z0-9+/=]+)", src)
        assert m, src[:80]
        data = base64.b64decode(m.group(2))
        assert data.startswith(PNG) if m.group(1) == "png" else b"<svg" in data[:2000]
        kinds.add(m.group(1))
    assert kinds == {"svg+xml"}  # bars and curves as SVG
    # every chart section holds its charts: bars, curves, one strip figure per bench and variant, inline
    for section in ("charts", "curves", "samples"):
        assert f"id='{section}'" in text
    assert len(re.findall(r"<figure id='fig-samples_[^']+' class='strips'><figcaption>[^<]+</figcaption>"
                          r"<svg class='strip' ", text)) >= 10
    # copied alone elsewhere: nothing left but anchors inside the page and data: URIs
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    copy = elsewhere / "index.html"
    shutil.copy(apart, copy)
    r = refs_of(copy.read_text())
    for href in r.hrefs:
        assert href.startswith("#"), href
        assert href[1:] in r.ids, href
    # the runs were not beside the page: no link to them, but where they are
    assert "samples.jsonl</a>" not in text and "not beside this page" in text


def test_raw_links_only_when_the_files_sit_beside_the_page(pages):
    _, beside, results = pages
    text = beside.read_text()
    r = refs_of(text)
    raw = [h for h in r.hrefs if not h.startswith("#")]
    assert raw and all(not h.startswith(("/", "..")) for h in raw)
    for h in raw:
        assert (beside.parent / h).is_file(), h
    assert {Path(h).name for h in raw} >= {"meta.json", "samples.jsonl"}
    assert "not beside this page" not in text
    # still no chart file: the images are in the page
    assert all(s.startswith("data:") for s in r.imgs)
    assert not list(results.glob("*.png")) and not list(results.glob("*.svg"))


def test_case_anchors_and_sample_links_resolve(pages):
    apart, _, _ = pages
    r = refs_of(apart.read_text())
    assert len(r.ids) == len(set(r.ids)), "duplicate ids"
    samples = [h for h in r.hrefs if h.startswith("#fig-samples_")]
    assert samples and all(h[1:] in r.ids for h in samples)


def test_a_change_is_stated_the_same_way_for_latency_and_bandwidth():
    from kbench.views.html import speed_words
    # 1.25 times the time and 0.8 times the MB/s are the same slow-down
    assert speed_words(1.25, "latency") == ("1.25× slower", "time +25.0%")
    assert speed_words(0.8, "bandwidth") == ("1.25× slower", "MB/s −20.0%")
    assert speed_words(0.8, "latency") == ("1.25× faster", "time −20.0%")
    assert speed_words(1.25, "bandwidth") == ("1.25× faster", "MB/s +25.0%")
    assert speed_words(1.001, "latency")[0] == "same speed"
    assert speed_words(float("nan"), "latency") == ("", "")


def test_reading_scoreboard_cells_anchors_filter_palette(pages):
    apart, _, _ = pages
    text = apart.read_text()
    r = refs_of(text)
    # the scoreboard comes before the summary tables, one row per other kernel, the six counts adding up
    assert text.index("id='score'") < text.index("id='summary'")
    board = text[text.index("<table class='score'>"):]
    board = board[:board.index("</table>")]
    for word in ("failed", "slower", "faster", "inconclusive", "no significant change", "not judged", "not tested"):
        assert f"<th>{word}</th>" in board
    row = re.search(r"<tr><td class='k'>testhost/<wbr>6.6.0-new</td>(.*?)</tr>", board).group(1)
    nums = [int(x) for x in re.findall(r"<td class='num[^']*'>(\d+)", row)]
    assert len(nums) == 8 and sum(nums[:7]) == nums[7] and nums[1] > 0 and nums[2] > 0
    # summary cells: the verdict in words, the ratio and its interval without hovering, a link to the case
    cell = re.search(r"<td class='num s\d' data-v='[0-9.]+' title='lat_syscall stat; [^']*'>"
                     r"<a class='v' href='#([^']+)'>[^<]+</a><small class='w'>([^<]+)</small>"
                     r"<small>ratio ([0-9.]+) <span class='ci'>\[([0-9.]+)–([0-9.]+)\]</span></small></td>", text)
    assert cell, "summary cell of lat_syscall stat"
    anchor, words, ratio, lo, hi = cell.groups()
    assert anchor in r.ids and words.endswith("× slower") and float(lo) <= float(ratio) <= float(hi)
    assert re.search(rf"<tr id='{re.escape(anchor)}' class='chg'><td>lat_syscall stat</td>", text)
    # every case has an anchor; the changed ones are marked for the filter, which is optional script
    assert len([i for i in r.ids if i.startswith("case-")]) >= 40
    assert "changed-only" in text and "show only the cases that changed" in text
    assert "<tr class='chg'" not in text  # the mark goes with the id
    # the palette: blue for faster, orange for slower, no red/green pair
    assert ".f2{background:#9ecae1}" in text and ".s2{background:#fdae6b}" in text
    assert "#a9e2a9" not in text and "#f2a7a7" not in text
    # adjusted wording by default
    assert "after adjusting for the number of cases compared" in text and "--no-adjust" not in text


def test_no_adjust_wording(tmp_path, fixture_runs):
    out = tmp_path / "index.html"
    assert report_main(["--no-prior", str(fixture_runs[0].parent), "--out", str(out), "--no-samples", "--no-adjust",
                        "--boot", "200"]) == 0
    text = out.read_text()
    assert "not adjusted for the number of cases compared</b> (--no-adjust)" in text
    assert "after adjusting" not in text and "(adjusted for the number of cases)" not in text
    assert "p = " in text and "(not adjusted)" in text


def test_strips_over_many_runs_are_small_and_coloured_by_run(tmp_path):
    """Twenty runs' worth of reps: each rep a 10-90% line with its median, one
    path per run colour; few reps: every sample a dot."""
    from kbench.model import load
    from kbench.views.strips import DOTS_MAX, RUN_COLOURS, panel

    def case(n_runs, reps, samples):
        c = load.Case.__new__(load.Case)
        c.reps = {(f"run{r:02d}", j): list(1000.0 + 10 * r + j + 0.5 * k for k in range(samples))
                  for r in range(n_runs) for j in range(reps)}
        return c

    many = case(10, 5, 8)   # 400 samples
    svg = panel("lat_x", "latency", [("a/k1", many), ("a/k2", None)])
    assert 400 > DOTS_MAX and svg.count("<path ") == 10          # one path per run
    assert {c for c in RUN_COLOURS} == set(re.findall(r"stroke='(#[0-9a-f]{6})'", svg))
    assert svg.count("V") >= 50 and "missing" in svg and "10 runs, 50 reps" in svg
    few = case(1, 5, 8)
    svg = panel("lat_x", "latency", [("a/k1", few)])
    assert svg.count("h.1") == 40 and svg.count("<path ") == 1   # every sample a dot
    assert len(svg) < 4000


def test_rep_quantiles_are_numpys_of_each_rep():
    """The strips' quantiles of all reps at once equal np.quantile's of each
    (linear interpolation), empty reps nan, whatever the reps' lengths."""
    import numpy as np
    from kbench.views.strips import rep_quantiles
    reps = [np.array([3.0, 1.0, 2.0]), np.array([]), np.array([5.0]), np.array([4.0, 9.0, 1.0, 7.0, 2.0, 2.0])]
    got = rep_quantiles(reps, (0.1, 0.5, 0.9))
    for r, g in zip(reps, got):
        if r.size:
            assert g == pytest.approx(tuple(np.quantile(r, (0.1, 0.5, 0.9))), rel=1e-12)
        else:
            assert all(math.isnan(v) for v in g)
    assert got[0] == pytest.approx((1.2, 2.0, 2.8)) and got[2] == (5.0, 5.0, 5.0)
    assert rep_quantiles([], (0.5,)) == []


def test_memory_levels_guessed_from_the_curve_and_a_too_wide_interval(tmp_path, gen, capsys):
    """Issue 30 item 6, two kernels on a VM that reports no caches: the
    memory-latency table's L1/L2/L3 come from the curve's plateaus and a
    note under it says so; main memory, whose reps scatter over orders of
    magnitude here, has an interval too wide to read: its cell is not
    coloured and says "too wide to judge"."""
    from kb_helpers import memory_curve, steps
    cases = memory_curve(steps, bcv={262144: 1.5})
    for kernel, seed in (("6.1.0", 11), ("6.6.0", 12)):
        gen.make_run(tmp_path / "results", "h", kernel, seed=seed, reps=4, samples=2, cases=cases, failures=False,
                     meta_extra={"cache": []})
    page = tmp_path / "index.html"
    assert report_main([str(tmp_path / "results"), "--out", str(page), "--no-samples", "--boot", "300"]) == 0
    capsys.readouterr()
    text = page.read_text()
    table = text[text.index("<h3>Memory latency"):]
    table = table[:table.index("</table>") + 200]
    assert ("<p class='note'>h/6.1.0, h/6.6.0: meta.cache records no cache sizes for these runs (the machine "
            "reported none): L1, L2 and L3 are sizes on the first three plateaus") in table
    assert "L1 guessed from the latency curve (plateau 1 KB..16 KB), not meta.cache" in table
    row = re.search(r"<tr><td class='k'>h/<wbr>6\.6\.0</td>(.*?)</tr>", table).group(1)
    cells = re.findall(r"<td class='num ([a-z0-9]*)'[^>]*title='([^']*)'>(.*?)</td>", row)
    assert len(cells) == 4                                   # L1, L2, L3, main mem
    cls, title, inner = cells[3]
    assert title.startswith("lat_mem_rd random size_kb=262144; 256 MB array")
    lo, hi = map(float, re.search(r"\[([0-9.]+)–([0-9.]+)\]", inner).groups())
    assert hi / lo > 4
    assert cls == "wide" and "<small class='w'>too wide to judge</small>" in inner
    assert "too wide to judge the change either way" in title
    # a narrow interval keeps its verdict's class and words
    cls, _, inner = cells[0]
    assert cls != "wide" and "too wide" not in inner


def test_too_wide_is_not_significant_and_wider_than_four_times():
    from types import SimpleNamespace
    from kbench.views import html
    from kbench.model import stats

    def cmp(lo, hi, verdict=stats.INCONCLUSIVE):
        return SimpleNamespace(verdict=verdict, significant=verdict in (stats.FASTER, stats.SLOWER), lo=lo, hi=hi,
                               ratio=(lo * hi) ** 0.5, unresolved=False, change=-50.0, metric="latency")
    assert page_mod.too_wide(cmp(0.18, 27.4)) and page_mod.verdict_class(cmp(0.18, 27.4)) == "wide"
    assert not page_mod.too_wide(cmp(0.5, 2.0))                  # exactly four times: still judged
    assert page_mod.too_wide(cmp(0.49, 2.0))                     # just beyond: too wide
    assert page_mod.verdict_class(cmp(2.0, 9.0, stats.SLOWER)) == "s3"  # a significant change keeps its colour
    assert "too wide to judge" in page_mod.cell_words(cmp(0.18, 27.4))
    assert not page_mod.too_wide(cmp(float("nan"), float("nan")))


def test_the_page_says_which_two_party_groups_their_bulk_widened(fixture_runs):
    """The page's run-level paragraph says, per compared kernel, what
    compare's words say of a two-party group whose own bulk widened its
    intervals; a comparison that widened none adds nothing."""
    from kbench.cli import _analyse
    from kbench.model import compare
    from kbench.views import html
    opts = compare.Options(n_boot=100, prior=None)
    groups, baseline, tabs, comparisons, *_ = _analyse([fixture_runs[0].parent], None, opts)
    other = [g for g in groups if g is not baseline][0]
    assert len(comparisons[other.key]) == 3 and isinstance(comparisons[other.key][2], dict)
    m = page_mod.Model(groups=groups, baseline=baseline, tables=tabs, comparisons=dict(comparisons), opts=opts)
    plain = html._run_level_text(m)
    assert "moved together" not in plain
    rows, cells, _ = comparisons[other.key]
    m.comparisons[other.key] = (rows, cells, {"cross": 4.0})
    text = html._run_level_text(m)
    assert f"Against {html.esc(other.label)}: The cross-CPU cases moved together 2x as far as" in text
