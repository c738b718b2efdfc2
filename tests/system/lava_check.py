"""make test-lava (issue 28): a real LAVA dispatcher (Debian's lava-dispatcher,
lava-run) runs the kbench job template with the kbench test definition on a
QEMU guest here (scripts/lab/lava/lava-local): a Debian cloud kernel
package, a busybox initramfs, the static suite as LAVA's overlay, a quick
subset of cases and a planted failing benchmark (tests/fake_bench/fake_fail).
Not part of make test: it installs packages, downloads a kernel and boots
it, emulated where there is no KVM (a few minutes).

Checks, from LAVA's own results in the job's log (YAML, `lvl: results`):
every selected case is a test case of the kbench definition, in the test
set of its benchmark, passed with a numeric measurement and units; the
planted failure is `fail`; the run directory came back complete, and loads
in scripts/summarize; the LKP parse of that fresh run gives lmbench3's keys
for at least 20 of its cases."""
import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNEL = os.environ.get("KBENCH_LAVA_TEST_KERNEL", "linux-image-cloud-amd64")
# 21 cases, every one the source of an lmbench3 key of the LKP parse
# (CTX.2P.0K from two of them), and the planted failure.
CASES = ["lat_syscall null", "lat_syscall read", "lat_syscall write", "lat_syscall stat", "lat_syscall fstat",
         "lat_syscall open", "lat_select select fds=100,type=file", "lat_select select fds=100,type=tcp",
         "lat_proc fork", "lat_proc exec", "lat_proc shell", "lat_pipe rt @unpinned",
         "bw_pipe stream chunk_kb=64 @unpinned", "lat_unix rt @unpinned", "bw_unix stream chunk_kb=64 @unpinned",
         "lat_udp rt family=ipv4,size=1 @unpinned", "lat_tcp rt family=ipv4,size=1 @unpinned",
         "lat_connect connect family=ipv4 @unpinned", "lat_pagefault file",
         "lat_ctx ring procs=2,size_kb=0 @unpinned", "lat_ctx overhead procs=2,size_kb=0"]
ONLY = "^(" + "|".join(c.replace("+", "[+]") for c in CASES) + "|fake_fail open)$"


def lava_id(case):
    return re.sub(r"[ ,]+", ".", case.replace("@", "").replace("=", "-"))


def test_a_lava_job_on_a_qemu_guest(tmp_path):
    work, out = tmp_path / "work", tmp_path / "results"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "lab" / "lava" / "lava-local"), "--kernel", KERNEL,
                        "--only", ONLY, "--quick", "--extra=--no-controls", "--plant-failure",
                        "--work", str(work), "--out", str(out)],
                       stdout=subprocess.PIPE, text=True, timeout=3600)
    log = (work / "lava.log").read_text(errors="replace") if (work / "lava.log").exists() else ""
    print(f"lava-run took {(work / 'seconds').read_text().strip() if (work / 'seconds').exists() else '?'} s")
    assert r.returncode == 0, log[-5000:]
    results = json.loads((work / "results.json").read_text())
    job = [x for x in results if x["definition"] == "lava" and x["case"] == "job"]
    assert job and job[0]["result"] == "pass", job
    kbench = {x["case"]: x for x in results if x["definition"].endswith("kbench")}
    for case in CASES:
        x = kbench.get(lava_id(case))
        assert x, f"{case} ({lava_id(case)}) missing from LAVA's results: {sorted(kbench)}"
        assert x["result"] == "pass", x
        assert isinstance(x["measurement"], float) and x["measurement"] > 0, x
        assert x["units"] in ("ns/op", "MB/s"), x
        assert x["set"] == case.split()[0], x
    assert kbench["fake_fail.open"]["result"] == "fail"
    assert "kbench-run: lava: fake_fail.open: fail: exit 1: fake_fail: open /nonexistent/file" in log
    assert len(kbench) == len(CASES) + 1, sorted(kbench)
    # The run directory, back and complete.
    run = pathlib.Path(r.stdout.strip().splitlines()[-1])
    assert run.parent.parent.parent == out and (run / "meta.json").is_file()
    meta = json.loads((run / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["host"] == "lava-qemu" and meta["virt"] in ("emulated", "kvm")
    s = subprocess.run([sys.executable, str(ROOT / "scripts" / "summarize"), str(run)], capture_output=True,
                       text=True, timeout=600)
    assert s.returncode in (0, 1), s.stderr          # 1: a case failed (the planted one)
    assert "fake_fail open" in s.stdout + s.stderr
    # LKP's parse of this fresh run: lmbench3's keys.
    p = subprocess.run(["/bin/sh", str(ROOT / "scripts" / "lab" / "lkp" / "parse"), str(run)], capture_output=True,
                       text=True, timeout=60)
    keys = [line.split(": ")[0] for line in p.stdout.splitlines()]
    assert all(re.fullmatch(r"[^\s:]+: -?[0-9.]+", line) for line in p.stdout.splitlines())
    lmbench = [k for k in keys if not k.startswith("kbench.")]
    print(f"LKP parse: {len(lmbench)} lmbench3 keys: {' '.join(lmbench)}")
    assert len(lmbench) >= 20, lmbench
