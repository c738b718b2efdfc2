"""The LKP program (scripts/lab/lkp, issue 28): parse prints LKP's stats
format (one `key: number` a line, no spaces in keys, each key once) from a
run directory, with lmbench3's keys where a kbench case measures the same
thing; run passes its parameters to kbench-run. On the recorded run in
tests/data (the values checked against the driver's estimate, computed
here) and on small run directories made here. A fresh guest's run: make
test-lava (tests/system/lava_check.py)."""
import gzip
import json
import os
import pathlib
import re
import statistics
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PARSE = ROOT / "scripts" / "lab" / "lkp" / "parse"
RUN = ROOT / "scripts" / "lab" / "lkp" / "run"
RECORDED = ROOT / "tests" / "data" / "recorded" / "vm" / "6.18.44-fc-v669" / "20261130T021918Z-21eab2"
LINE = re.compile(r"([^\s:]+): (-?[0-9]+(?:\.[0-9]+)?)")


def parse(*args, stdin=""):
    return subprocess.run(["/bin/sh", str(PARSE), *map(str, args)], input=stdin, capture_output=True,
                          text=True, timeout=60)


def stats(stdout):
    out = {}
    for line in stdout.splitlines():
        m = LINE.fullmatch(line)
        assert m, f"not a `key: number` line: {line!r}"
        assert m.group(1) not in out, f"key twice: {m.group(1)}"
        out[m.group(1)] = float(m.group(2))
    return out


def estimate(samples, case):
    """The driver's estimate: the median over reps of each rep's median."""
    reps = {}
    for s in samples:
        if s["case"] == case:
            v = s["ns_per_op"] if s["metric"] == "latency" else s["bytes_per_op"] / s["ns_per_op"] * 1000
            reps.setdefault(s["rep_idx"], []).append(v)
    return statistics.median(statistics.median(v) for v in reps.values())


@pytest.fixture(scope="module")
def recorded():
    r = parse(RECORDED)
    assert r.returncode == 0, r.stderr
    samples = [json.loads(line) for line in (RECORDED / "samples.jsonl").read_text().splitlines()]
    return stats(r.stdout), samples


def test_parse_of_a_recorded_run(recorded):
    got, samples = recorded
    lmbench = {k: v for k, v in got.items() if not k.startswith("kbench.")}
    assert len(lmbench) >= 20, sorted(lmbench)
    for key in ("syscall.syscall.latency.us", "PIPE.latency.us", "Select.100fd.latency.us",
                "Process.fork+exit.latency.us", "Mem.Bandwidth.MB/sec", "TCP.localhost.latency"):
        assert key in lmbench
    # Every case that has samples, by its kbench name.
    cases = {s["case"] for s in samples}
    assert len([k for k in got if k.startswith("kbench.")]) == len(cases)
    # Values: the driver's estimate, in lmbench's units.
    assert got["kbench.lat_syscall.null.latency.ns"] == pytest.approx(estimate(samples, "lat_syscall null"), rel=1e-6)
    assert got["syscall.syscall.latency.us"] == pytest.approx(estimate(samples, "lat_syscall null") / 1000, abs=1e-6)
    assert got["Process.fork+exit.latency.us"] == pytest.approx(estimate(samples, "lat_proc fork") / 1000, abs=1e-6)
    bw = estimate(samples, "bw_pipe stream chunk_kb=64 @unpinned")
    assert got["kbench.bw_pipe.stream.chunk_kb-64.unpinned.bandwidth.MB/s"] == pytest.approx(bw, abs=1e-6)
    assert got["PIPE.bandwidth.MB/sec"] == pytest.approx(bw * 1e6 / 2 ** 20, abs=1e-6)      # lmbench's MB


def test_parse_reads_the_run_directory_from_the_programs_output(recorded):
    got, _ = recorded
    r = parse(stdin=f"/x/bin/kbench-run --no-table --out /tmp/lkp/kbench\n{RECORDED}\n")
    assert r.returncode == 0, r.stderr
    assert stats(r.stdout) == got


def test_parse_reads_a_compressed_run(recorded, tmp_path):
    """A run as kbench-run leaves it: samples.jsonl.gz and runs.jsonl.gz."""
    got, _ = recorded
    d = tmp_path / "run"
    d.mkdir()
    for name in ("samples.jsonl", "runs.jsonl"):
        (d / f"{name}.gz").write_bytes(gzip.compress((RECORDED / name).read_bytes()))
    for r in (parse(d), parse(stdin=f"/x/bin/kbench-run --no-table\n{d}\n")):
        assert r.returncode == 0, r.stderr
        assert stats(r.stdout) == got


def write_run(d, runs, samples):
    d.mkdir(parents=True)
    (d / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (d / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    return d


def sample(case, rep, ns, metric="latency", **kw):
    return dict(case=case, rep_idx=rep, ns_per_op=ns, metric=metric, **kw)


def test_parse_context_switches_failures_and_skips(tmp_path):
    ring, ovh = "lat_ctx ring procs=8,size_kb=16 @unpinned", "lat_ctx overhead procs=8,size_kb=16"
    run = write_run(tmp_path / "run", [
        {"case": "lat_syscall null", "status": "ok"},
        {"case": "lat_proc fork", "status": "ok"}, {"case": "lat_proc fork", "status": "timeout"},
        {"case": "lat_udp rt family=ipv6,size=1 @same", "status": "skipped"},
    ], [
        sample(ring, 0, 5000), sample(ring, 0, 5200), sample(ring, 1, 6000),
        sample(ovh, 0, 1000), sample(ovh, 1, 1100), sample(ovh, 1, 1300),
        sample("lat_syscall null", 0, 90), sample("lat_syscall null", 1, 100), sample("lat_syscall null", 2, 95.5),
        sample("lat_proc fork", 0, 120000),
        sample("bw_mem rd size_kb=262144", 0, 4.0, "bandwidth", bytes_per_op=32768),
    ])
    r = parse(run)
    assert r.returncode == 0, r.stderr
    assert stats(r.stdout) == {
        "kbench.lat_ctx.ring.procs-8.size_kb-16.unpinned.latency.ns": 5550.0,   # reps 5100 and 6000
        "kbench.lat_ctx.overhead.procs-8.size_kb-16.latency.ns": 1100.0,        # reps 1000 and 1200
        "kbench.lat_syscall.null.latency.ns": 95.5,
        "kbench.bw_mem.rd.size_kb-262144.bandwidth.MB/s": 8192000.0,
        "kbench.lat_proc.fork.fail": 1.0,                                      # a timeout: no value
        "syscall.syscall.latency.us": 0.0955,
        "CTX.8P.16K.latency.us": 4.45,
        "BCOPY.memory_read.bandwidth.MB/sec": 7812500.0,      # 10^6-byte MB/s in 2^20-byte MB
        "Mem.Bandwidth.MB/sec": 7812500.0,
    }


@pytest.mark.parametrize("args,stdin,message", [
    ((), "no run here\n", "parse: no kbench run directory (with samples.jsonl)\n"),
    (("/no/such/run",), "", "parse: no kbench run directory (with samples.jsonl): /no/such/run\n"),
])
def test_parse_without_a_run(args, stdin, message):
    r = parse(*args, stdin=stdin)
    assert r.returncode == 1 and r.stdout == "" and r.stderr == message


def test_run_passes_its_parameters(tmp_path):
    suite = tmp_path / "kbench"
    (suite / "bin").mkdir(parents=True)
    log = tmp_path / "args"
    (suite / "bin" / "kbench-run").write_text(f"#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > {log}\n"
                                              "echo /the/run/dir\nexit 1\n")
    (suite / "bin" / "kbench-run").chmod(0o755)
    env = dict(os.environ, kbench_dir=str(suite), RESULT_ROOT=str(tmp_path / "result"), quick="1", budget="60",
               only="^lat_syscall null$")
    r = subprocess.run(["/bin/sh", str(RUN)], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr                    # a failed case is reported by parse, not run
    assert r.stdout == "/the/run/dir\n"
    assert log.read_text().splitlines() == ["--no-table", "--out", f"{tmp_path}/result/kbench", "--quick",
                                            "--budget", "60", "--only", "^lat_syscall null$"]
    r = subprocess.run(["/bin/sh", str(RUN)], env=dict(os.environ, kbench_dir=str(tmp_path / "none")),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and f"kbench: no {tmp_path}/none/bin/kbench-run" in r.stderr
