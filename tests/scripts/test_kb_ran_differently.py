"""compare names the cases that ran differently on the two kernels: without an
optional kernel feature on one side only (a sample key whose value is
"unavailable", e.g. lat_pagefault anon on a kernel without transparent huge
pages), or skipped/failed on one side, with the reason."""
import json
import shutil

from kb_helpers import rewrite_samples, set_meta
from kbench.model import compare, load
from kbench.views import compare_text

FAST = compare.Options(n_boot=200)


def side(path, label):
    return compare.Side(label, load.load_runs([path], load.Warnings()))


def other_kernel(base_run, tmp_path):
    other = tmp_path / "o" / "testhost" / "6.1.0-rt" / "r"
    shutil.copytree(base_run, other)
    set_meta(other, kernel_release="6.1.0-rt", run_id="r")
    return other


def test_ran_without_a_feature_on_one_side_is_named(base_run, tmp_path):
    other = other_kernel(base_run, tmp_path)

    def no_thp(o):
        if o["case"] == "lat_proc fork":
            o["thp"] = "unavailable"
        return o
    rewrite_samples(other, no_thp)
    rep = compare.run_compare(side(base_run, "BASE"), side(other, "OTHER"), FAST)
    assert rep.ran_differently == ["lat_proc fork: ran without thp on OTHER"]
    assert "Cases that ran differently on the two sides:\n  lat_proc fork: ran without thp on OTHER" in \
        compare_text.format_report(rep, opts=FAST)
    # the other way round: on the baseline
    rep = compare.run_compare(side(other, "OTHER"), side(base_run, "BASE"), FAST)
    assert rep.ran_differently == ["lat_proc fork: ran without thp on OTHER"]


def test_skipped_on_one_side_is_named_with_the_reason(base_run, tmp_path):
    other = other_kernel(base_run, tmp_path)
    samples = other / "samples.jsonl"
    samples.write_text("".join(ln + "\n" for ln in samples.read_text().splitlines() if "lat_proc exec" not in ln))
    runs = other / "runs.jsonl"
    lines = []
    for ln in runs.read_text().splitlines():
        r = json.loads(ln)
        if r["case"] == "lat_proc exec":
            r.update(status="skipped", exit_code=77, n_samples=0, reason="lat_proc: skipped: no /bin/sh")
        lines.append(json.dumps(r))
    runs.write_text("\n".join(lines) + "\n")
    rep = compare.run_compare(side(base_run, "BASE"), side(other, "OTHER"), FAST)
    assert rep.ran_differently == ["lat_proc exec: skipped on OTHER: lat_proc: skipped: no /bin/sh"]


def test_same_on_both_sides_says_nothing(base_run, tmp_path):
    other = other_kernel(base_run, tmp_path)
    for run in (base_run, other):
        rewrite_samples(run, lambda o: dict(o, thp="unavailable") if o["case"] == "lat_proc fork" else o)
    rep = compare.run_compare(side(base_run, "BASE"), side(other, "OTHER"), FAST)
    assert rep.ran_differently == []
    assert "ran differently" not in compare_text.format_report(rep, opts=FAST)
