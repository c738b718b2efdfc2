"""make test-vm: scripts/vm-run end to end on a real Debian kernel package in
a QEMU guest (issue 16). Not part of make test: it downloads a kernel
(KBENCH_VM_TEST_KERNEL, default linux-image-cloud-amd64, the current cloud
kernel) and boots it, emulated where KVM cannot run it (a few minutes).

Checks: exit 0, the run directory under <out>/vm-<host>/<guest's release>/
and nothing else there, meta.json (complete, quick, virt, the guest's
release), lat_fs on the guest's ext4 disk, the IPv6 case ran, and the case
list is the host's static suite's for the same selection, every case
ok or skipped with its reason."""
import json
import os
import pathlib
import socket
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNEL = os.environ.get("KBENCH_VM_TEST_KERNEL", "linux-image-cloud-amd64")
ONLY = "^lat_syscall null|^lat_fs create dir=default,mode=fresh,size_kb=0|^lat_udp rt family=ipv6|^lat_pipe rt"


def jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_debian_kernel_in_a_guest(tmp_path):
    out = tmp_path / "results"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "vm-run"), "--out", str(out), "--no-summary",
                        "--limit", "1800", KERNEL, "--", "--quick", "--only", ONLY],
                       stdout=subprocess.PIPE, text=True, timeout=2400)
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
    # The same selection on the host's static suite: the same cases.
    host_run = subprocess.run([str(ROOT / "build" / "static" / "bin" / "kbench-run"), "--quick", "--reps", "1",
                               "--only", ONLY, "--out", str(tmp_path / "host")],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=600)
    host_cases = {c["case"] for c in jsonl(pathlib.Path(host_run.stdout.strip()) / "cases.jsonl")}
    guest_cases = {c["case"] for c in jsonl(run / "cases.jsonl")}
    assert guest_cases == host_cases
    for inv in jsonl(run / "runs.jsonl"):
        assert inv["status"] == "ok" or (inv["status"] == "skipped" and inv["reason"]), inv
