"""The one way the tests run the driver (the driver and system layers share
it): kbench-run with its output captured, on the fake benchmarks unless told
otherwise."""
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
