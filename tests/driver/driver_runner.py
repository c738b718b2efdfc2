"""The one way the tests run the driver (the driver and system layers share
it): kbench-run with its output captured, on the fake benchmarks unless told
otherwise."""
import gzip
import json
import os
import pathlib
import subprocess

FAKES = pathlib.Path(__file__).resolve().parent.parent / "fake_bench"


def run_driver(driver, *args, bin_dir=FAKES, env=None, timeout=120, **kw):
    """kbench-run [--bin-dir BIN_DIR] ARGS; env: variables added to ours.
    Returns the CompletedProcess (text)."""
    cmd = [str(driver)] + (["--bin-dir", str(bin_dir)] if bin_dir else []) + [str(a) for a in args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})), **kw)


def run_dir_of(proc):
    """The run directory: the driver's only line on stdout."""
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, f"stdout should be the run dir only: {proc.stdout!r} {proc.stderr}"
    return pathlib.Path(lines[0])


def run_text(run_dir, name):
    """The text of a run directory's NAME (samples.jsonl, runs.jsonl): the
    file itself, else NAME.gz decompressed (kbench-run compresses both once
    a run has ended), else ""."""
    plain = pathlib.Path(run_dir) / name
    if plain.exists():
        return plain.read_text()
    gz = plain.with_name(name + ".gz")
    return gzip.decompress(gz.read_bytes()).decode() if gz.exists() else ""


def run_lines(run_dir, name):
    """The JSON objects of a run directory's NAME, plain or compressed."""
    return [json.loads(line) for line in run_text(run_dir, name).splitlines() if line.strip()]
