"""The page's words and colours, read from the cell of each case: a summary
cell says its verdict under its value (no significant change, inconclusive,
1.35× slower, FAILED, too few reps) and is coloured by it (fail; s1/f1
under 10%, s2/f2 under 30%, s3/f3 from 30%). The word any cell must say is
written out here by hand, per verdict; the verdict is read from the case's
row of "every case", which the page writes from the same comparison
without that table of words. Fixed seeds: deterministic."""
import html as htmllib
import json
import re

import pytest

from kbench.views import html
from kbench.model import stats
from kbench.cli import report_main
from kbench.views import page as page_mod

# What a summary cell says for each verdict (page_mod.VERDICT_WORD, by hand);
# significant cells say the factor instead.
WORD = {stats.SAME: "no sig. change", stats.INCONCLUSIVE: "inconclusive", stats.FAILED: "FAILED",
        stats.FEW: "too few reps", stats.MACHINE: "not judged", stats.MISSING: "missing",
        stats.UNDEFINED: "not comparable"}
SCALE = {r"^lat_syscall stat$": 1.35,      # 35% slower: the darkest orange (s3), 30% or more
         r"^lat_syscall open$": 1.15,      # 15%: s2
         r"^lat_sig install$": 1.06,       # 6%: s1
         r"^bw_pipe ": 0.8,                # 1.25x the MB/s: faster, f2
         r"^lat_pipe ": 0.6}               # 1.67x faster: f3


def _edit_jsonl(path, keep=lambda o: True, change=lambda o: o):
    lines = [json.loads(ln) for ln in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(change(o)) + "\n" for o in lines if keep(o)))


@pytest.fixture(scope="module")
def page(tmp_path_factory, gen):
    root = tmp_path_factory.mktemp("words")
    gen.make_run(root, "h", "base", seed=1, reps=8, samples=3, cases="small", failures=False, run_id="a")
    new = gen.make_run(root, "h", "new", seed=2, reps=8, samples=3, cases="small", failures=False, run_id="b",
                       scale=SCALE)

    def timed_out(o):
        if o["case"] == "lat_syscall null" and o["rep_idx"] == 0:
            o.update(status="timeout", exit_code=None, reason="still running after 60 s; sent SIGTERM")
        return o
    _edit_jsonl(new / "runs.jsonl", change=timed_out)
    # exec: 2 reps on the new side, fewer than --min-reps
    few = lambda o: not (o["case"] == "lat_proc exec" and o["rep_idx"] >= 2)   # noqa: E731
    _edit_jsonl(new / "runs.jsonl", keep=few)
    _edit_jsonl(new / "samples.jsonl", keep=few)
    out = root / "index.html"
    assert report_main([str(root), "--baseline", "h/base", "--out", str(out), "--no-samples", "--boot", "400",
                        "--no-prior"]) == 0
    return out.read_text()


def summary_cells(text):
    """{cell key: (css class, word under the value)} of the other kernel's
    summary cells (the baseline's carry no word)."""
    summary = text[text.index("id='summary'"):text.index("id='cases'")]
    cells = {}
    for cls, title, body in re.findall(r"<td class='num ([^']*)' data-v='[^']*' title='([^']*)'>(.*?)</td>",
                                       summary):
        word = re.search(r"<small class='w'>([^<]*)</small>", body)
        if word is None:
            continue                      # the baseline's cell
        key = htmllib.unescape(title).split("; ")[0]
        cells[key] = (cls.strip(), htmllib.unescape(word.group(1)))
    return cells


def case_rows(text):
    """{case: (verdict, % of what was measured, css class of the verdict)}
    from the rows of "every case"."""
    rows = {}
    for row in re.findall(r"<tr(?: [^>]*)?><td>([^<]+)</td>(.*?)</tr>", text[text.index("id='cases'"):]):
        name, rest = row
        tds = re.findall(r"<td(?: class='([^']*)')?[^>]*>(.*?)</td>", rest)
        if len(tds) < 7:
            continue
        change_cls, change = tds[3]
        verdict_cls, verdict = tds[6]
        pct = re.search(r"<small>(?:time|MB/s) ([+−])([0-9.]+)%</small>", change)
        rows[htmllib.unescape(name)] = (re.sub(r" <small>.*", "", htmllib.unescape(verdict)),
                                        float(pct.group(2)) if pct else None, verdict_cls)
    return rows


def expected_class(verdict, pct):
    if verdict == stats.FAILED:
        return "fail"
    if verdict == stats.FEW:
        return "few"
    if verdict not in (stats.FASTER, stats.SLOWER):
        return ""
    level = 1 if pct < 10 else 2 if pct < 30 else 3
    return ("f" if verdict == stats.FASTER else "s") + str(level)


def test_every_summary_cell_says_its_cases_verdict(page):
    cells, rows = summary_cells(page), case_rows(page)
    single = {k: v for k, v in cells.items() if k in rows}
    assert len(single) >= 15, sorted(cells)
    seen = set()
    for key, (cls, word) in single.items():
        verdict, pct, _ = rows[key]
        seen.add(verdict)
        if verdict in (stats.FASTER, stats.SLOWER):
            assert re.fullmatch(r"\d\.\d\d× " + ("faster" if verdict == stats.FASTER else "slower"), word), \
                (key, verdict, word)
        elif verdict == stats.INCONCLUSIVE and word == "not resolved":
            # inconclusive, and p < 0.05 before the adjustment: the page's "(?)"
            assert cls == "unres", (key, verdict, pct, cls)
            continue
        else:
            assert word == WORD[verdict], (key, verdict, word)
        assert cls == expected_class(verdict, pct), (key, verdict, pct, cls)
    # the fixture makes every verdict a cell can carry on one page
    assert {stats.SAME, stats.INCONCLUSIVE, stats.FASTER, stats.SLOWER, stats.FAILED, stats.FEW} <= seen, seen


def test_the_cases_made_to_change_say_so_in_their_own_cells(page):
    cells, rows = summary_cells(page), case_rows(page)
    assert rows["lat_syscall null"][0] == stats.FAILED
    assert cells["lat_syscall null"] == ("fail", "FAILED")
    # made 35% slower, measured 33.3% (noise): 30% or more, the darkest orange
    assert cells["lat_syscall stat"][0] == "s3" and cells["lat_syscall stat"][1].endswith("× slower")
    assert 30 <= rows["lat_syscall stat"][1] < 40
    assert cells["lat_syscall open"][0] == "s2" and cells["lat_syscall open"][1].endswith("× slower")
    assert cells["lat_proc exec"] == ("few", "too few reps")
    assert rows["lat_proc exec"][0] == stats.FEW
    faster = {k: v for k, v in cells.items() if k.startswith(("bw_pipe", "lat_pipe"))}
    assert faster and all(v[1].endswith("× faster") for v in faster.values()), faster
    assert any(v[0] == "f3" for v in faster.values()) and any(v[0] == "f2" for v in faster.values()), faster
    # the failed case's row in "every case" is coloured and worded too
    assert rows["lat_syscall null"][2] == "fail"


@pytest.mark.parametrize("change,cls", [(5.0, "1"), (9.9, "1"), (10.0, "2"), (29.9, "2"), (30.0, "3"), (45.0, "3")])
def test_colour_levels_at_their_edges(change, cls):
    for sign, side in ((1, "f"), (-1, "s")):
        c = stats.Comparison("latency", 100.0, 100.0, 1.0, 0.9, 1.1, 0.001, 0.001, 5, 5, 15, 15,
                             stats.FASTER if sign > 0 else stats.SLOWER, sign * change)
        assert page_mod.verdict_class(c) == side + cls
