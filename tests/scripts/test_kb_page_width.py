"""The page in a browser 1280 px wide: no summary table runs off the right
edge, and the document does not scroll sideways.  Headless Chromium loads
a copy of the page with a probe script that writes the measured widths
into the DOM, which --dump-dom prints.  Skipped only where no chromium is
installed (tests/ensure-deps.sh installs it where it can)."""
import json
import shutil
import subprocess

import pytest

from kbench.cli import report_main

WIDTH = 1280
PROBE = """<script>window.addEventListener('load',function(){
var d=document.documentElement,out={scroll:d.scrollWidth,client:d.clientWidth,tables:[]};
document.querySelectorAll('table').forEach(function(t){var r=t.getBoundingClientRect(),h=t.previousElementSibling;
 out.tables.push({summary:t.classList.contains('summary'),right:Math.round(r.right),
  title:h?h.textContent.slice(0,60):''});});
var p=document.createElement('pre');p.id='kbench-widths';p.textContent=JSON.stringify(out);
document.body.appendChild(p);});</script>"""


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def measured(page, tmp_path, width=WIDTH):
    """{scroll, client, tables: [{summary, right, title}]} of the page
    laid out in a window `width` px wide."""
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    profile = tmp_path / "chromium-profile"
    p = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run",
                        f"--user-data-dir={profile}", f"--window-size={width},900", "--dump-dom", probe.as_uri()],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "id=\"kbench-widths\">" in p.stdout, p.stderr[-2000:]
    text = p.stdout.split("id=\"kbench-widths\">", 1)[1].split("</pre>", 1)[0]
    return json.loads(text.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


@pytest.fixture(scope="module")
def page(tmp_path_factory, gen):
    """The page of two kernels with long labels, every summary table full
    (the fixture's full case set)."""
    root = tmp_path_factory.mktemp("wide")
    for kernel, seed, scale in (("6.12.117+deb12-cloud-amd64", 1, None),
                                ("6.12.117+deb12-cloud-amd64-patched", 2, {r"^lat_syscall": 1.1})):
        gen.make_run(root, "build-host-07.example.org", kernel, seed=seed, reps=3, samples=3, cases="full",
                     scale=scale)
    out = root / "index.html"
    assert report_main([str(root), "--out", str(out), "--no-samples"]) == 0
    return out


@pytest.mark.skipif(_chromium() is None, reason="no chromium (tests/ensure-deps.sh installs it where it can)")
def test_no_summary_table_is_wider_than_the_window(page, tmp_path):
    got = measured(page, tmp_path)
    summary = [t for t in got["tables"] if t["summary"]]
    assert len(summary) >= 5, got
    wide = [(t["title"], t["right"]) for t in summary if t["right"] > got["client"]]
    assert not wide, f"summary tables wider than {got['client']} px: {wide}"
    assert got["scroll"] <= got["client"], got
    # the probe can fail: the same page in a window too narrow for its tables
    narrow = measured(page, tmp_path, 700)
    assert any(t["right"] > narrow["client"] for t in narrow["tables"] if t["summary"])
