"""The reference owns the formats: the keys of samples, --list lines,
runs.jsonl and meta.json that src/reference/formats.md documents are exactly the keys
the code writes.

Each format is spelled out once, in src/reference/formats.md; this test reads its
tables and key lists and checks them against real output of the current
build (every binary, and a short driver run), both ways: nothing written is
undocumented, nothing documented is never written.
"""
import json
import pathlib
import re
import subprocess

import pytest

from bench_runner import list_cases, ran_or_allowed_skip, run_bench, samples_of
from driver_runner import run_text


def _section(readme, heading):
    text = readme.split("\n" + heading + "\n", 1)
    assert len(text) == 2, f"src/reference/formats.md has no section {heading!r}"
    return re.split(r"\n## ", text[1], maxsplit=1)[0]


def _table_keys(text):
    """Backticked names in the first column of the first `| key |` table."""
    lines = text.split("\n| key |", 1)[1].splitlines()[2:]
    keys = set()
    for ln in lines:
        if not ln.startswith("|"):
            break
        first = ln.split("|")[1]
        keys.update(re.findall(r"`(\w+)`", first))
    return keys


def _between(text, start, end):
    a = text.index(start)
    return text[a:text.index(end, a)]


@pytest.fixture(scope="module")
def readme(root):
    """The reference's page where the formats are documented."""
    return (root / "src" / "reference" / "formats.md").read_text()


@pytest.fixture(scope="module")
def real_samples(bin_dir, tmp_path_factory):
    """One sample of the first case of every binary, plus the cases that add
    keys of their own or only exist for bandwidth."""
    tmp = tmp_path_factory.mktemp("fmt")
    out = {}
    names = sorted(p.name for p in bin_dir.iterdir() if not p.name.startswith("kbench-"))
    extra = {"lat_syscall": ["stat"], "lat_tcp": ["rt"], "bw_mem": ["rd"], "lat_pagefault": ["anon"]}
    for name in names:
        cases = list_cases(bin_dir, name)
        for case in [cases[0]] + [next(c for c in cases if c["variant"] == v) for v in extra.get(name, [])]:
            args = case["args"]
            r = run_bench(bin_dir, name, args + ["--iters", "2", "--samples", "1", "--warmup-ms", "0"],
                          tmpdir=tmp, timeout=120)
            if ran_or_allowed_skip(case, r):
                out[(name, args[0])] = samples_of(r.stdout)[0]
    return out


def test_sample_keys_are_the_documented_ones(readme, real_samples):
    sec = _section(readme, "## Sample format (JSON Lines)")
    documented = _table_keys(sec)
    # "`fs_type` (what it is ...)": the keys benchmarks add (counters: tests/harness)
    own = set(re.findall(r"`(\w+)` \(", _between(sec, "Benchmarks may add flat keys of their own", "\n\n")))
    assert own >= {"fs_type", "server_port"}
    seen = set()
    for (name, variant), s in real_samples.items():
        undocumented = set(s) - documented - own
        assert not undocumented, f"{name} {variant} writes undocumented keys {sorted(undocumented)}"
        seen |= set(s)
    never = (documented | own) - seen
    assert not never, f"the reference documents sample keys no binary wrote: {sorted(never)}"


def test_list_keys_are_the_documented_ones(readme, bin_dir):
    sec = _section(readme, "## Sample format (JSON Lines)")
    para = _between(sec, "`--list` prints one JSON object per case", "where `args`")
    documented = set(re.findall(r'"(\w+)":', para))
    after = sec[sec.index(para) + len(para):]
    assert _table_keys(after) <= documented   # the declaration keys' table
    assert len(_table_keys(after)) >= 7
    for p in sorted(bin_dir.iterdir()):
        if p.name.startswith("kbench-"):
            continue
        for c in list_cases(bin_dir, p.name):
            assert set(c) == documented, (p.name, sorted(set(c) ^ documented))


@pytest.fixture(scope="module")
def real_run(driver, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    r = subprocess.run([str(driver), "--quick", "--only", "^lat_syscall null$", "--out", str(out), "--no-table",
                        "--seed", "3"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return pathlib.Path(r.stdout.strip().splitlines()[-1])


def test_run_directory_files_are_the_documented_ones(readme, real_run):
    sec = _section(readme, "## Run directories")
    files = set(re.findall(r"^- `([\w.]+)`", sec, re.M))
    assert {p.name for p in real_run.iterdir()} == files


def test_runs_keys_are_the_documented_ones(readme, real_run):
    sec = _section(readme, "## Run directories")
    block = _between(sec, "- `runs.jsonl.gz`", "\n- ")
    block = block[:block.index("}`") + 1]      # the object, not the notes after it
    # key names follow "{" or ","; status values follow ":" or "|"
    documented = set(re.findall(r'[{,]\s*"(\w+)"', block))
    lines = run_text(real_run, "runs.jsonl").splitlines()
    assert lines
    for line in lines:
        keys = set(json.loads(line))
        assert keys == documented, sorted(keys ^ documented)


def test_meta_keys_are_the_documented_ones(readme, real_run):
    sec = _section(readme, "## Run directories")
    block = sec[sec.index("- `meta.json`"):]
    # top-level keys: the backticked names outside parentheses
    flat = re.sub(r"\([^()]*\)", "", block)
    documented = set(re.findall(r"`(\w+)`", flat)) - {"meta"}
    meta = json.loads((real_run / "meta.json").read_text())
    assert set(meta) - documented == set(), sorted(set(meta) - documented)
    assert documented - set(meta) == set(), sorted(documented - set(meta))
