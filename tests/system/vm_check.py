"""make test-vm: scripts/vm-run end to end on a real Debian kernel package in
a QEMU guest (issue 16). Not part of make test: it downloads a kernel
(KBENCH_VM_TEST_KERNEL, default linux-image-cloud-amd64, the current cloud
kernel) and boots it, emulated where KVM cannot run it (a few minutes).
make test-vm-arm64 (KBENCH_VM_TEST_ARCH=arm64, issue 31): the same for an
arm64 kernel package (default linux-image-cloud-arm64) under
qemu-system-aarch64, emulated here (14 s on a 2-vCPU VM once downloaded).

Checks: exit 0, the run directory under <out>/vm-<host>/<guest's release>/
and nothing else there, meta.json (complete, quick, virt, the guest's
release; on arm64 the architecture, the binaries' and a CPU model read from
the cores' implementer and part), lat_fs on the guest's ext4 disk, the IPv6
case ran, and the case list is the host's static suite's for the same
selection (arm64: this machine's build's kbench-run --list, the same source),
every case ok or skipped with its reason."""
import json
import os
import pathlib
import re
import socket
import subprocess
import sys

from driver_runner import run_lines

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARCH = os.environ.get("KBENCH_VM_TEST_ARCH", "x86_64")
KERNEL = os.environ.get("KBENCH_VM_TEST_KERNEL",
                        "linux-image-cloud-arm64" if ARCH == "arm64" else "linux-image-cloud-amd64")
ONLY = "^lat_syscall null|^lat_fs create dir=default,mode=fresh,size_kb=0|^lat_udp rt family=ipv6|^lat_pipe rt"
if ARCH == "arm64":
    # and what the page size and the spin-wait hint touch
    ONLY += "|^lat_pagefault anon|^lat_proc fork$|^lat_syscall open"


def jsonl(path):
    """PATH's JSON objects: a run's samples and runs compressed as kbench-run leaves them."""
    return run_lines(path.parent, path.name)


def test_a_debian_kernel_in_a_guest(tmp_path):
    out = tmp_path / "results"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "vm-run"), "--out", str(out), "--no-summary",
                        "--arch", ARCH, "--limit", "3000", KERNEL, "--", "--quick", "--only", ONLY],
                       stdout=subprocess.PIPE, text=True, timeout=3600)
    assert r.returncode == 0
    run = pathlib.Path(r.stdout.strip())
    host = "vm-" + socket.gethostname().split(".")[0]
    assert run.parent.parent == out / host
    assert [p.name for p in out.iterdir()] == [host]           # no staging left
    meta = json.loads((run / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["quick"] is True
    assert meta["virt"] in ("emulated", "kvm")
    assert meta["host"] == host and meta["kernel_release"] == run.parent.name
    samples = jsonl(run / "samples.jsonl")
    fs = {s.get("fs_type") for s in samples if s["bench"] == "lat_fs"}
    assert fs == {"ext4"}, fs
    assert any(s["bench"] == "lat_udp" and "family=ipv6" in s["params"] for s in samples)
    guest_cases = {c["case"] for c in jsonl(run / "cases.jsonl")}
    if ARCH == "arm64":
        assert meta["arch"] == "aarch64" and meta["build_arch"] == "aarch64", (meta["arch"], meta["build_arch"])
        assert meta["page_size"] in (4096, 16384, 65536)
        # no "model name" on arm64: the cores' implementer and part name the CPU
        assert re.search(r"\(0x[0-9a-f]{2}/0x[0-9a-f]{3}( r\d+p\d+)?\)", meta["cpu_model"] or ""), meta["cpu_model"]
        # Every case this machine's build (make all) lists, and the
        # selection: the same source, so a case the arm64 guest lacks is
        # one lost there.
        def listed(*only):
            r = subprocess.run([str(ROOT / "build" / "bin" / "kbench-run"), "--list", "--quick", *only],
                               stdout=subprocess.PIPE, text=True, timeout=600)
            assert r.returncode == 0
            return {line for line in r.stdout.splitlines() if line and not line.startswith("#")}
        host_cases = listed()
        assert {i["case"] for i in jsonl(run / "runs.jsonl")} == listed("--only", ONLY)
    else:
        # The same selection on the host's static suite: the same cases.
        host_run = subprocess.run([str(ROOT / "build" / "static" / "bin" / "kbench-run"), "--quick", "--reps", "1",
                                   "--only", ONLY, "--out", str(tmp_path / "host")],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=600)
        host_cases = {c["case"] for c in jsonl(pathlib.Path(host_run.stdout.strip()) / "cases.jsonl")}
    assert guest_cases == host_cases
    for inv in jsonl(run / "runs.jsonl"):
        assert inv["status"] == "ok" or (inv["status"] == "skipped" and inv["reason"]), inv
