"""A finished run's samples.jsonl and runs.jsonl are gzip-compressed, and
nothing measured is ever lost on the way: gzip missing, failing or killed
leaves the plain files; the driver killed in the middle of it leaves a run
that the scripts read and --resume finishes. A fake `gzip` first on the PATH
plays each failure (it runs the real one when asked to)."""
import gzip
import os
import shutil
import signal
import subprocess
import sys

import pytest

from driver_runner import FAKES, run_dir_of, run_driver, run_lines

ROOT = FAKES.parent.parent
ARGS = ["--only", "^fake_good", "--reps", "2", "--no-controls", "--no-table"]
PLAIN = ["cases.jsonl", "meta.json", "runs.jsonl", "samples.jsonl"]
COMPRESSED = ["cases.jsonl", "meta.json", "runs.jsonl.gz", "samples.jsonl.gz"]
REAL_GZIP = shutil.which("gzip")


def fake_gzip(tmp_path, body):
    """A directory holding a `gzip` that runs BODY (sh), for the PATH."""
    d = tmp_path / "fakebin"
    d.mkdir()
    g = d / "gzip"
    g.write_text(f"#!/bin/sh\n{body}\n")
    g.chmod(0o755)
    return {"PATH": f"{d}:{os.environ['PATH']}", "REAL_GZIP": REAL_GZIP or "/nonexistent"}


def names(run_dir):
    return sorted(p.name for p in run_dir.iterdir())


def summarize(run_dir):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "summarize"), "--per-run", str(run_dir)],
                          capture_output=True, text=True, timeout=300)


def test_a_finished_run_is_compressed_and_reads_the_same(driver, tmp_path):
    proc = run_driver(driver, *ARGS, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    run = run_dir_of(proc)
    assert names(run) == COMPRESSED
    samples = run_lines(run, "samples.jsonl")
    assert len(samples) == 2 * 2 * 3 and len(run_lines(run, "runs.jsonl")) == 2 * 2
    # the same run, decompressed by hand, summarizes to the same text
    plain = tmp_path / "plain" / run.name
    shutil.copytree(run, plain)
    for name in ("samples.jsonl", "runs.jsonl"):
        gz = plain / f"{name}.gz"
        (plain / name).write_bytes(gzip.decompress(gz.read_bytes()))
        gz.unlink()
    a, b = summarize(run), summarize(plain)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert a.stdout.replace(str(run), "RUN") == b.stdout.replace(str(plain), "RUN")


@pytest.mark.parametrize("body, why", [
    ("exit 1", "gzip exited with status 1"),
    # killed part-way through its output, as a second Ctrl-C or the OOM killer would
    ('"$REAL_GZIP" "$@" | head -c 20; kill -9 $$', "gzip killed by signal 9"),
])
def test_gzip_failing_leaves_the_plain_files(driver, tmp_path, body, why):
    env = fake_gzip(tmp_path, body)
    proc = run_driver(driver, *ARGS, "--out", tmp_path / "out", env=env)
    assert proc.returncode == 0, proc.stderr
    run = run_dir_of(proc)
    assert names(run) == PLAIN, "a temporary or a half-written .gz was left"
    assert f"samples.jsonl left uncompressed: {why}" in proc.stderr
    assert len(run_lines(run, "samples.jsonl")) == 2 * 2 * 3
    assert summarize(run).returncode == 0


def test_no_gzip_at_all_leaves_the_plain_files(driver, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_driver(driver, *ARGS, "--out", tmp_path / "out", env={"PATH": str(empty)})
    assert proc.returncode == 0, proc.stderr
    assert names(run_dir_of(proc)) == PLAIN
    assert "runs.jsonl left uncompressed: no gzip found" in proc.stderr


@pytest.mark.skipif(REAL_GZIP is None, reason="no gzip on this machine")
@pytest.mark.parametrize("when", ["writing", "after"])
def test_driver_killed_while_compressing(driver, tmp_path, when):
    """The driver killed (SIGKILL) while gzip writes samples.jsonl's
    temporary, or after it has become samples.jsonl.gz but before the plain
    file is removed: every sample stays readable, the scripts read the run,
    and --resume leaves one complete compressed copy of each file."""
    if when == "writing":
        body = 'case "$*" in *-d*) exec "$REAL_GZIP" "$@";; esac\n"$REAL_GZIP" "$@" | head -c 10; kill -9 $PPID'
    else:
        # the driver's rename comes after gzip; here gzip writes the final name itself, then the driver dies
        body = ('case "$*" in *-d*) exec "$REAL_GZIP" "$@";; esac\n'
                'd=$(dirname "$(readlink /proc/$$/fd/1)"); "$REAL_GZIP" "$@" > "$d/samples.jsonl.gz"; kill -9 $PPID')
    env = fake_gzip(tmp_path, body)
    proc = run_driver(driver, *ARGS, "--out", tmp_path / "out", env=env)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    run = next((tmp_path / "out").glob("*/*/*"))
    left = names(run)
    assert "samples.jsonl" in left and "runs.jsonl" in left
    if when == "writing":
        assert any(n.startswith("samples.jsonl.gz.tmp.") for n in left), left
    else:
        assert "samples.jsonl.gz" in left, left
    before = run_lines(run, "samples.jsonl")
    assert len(before) == 2 * 2 * 3
    assert summarize(run).returncode == 0
    resumed = run_driver(driver, "--resume", run, "--no-table", bin_dir=None)
    assert resumed.returncode == 0, resumed.stderr
    assert names(run) == COMPRESSED
    assert run_lines(run, "samples.jsonl") == before


def test_resume_of_a_compressed_run_without_gzip_fails_cleanly(driver, tmp_path):
    proc = run_driver(driver, *ARGS, "--out", tmp_path / "out")
    run = run_dir_of(proc)
    empty = tmp_path / "empty"
    empty.mkdir()
    again = run_driver(driver, "--resume", run, "--no-table", bin_dir=None, env={"PATH": str(empty)})
    assert again.returncode == 1
    assert "cannot decompress" in again.stderr and "no gzip found" in again.stderr
    assert names(run) == COMPRESSED        # nothing lost, nothing half-made
    assert len(run_lines(run, "samples.jsonl")) == 2 * 2 * 3
