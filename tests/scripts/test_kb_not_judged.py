"""A case put out of judgement by a guard (here a memory shift: the memory
control ran 3x slower on the other kernel, beyond anything the built-in
prior's runs drifted) is "not judged", with its
reason, in every output: compare's text and JSON, the page (scoreboard,
summary-table cells, every case), the bar charts and the series (text and
JSON); never counted as "inconclusive", never "not resolved (more reps)",
and its number is the number of memory-bound cases, not 0."""
import json
import re
import subprocess
from pathlib import Path

import pytest

from kbench.model import compare, load, stats

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
REASON = ("memory shift: ctl_machine mem ran 199.5% slower against the CPU speed, beyond what the runs of this "
          "host have shown (up to 112%)")


@pytest.fixture(scope="module")
def shifted(tmp_path_factory, gen):
    """(results root, base dir, other dir, memory-bound case names): one
    run a side; on the other kernel the memory control and every
    memory-bound case 3x slower (the machine's memory), bw_mem rd 40%
    slower on top (a change no one may call), lat_syscall stat 20% slower
    (a CPU-bound change, judged)."""
    root = tmp_path_factory.mktemp("memshift")
    mem = r"^(bw_mem|lat_mem_rd|bw_file_rd|bw_mmap_rd) "
    for kernel, seed, scale, f in (("6.1.0", 11, {}, 1.0),
                                   ("6.2.0", 12, {mem: 3.0, r"^bw_mem rd ": 1.4, r"^lat_syscall stat$": 1.2},
                                    3.0)):
        d = gen.make_run(root, "h", kernel, seed=seed, reps=8, samples=3, cases="small", scale=scale)
        gen.add_control(d, 1.0, seed=seed + 100)
        # the memory control exactly 3x slower on the other side, with no noise (its ratio in the reason)
        gen.add_control(d, f, seed=seed + 200, variant="mem", ns=2.0)
        lines = (d / "samples.jsonl").read_text().splitlines()
        fixed = []
        for line in lines:
            o = json.loads(line)
            if o["case"] == "ctl_machine mem":
                o["elapsed_ns"] = int(2.0 * f * 1e6)
                o["ns_per_op"] = 2.0 * f
            fixed.append(json.dumps(o))
        (d / "samples.jsonl").write_text("\n".join(fixed) + "\n")
    runs = load.load_runs([root], load.Warnings())
    memory = sorted({n for r in runs for n, c in r.cases.items() if not c.control and compare.domain_of(c) == "memory"})
    assert len(memory) >= 10
    return root, root / "h" / "6.1.0", root / "h" / "6.2.0", memory


def _run(argv, cwd):
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr
    return p.stdout


def test_compare_text_and_json_name_each_case_and_why(shifted, tmp_path):
    root, base, other, memory = shifted
    text = _run([SCRIPTS / "compare", base, other, "--json", "c.json"], tmp_path)
    assert "WARNING: MEMORY SHIFT" in text
    rows = {r["case"]: r for r in json.loads((tmp_path / "c.json").read_text())[0]["rows"] if not r["control"]}
    for name in memory:
        assert rows[name]["verdict"] == "not judged", name
        assert rows[name]["not_judged"] == REASON, name
        # the text's row of the case says it too
        line = next(x for x in text.splitlines() if x.startswith(name + " "))
        assert line.rstrip().endswith("not judged (memory shift)"), line
    assert rows["lat_syscall stat"]["verdict"] == "significantly slower" and rows["lat_syscall stat"]["not_judged"] is None
    others = [r for n, r in rows.items() if n not in memory]
    assert others and not any(r["verdict"] == "not judged" for r in others)
    assert f"{len(memory)} not judged" in text.split("Summary: ", 1)[1].splitlines()[0]
    assert f"(not judged) {len(memory)} case(s) not judged ({REASON})" in text
    # --changed leaves them out of the tables, and names them under the note
    changed = _run([SCRIPTS / "compare", base, other, "--changed"], tmp_path)
    note = changed.split("(not judged)", 1)[1].splitlines()
    assert [x.strip() for x in note[1:len(memory) + 1]] == [n for n in rows if n in memory]


def test_the_page_counts_and_names_them(shifted, tmp_path):
    root, base, other, memory = shifted
    said = _run([SCRIPTS / "report", root, "--out", tmp_path / "p.html", "--no-samples"], tmp_path)
    assert f"h/6.2.0: 0 case(s) significantly faster, 1 significantly slower, {len(memory)} not judged ({REASON}), " \
        "of " in said
    page = (tmp_path / "p.html").read_text()
    score = page.split("<table class='score'>", 1)[1].split("</table>", 1)[0]
    heads = re.findall(r"<th>([^<]*)</th>", score)
    cells = re.findall(r"<td class='num[^']*'>(\d+)(.*?)</td>", score.split("</thead>", 1)[1])
    got = {h: (int(n), extra) for h, (n, extra) in zip(heads[1:], cells)}
    assert got["not judged"][0] == len(memory)
    assert f"<small>{len(memory)} {REASON}</small>" in got["not judged"][1]
    assert "not resolved" not in got["inconclusive"][1]
    # every case: each memory-bound case's verdict cell, with the reason
    for name in memory:
        row = re.search(r"<tr id='[^']*'[^>]*><td>" + re.escape(name) + r"</td>(.*?)</tr>", page).group(1)
        assert f"<td class='nj'>not judged <small>({REASON})</small></td>" in row, name
    # the summary tables: a memory cell says so in its words, not "inconclusive"
    mem_table = page.split("<h3>Memory latency", 1)[1].split("</table>", 1)[0]
    assert "not judged: memory shift" in mem_table and "inconclusive" not in mem_table


def test_the_bar_charts_mark_them_with_the_reason(shifted, tmp_path):
    root, *_ = shifted
    _run([SCRIPTS / "plot", root, "--out", tmp_path / "plots", "--formats", "svg"], tmp_path)
    charts = {p.name: p.read_text() for p in (tmp_path / "plots").glob("bars_*.svg")}
    mem = [t for n, t in charts.items() if "Memory" in n or "bandwidth" in n]
    assert any(f"not judged, {REASON}" in t for t in mem)
    cpu = [t for n, t in charts.items() if n.startswith("bars_Processor")]
    assert cpu and not any("not judged" in t for t in cpu)
    assert not any("more reps" in t for t in charts.values())


def test_the_series_counts_and_names_them(shifted, tmp_path):
    root, base, other, memory = shifted
    text = _run([SCRIPTS / "compare", "--series", root, "--json", "s.json"], tmp_path)
    steps = text.split("== Steps", 1)[1]
    row = next(x for x in steps.splitlines() if x.startswith("h/6.1.0"))
    assert row.split()[-1] == str(len(memory))
    listed = steps.split("Not judged at h/6.1.0 -> h/6.2.0, ", 1)[1].split("\n\n", 1)[0]
    flat = " ".join(listed.split())       # (the lines wrap at 100 columns)
    assert flat.startswith(f"{REASON} ({len(memory)} cases): ")
    named = flat.split(" cases): ", 1)[1]
    assert sorted(named.split(", ")) == memory     # names hold commas (params), never a comma and a space
    doc = json.loads((tmp_path / "s.json").read_text())
    nj = doc["steps"][0]["not_judged"]
    assert sorted(x["case"] for x in nj) == memory and {x["reason"] for x in nj} == {REASON}
    assert doc["steps"][0]["verdicts"][stats.NOT_JUDGED] == len(memory)

