"""Reading run directories, including damaged ones: a clear message naming
the file (and line), the rest still read, never a traceback."""
import json

import pytest

from kb_helpers import assert_clean_exit
from kbench.model import decl, groups as groups_mod, load, runs
from kbench.cli import summarize_main


def read(paths):
    w = load.Warnings()
    runs = load.load_runs(paths, w)
    return runs, w.messages


def test_committed_fixture_reads_cleanly(fixture_runs):
    runs, msgs = read([fixture_runs[0].parent])
    assert len(runs) == 2 and msgs == []
    groups = groups_mod.group_runs(runs)
    assert [g.label for g in groups] == ["testhost/6.1.0-base", "testhost/6.6.0-new"]
    case = groups[0].cases["lat_syscall null"]
    assert case.metric == "latency" and case.n_reps == 5 and case.n_samples == 15
    bw = groups[0].cases["bw_pipe stream chunk_kb=64 @same"]
    assert bw.metric == "bandwidth" and bw.placement == "same"
    v = bw.rep_arrays()[0][0]
    assert 1000 < v < 10000  # MB/s, not ns
    assert any(i["status"] == "skipped" for i in runs[0].invocations) is False  # small set: no ipv6 case
    assert any(i["status"] == "failed" for i in runs[0].invocations)


def test_missing_directory(tmp_path):
    runs, msgs = read([tmp_path / "nope"])
    assert runs == [] and "nope: no such file or directory" in msgs[0]


def test_empty_directory(tmp_path):
    runs, msgs = read([tmp_path])
    assert runs == [] and "no run directories found" in msgs[0]


def test_empty_run(tmp_path, base_run):
    (base_run / "samples.jsonl").write_text("")
    runs, msgs = read([base_run])
    assert len(runs) == 1 and runs[0].cases == {}
    assert any("no usable samples" in m for m in msgs)


def test_incomplete_run_dir(tmp_path, base_run):
    (base_run / "samples.jsonl").unlink()
    runs, msgs = read([base_run.parent])
    assert runs == [] and any("no samples.jsonl" in m for m in msgs)


def test_truncated_last_line(base_run):
    p = base_run / "samples.jsonl"
    data = p.read_bytes()
    p.write_bytes(data[:-40])  # a crash in the middle of a write
    nlines = data.count(b"\n")
    runs, msgs = read([base_run])
    assert len(runs) == 1 and runs[0].bad_lines == 1
    assert any(f"samples.jsonl:{nlines}: truncated last line" in m for m in msgs)
    assert runs[0].n_samples == nlines - 1


def _replace_line(run, lineno, text):
    p = run / "samples.jsonl"
    lines = p.read_bytes().split(b"\n")
    lines[lineno - 1] = text if isinstance(text, bytes) else text.encode()
    p.write_bytes(b"\n".join(lines))


def _line(run, lineno):
    return json.loads((run / "samples.jsonl").read_text().splitlines()[lineno - 1])


@pytest.mark.parametrize("change,expect", [
    ({"ns_per_op": "12"}, "'ns_per_op' is a string"),
    ({"ns_per_op": -1.0}, "expected a positive finite number"),
    ({"rep_idx": "0"}, "'rep_idx' is '0'"),
    ({"rep_idx": True}, "'rep_idx' is True"),
    ({"metric": "speed"}, "'metric' is 'speed'"),
    ({"bench": 7, "case": None}, "'bench' is a number"),
])
def test_wrong_types(base_run, change, expect):
    obj = _line(base_run, 3)
    obj.update(change)
    _replace_line(base_run, 3, json.dumps(obj))
    runs, msgs = read([base_run])
    assert runs[0].bad_lines == 1
    assert any("samples.jsonl:3:" in m and expect in m for m in msgs), msgs


def test_nan_and_infinity(base_run):
    obj = _line(base_run, 2)
    _replace_line(base_run, 2, json.dumps(obj).replace(str(obj["ns_per_op"]), "NaN", 1))
    _replace_line(base_run, 4, json.dumps(_line(base_run, 4)).replace('"iters"', '"x":Infinity,"iters"'))
    runs, msgs = read([base_run])
    assert runs[0].bad_lines == 2
    assert any("samples.jsonl:2: invalid JSON: NaN is not valid JSON" in m for m in msgs)
    assert any("samples.jsonl:4:" in m for m in msgs)


def test_not_an_object_and_garbage(base_run):
    _replace_line(base_run, 1, "[1, 2, 3]")
    _replace_line(base_run, 5, "{not json")
    runs, msgs = read([base_run])
    assert runs[0].bad_lines == 2
    assert any("samples.jsonl:1: expected a JSON object, found an array" in m for m in msgs)
    assert any("samples.jsonl:5: invalid JSON" in m for m in msgs)


def test_non_utf8(base_run):
    _replace_line(base_run, 6, b'{"bench": "\xff\xfe"}')
    runs, msgs = read([base_run])
    assert runs[0].bad_lines == 1 and any("samples.jsonl:6: not valid UTF-8" in m for m in msgs)
    (base_run / "meta.json").write_bytes(b'{"host": "a\xffb"}')
    runs, msgs = read([base_run])
    assert runs == [] and any("meta.json:1: not valid UTF-8" in m and "run skipped" in m for m in msgs)


def test_many_bad_lines_are_summarised(base_run):
    p = base_run / "samples.jsonl"
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:50] + ["garbage"] * 30 + lines[50:]) + "\n")
    runs, msgs = read([base_run])
    assert runs[0].bad_lines == 30
    assert len([m for m in msgs if "samples.jsonl" in m]) == load.MAX_LINE_WARNINGS + 1
    assert any("25 more bad lines skipped (30 in all)" in m for m in msgs)


def test_meta_is_an_array(base_run, tmp_path):
    (base_run / "meta.json").write_text("[1, 2]")
    runs, msgs = read([base_run])
    assert runs == []
    assert any("meta.json: expected a JSON object, found an array; run skipped" in m for m in msgs)


def test_meta_invalid_json_names_line(base_run):
    (base_run / "meta.json").write_text('{\n"host": "x",\n"kernel_release": \n}')
    runs, msgs = read([base_run])
    assert runs == [] and any("meta.json:4: invalid JSON" in m for m in msgs)


def test_newer_schema_warns_and_reads(base_run):
    meta = json.loads((base_run / "meta.json").read_text())
    meta["schema"] = 99
    meta["new_thing"] = {"a": 1}
    (base_run / "meta.json").write_text(json.dumps(meta))
    obj = _line(base_run, 1)
    obj["schema"] = 99
    obj["future_key"] = [1, 2]
    _replace_line(base_run, 1, json.dumps(obj))
    runs, msgs = read([base_run])
    assert len(runs) == 1 and runs[0].bad_lines == 0
    assert any("meta.json: schema 99 is newer" in m for m in msgs)
    assert any("samples.jsonl:1: schema 99 is newer" in m for m in msgs)


def test_missing_host_falls_back_to_path(base_run):
    meta = json.loads((base_run / "meta.json").read_text())
    del meta["host"]
    meta["kernel_release"] = 5
    (base_run / "meta.json").write_text(json.dumps(meta))
    runs, msgs = read([base_run])
    assert runs[0].host == "testhost" and runs[0].kernel == "6.1.0-base"
    assert any("no usable 'host'" in m for m in msgs)


def test_one_broken_run_does_not_stop_the_others(tmp_path, base_run, fixture_runs):
    (base_run / "meta.json").write_text("")
    import shutil
    shutil.copytree(fixture_runs[1], tmp_path / "results" / "testhost" / "6.6.0-new")
    runs, msgs = read([tmp_path / "results"])
    assert [r.kernel for r in runs] == ["6.6.0-new"]
    assert any("meta.json: empty file; run skipped" in m for m in msgs)


def test_runs_pool_their_reps(tmp_path, gen):
    for seed in (1, 2):
        gen.make_run(tmp_path, "h", "k", seed=seed, reps=3, samples=2, cases="small", run_id=f"run{seed}")
    runs, msgs = read([tmp_path])
    groups = groups_mod.group_runs(runs)
    assert len(groups) == 1 and len(groups[0].runs) == 2
    assert groups[0].cases["lat_syscall null"].n_reps == 6


def test_params_and_natural_order():
    assert runs.parse_params("size_kb=4,stride=64") == {"size_kb": "4", "stride": "64"}
    assert runs.parse_params("") == {}
    assert sorted(["size_kb=16", "size_kb=4"], key=decl.natural_key) == ["size_kb=4", "size_kb=16"]


@pytest.mark.parametrize("damage", ["meta_array", "truncated", "binary", "missing"])
def test_summarize_damaged_input_says_what_is_wrong(base_run, capsys, damage):
    """Each damage gets its own message and exit status, and none is an
    internal error (which would also exit 1 without a traceback)."""
    if damage == "meta_array":
        (base_run / "meta.json").write_text("[]")
    elif damage == "truncated":
        p = base_run / "samples.jsonl"
        p.write_bytes(p.read_bytes()[:-7])
    elif damage == "binary":
        (base_run / "samples.jsonl").write_bytes(bytes(range(256)) * 10)
    target = base_run if damage != "missing" else base_run / "nope"
    rc = summarize_main([str(target)])
    out, err = capsys.readouterr()
    if damage == "truncated":
        assert_clean_exit(rc, err, 0, "samples.jsonl:", "truncated last line")
        assert "null call" in out
    elif damage == "binary":
        assert_clean_exit(rc, err, 0, "samples.jsonl:2: not valid UTF-8; line skipped", "samples.jsonl: no usable samples")
        assert "no usable samples" in out
    elif damage == "meta_array":
        assert_clean_exit(rc, err, 1, f"warning: {target}/meta.json: expected a JSON object, found an array; run skipped",
                          f"summarize: no usable run found in {target}")
    else:
        assert_clean_exit(rc, err, 1, f"warning: {target}: no such file or directory",
                          f"summarize: no usable run found in {target}")
        assert out == ""
