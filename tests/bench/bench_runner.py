"""The one way the tests run a benchmark binary (the bench and harness
layers share it): by path under the build's bin directory, output captured,
samples parsed."""
import json
import os
import subprocess


def run_bench(bin_dir, name, args, tmpdir=None, env=None, timeout=120, **kw):
    """Run bin_dir/name with args; TMPDIR=tmpdir if given, env added to ours.
    Returns the CompletedProcess (text)."""
    e = dict(os.environ, **(env or {}))
    if tmpdir is not None:
        e["TMPDIR"] = str(tmpdir)
    return subprocess.run([str(bin_dir / name)] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=e, **kw)


def samples_of(stdout):
    """The sample objects of a binary's stdout (one JSON object per line)."""
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def run_samples(bin_dir, name, args, **kw):
    """(CompletedProcess, samples): the samples only when it exited 0."""
    proc = run_bench(bin_dir, name, args, **kw)
    return proc, samples_of(proc.stdout) if proc.returncode == 0 else []


def list_cases(bin_dir, name):
    """The binary's --list lines as objects (it must exit 0 and list a case)."""
    r = run_bench(bin_dir, name, ["--list"], timeout=30)
    assert r.returncode == 0, f"{name} --list: exit {r.returncode}: {r.stderr}"
    cases = samples_of(r.stdout)
    assert cases, f"{name} --list printed no case"
    return cases


def fixed(iters=5, samples=2):
    """Options for exact counts and no warm-up: --iters N --samples S."""
    return ["--iters", str(iters), "--samples", str(samples), "--warmup-ms", "0"]
