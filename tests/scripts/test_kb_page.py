"""The HTML page as a published file: one self-contained file whose charts
are embedded, links to raw files only where they resolve; and its reading
(scoreboard, ratio and interval in the cells, anchors, filter, wording)."""
import base64
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kbench.cli import report_main

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
        assert report_main([str(results), "--out", str(out), "--boot", "200"]) == 0
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
    assert kinds == {"png", "svg+xml"}  # bars and curves as SVG, the dense strips as PNG
    # every chart section holds its charts: bars, curves, one strip per bench and variant
    for section in ("charts", "curves", "samples"):
        assert f"id='{section}'" in text
    assert len(re.findall(r"<figure id='fig-samples_", text)) >= 10
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
