"""scripts/vm-run (make vm-run, issue 16) without a guest: argument errors,
what KERNEL is (image, .deb, package name) and which modules go into the
guest, and what a guest that never sends a complete run leaves behind
(nothing), with a fake qemu-system-x86_64 (tests/fake_qemu/). The real
guest: make test-vm (tests/system/vm_check.py)."""
import gzip
import json
import lzma
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
VM_RUN = ROOT / "scripts" / "vm-run"
FAKE_QEMU = ROOT / "tests" / "fake_qemu" / "qemu-system-x86_64"


def vm_run(*args, env=None, timeout=60):
    e = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, str(VM_RUN), *map(str, args)], capture_output=True, text=True,
                          env=e, timeout=timeout)


def fake_image(path, release="6.9.0-test"):
    """Enough of an x86 boot image: 'HdrS' at 0x202, the version string
    where the header's pointer at 0x20E says."""
    b = bytearray(0x1000)
    b[0x202:0x206] = b"HdrS"
    b[0x20E:0x210] = (0x600 - 0x200).to_bytes(2, "little")
    text = f"{release} (builder@host) #1 SMP\0".encode()
    b[0x600:0x600 + len(text)] = text
    path.write_bytes(bytes(b))
    return path


def fake_arm64_image(path, release="6.9.0-arm64-test", compress=True):
    """Enough of an arm64 kernel Image: the magic 'ARM\\x64' at 0x38 and a
    "Linux version" banner; gzip-compressed as Debian's vmlinuz-*-arm64."""
    b = bytearray(0x2000)
    b[0x38:0x3C] = b"ARM\x64"
    text = f"Linux version {release} (builder@host) #1 SMP PREEMPT\0".encode()
    b[0x1000:0x1000 + len(text)] = text
    path.write_bytes(gzip.compress(bytes(b)) if compress else bytes(b))
    return path


def fake_static_elf(path, machine):
    """A 64-bit little-endian ELF header of MACHINE (0x3E x86_64, 0xB7
    aarch64) with no program header: static to vm-run's eye."""
    h = bytearray(64)
    h[:4] = b"\x7fELF"
    h[4], h[5], h[6] = 2, 1, 1
    h[16:18] = (2).to_bytes(2, "little")
    h[18:20] = machine.to_bytes(2, "little")
    h[0x36:0x38] = (56).to_bytes(2, "little")
    path.write_bytes(bytes(h))
    path.chmod(0o755)
    return path


def module(*info):
    return b"\x7fELF fake module\0" + b"\0".join(i.encode() for i in info) + b"\0"


def fake_deb(tmp_path, release="6.9.0-fake", package="linux-image-6.9.0-fake", arch="amd64"):
    root = tmp_path / "pkg"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(f"Package: {package}\nVersion: 1\nArchitecture: {arch}\n"
                                             "Maintainer: t <t@t>\nDescription: fake kernel\n")
    (root / "boot").mkdir()
    if arch == "arm64":
        fake_arm64_image(root / "boot" / f"vmlinuz-{release}", release)
    else:
        fake_image(root / "boot" / f"vmlinuz-{release}", release)
    mods = root / "lib" / "modules" / release
    (mods / "kernel" / "drivers" / "block").mkdir(parents=True)
    (mods / "kernel" / "drivers" / "virtio").mkdir(parents=True)
    (mods / "kernel" / "drivers" / "block" / "virtio_blk.ko").write_bytes(module("license=GPL", "depends=virtio"))
    (mods / "kernel" / "drivers" / "virtio" / "virtio.ko").write_bytes(module("depends="))
    (mods / "kernel" / "drivers" / "block" / "loop.ko.xz").write_bytes(lzma.compress(module("depends=")))
    (mods / "modules.builtin").write_text("kernel/drivers/virtio/virtio_pci.ko\nkernel/fs/ext4/ext4.ko\n")
    deb = tmp_path / f"{package}_1_{arch}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(root), str(deb)], check=True, capture_output=True)
    return deb


@pytest.mark.parametrize("args,message", [
    ((), "no KERNEL given: make vm-run KERNEL="),
    (("--cpus", "0", "k"), "--cpus (CPUS=) must be a positive whole number, not '0'"),
    (("--cpus", "two", "k"), "--cpus (CPUS=) must be a positive whole number"),
    (("--mem", "lots", "k"), "--mem (MEM=) must be a size such as 2G"),
    (("--limit", "-1", "k"), "--limit must be a positive whole number"),
    (("/no/such/bzImage",), "/no/such/bzImage: no such file"),
    (("missing.deb",), "missing.deb: no such file"),
    (("Not A Package",), "not a file and not a Debian package name"),
    (("--bogus", "k"), "unrecognized arguments: --bogus"),
    (("--arch", "sparc", "k"), "--arch (ARCH=) must be x86_64 or arm64, not 'sparc'"),
    (("--arch", "x86_64", "linux-image-6.1.0-99-arm64"),
     "linux-image-6.1.0-99-arm64 is an arm64 kernel, not x86_64: give ARCH=arm64"),
    (("k", "--", "--quick", "--out", "x"), "kbench-run --out cannot be given to the guest"),
    (("--append", "nopti\nquiet", "k"), "--append (KERNEL_ARGS=) must be one line of kernel options"),
    (("--append", "nopti console=tty0", "k"), "--append console=tty0: vm-run sets console=, panic= and"),
])
def test_usage_errors_exit_2(args, message):
    r = vm_run(*args)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_files_that_are_no_kernel(tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    r = vm_run(tmp_path / "notes.txt")
    assert r.returncode == 2 and "not an x86 kernel image (no boot header 'HdrS') nor an arm64 Image" in r.stderr
    (tmp_path / "bad.deb").write_text("not an archive\n")
    r = vm_run(tmp_path / "bad.deb")
    assert r.returncode == 2 and "bad.deb: not a Debian package (no ar archive)" in r.stderr
    r = vm_run(tmp_path)
    assert r.returncode == 2 and "a directory, not a kernel image" in r.stderr


def test_detects_an_image(tmp_path):
    img = fake_image(tmp_path / "bzImage", "6.13.0-rc1-mine")
    r = vm_run("--dry-run", "--cpus", "3", img)
    assert r.returncode == 0, r.stderr
    assert f"kernel: image {img}: release 6.13.0-rc1-mine, image bzImage" in r.stdout
    assert "3 CPUs, 2G" in r.stdout
    # No modules given: whatever the run needs must be built in; vm-run tries.
    assert "ext4: built in?" in r.stdout and "modules to load: none" in r.stdout


def test_detects_a_deb_and_plans_its_modules(tmp_path):
    deb = fake_deb(tmp_path)
    r = vm_run("--dry-run", deb)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == f"kernel: deb {deb}: release 6.9.0-fake, image vmlinuz-6.9.0-fake"
    assert out[1].startswith("guest host name: vm-")
    assert "disk: virtio (virtio_pci built in, virtio_blk module)" in out
    assert "ext4: built in" in out and "loop: module" in out and "ipv6: missing" in out
    # dependencies first; loop from its .ko.xz
    assert "modules to load: virtio virtio_blk loop" in out


def test_ext4s_crypto_soft_dependency_is_loaded_before_it(tmp_path):
    """Debian's generic and rt kernels: ext4 a module with "softdep=pre:
    crypto-crc32c" (an alias of the crypto API, no module of that name),
    the checksum in crc32c_generic.ko; without it the guest's ext4 cannot
    mount ("Cannot load crc32c driver") and every case ran on tmpfs."""
    deb = fake_deb(tmp_path)
    root = tmp_path / "pkg"
    mods = root / "lib" / "modules" / "6.9.0-fake"
    (mods / "modules.builtin").write_text("kernel/drivers/virtio/virtio_pci.ko\n")
    (mods / "kernel" / "fs" / "ext4").mkdir(parents=True)
    (mods / "kernel" / "crypto").mkdir()
    (mods / "kernel" / "fs" / "ext4" / "ext4.ko").write_bytes(
        module("softdep=pre: crypto-crc32c", "alias=fs-ext4", "depends=jbd2"))
    (mods / "kernel" / "fs" / "jbd2.ko").write_bytes(module("depends="))
    (mods / "kernel" / "crypto" / "crc32c_generic.ko").write_bytes(module("alias=crypto-crc32c", "depends="))
    deb.unlink()
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(root), str(deb)], check=True, capture_output=True)
    r = vm_run("--dry-run", deb)
    assert r.returncode == 0, r.stderr
    assert "ext4: module" in r.stdout.splitlines()
    assert "modules to load: virtio virtio_blk jbd2 crc32c_generic ext4 loop" in r.stdout.splitlines()
    # the older form, "pre: crc32c", finds the same module
    (mods / "kernel" / "fs" / "ext4" / "ext4.ko").write_bytes(module("softdep=pre: crc32c", "depends=jbd2"))
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(root), str(deb)], check=True, capture_output=True)
    r = vm_run("--dry-run", deb)
    assert "modules to load: virtio virtio_blk jbd2 crc32c_generic ext4 loop" in r.stdout.splitlines(), r.stdout


def test_detects_a_package_name_without_downloading():
    r = vm_run("--dry-run", "linux-image-6.1.0-99-cloud-amd64")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "kernel: Debian package linux-image-6.1.0-99-cloud-amd64 (apt-get download, not installed)\n"


def test_detects_an_arm64_image_and_its_architecture(tmp_path):
    """An arm64 Image, plain or gzip-compressed as Debian ships it: its
    release from its banner, the guest qemu-system-aarch64 -M virt; ARCH=
    may say the same but not the opposite."""
    for compress in (True, False):
        img = fake_arm64_image(tmp_path / f"Image{compress:d}", "6.14.0-arm-mine", compress)
        r = vm_run("--dry-run", img)
        assert r.returncode == 0, r.stderr
        out = r.stdout.splitlines()
        assert out[0] == f"kernel: image {img}: release 6.14.0-arm-mine, image {img.name}"
        assert out[-1] == ("architecture: arm64: qemu-system-aarch64 -M virt -cpu max (emulated), console ttyAMA0, "
                           "static suite build/arm64")
        assert "disk: virtio (virtio_pci built in?, virtio_blk built in?)" in out
    assert vm_run("--dry-run", "--arch", "aarch64", img).returncode == 0
    r = vm_run("--dry-run", "--arch", "amd64", img)
    assert r.returncode == 2 and f"{img} is an arm64 kernel, not x86_64: give ARCH=arm64" in r.stderr
    r = vm_run("--dry-run", "--arch", "arm64", fake_image(tmp_path / "bzImage"))
    assert r.returncode == 2 and "is an x86_64 kernel, not arm64: give ARCH=x86_64" in r.stderr


def test_an_arm64_deb_and_package_name(tmp_path):
    deb = fake_deb(tmp_path, "6.9.0-fake-arm64", "linux-image-6.9.0-fake-arm64", arch="arm64")
    r = vm_run("--dry-run", deb)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == f"kernel: deb {deb}: release 6.9.0-fake-arm64, image vmlinuz-6.9.0-fake-arm64"
    # the virt machine has no IDE: virtio or nothing
    assert "disk: virtio (virtio_pci built in, virtio_blk module)" in out
    assert out[-1].startswith("architecture: arm64: qemu-system-aarch64 -M virt")
    r = vm_run("--dry-run", "linux-image-6.1.0-99-cloud-arm64")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("kernel: Debian package linux-image-6.1.0-99-cloud-arm64 (apt-get download, not installed) "
                        "for arm64: qemu-system-aarch64 -M virt\n")


# ---------------------------------------------------------------- a fake guest

@pytest.fixture
def fake_static(tmp_path):
    """A static suite as vm-run copies it (nothing runs it)."""
    d = tmp_path / "static"
    for sub, name in (("bin", "kbench-run"), ("libexec", "kbench-exec-helper")):
        (d / sub).mkdir(parents=True)
        (d / sub / name).write_text("#!/bin/sh\n")
        (d / sub / name).chmod(0o755)
    return d


def fake_run(tmp_path, fake_static, mode, *extra, timeout=60, kvm="missing"):
    out = tmp_path / "results"
    out.mkdir(exist_ok=True)
    (out / "keep").mkdir(exist_ok=True)           # what was there before
    log = tmp_path / "qemu-args.log"
    r = vm_run("--static", fake_static, "--out", out, "--no-summary", "--disk-mb", "8", *extra,
               fake_deb(tmp_path), "--", "--quick",
               env={"KBENCH_VM_QEMU": str(FAKE_QEMU), "FAKE_QEMU_MODE": mode, "FAKE_QEMU_LOG": str(log),
                    "FAKE_QEMU_KVM": kvm},
               timeout=timeout)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return r, out, calls


def entries(out):
    return sorted(str(p.relative_to(out)) for p in out.rglob("*"))


def test_complete_run_is_moved_into_place(tmp_path, fake_static):
    r, out, calls = fake_run(tmp_path, fake_static, "complete")
    assert r.returncode == 0, r.stderr
    run = out / "vm-fake" / "6.9.0-fake" / "20260101T000000Z-abcdef"
    assert r.stdout == f"{run}\n"
    assert sorted(p.name for p in run.iterdir()) == ["cases.jsonl", "meta.json", "runs.jsonl.gz", "samples.jsonl.gz"]
    assert entries(out)[0] == "keep" and not any(".vm-run" in e for e in entries(out))
    # KVM tried first with a probe guest, then emulation, loudly.
    assert [c[c.index("-accel") + 1] for c in calls] == ["kvm", "tcg,thread=multi"]
    assert "KVM probe: qemu-system-x86_64: -accel kvm: failed to initialize kvm" in r.stderr
    assert "WARNING: EMULATED GUEST (QEMU TCG, no KVM)" in r.stderr
    guest = calls[1]
    assert any(a.startswith("file=") and a.endswith(",format=raw,if=virtio") for a in guest)   # the ext4 disk
    assert guest[guest.index("-smp") + 1] == str(max(1, os.cpu_count() - 1))
    assert guest[guest.index("-m") + 1] == "2G"
    # progress and the invocations relayed
    assert "guest: kbench-run: rep 1/2 done" in r.stderr
    assert "guest: fs: ext4 on /dev/vda" in r.stderr
    assert "invocations: 2: 1 ok, 1 skipped" in r.stderr
    assert "  skipped: lat_pipe rt @cross: needs two CPUs" in r.stderr
    assert "  ran without thp: lat_pagefault anon (1 samples)" in r.stderr
    # no --append: the guest's command line is vm-run's own (the probe's is its own too)
    assert guest[guest.index("-append") + 1] == "console=ttyS0 panic=-1 loglevel=4"


def test_a_kvm_that_runs_no_guest_is_emulation(tmp_path, fake_static):
    """A /dev/kvm that opens but runs no guest (nested virtualisation):
    QEMU says "KVM internal error" and stays, its guest paused. The probe
    stops it there (the test's 60 s are the probe's own limit: vm-run
    ending within them is the early stop) and the run is emulated."""
    r, out, calls = fake_run(tmp_path, fake_static, "complete", kvm="internal-error")
    assert r.returncode == 0, r.stderr
    assert [c[c.index("-accel") + 1] for c in calls] == ["kvm", "tcg,thread=multi"]
    assert "KVM probe: KVM internal error. Suberror: 1 (emulation failure)\n" in r.stderr
    assert "WARNING: EMULATED GUEST (QEMU TCG, no KVM)" in r.stderr
    (tmp_path / "kvm").mkdir()
    r, out, calls = fake_run(tmp_path / "kvm", fake_static, "complete", "--accel", "kvm", kvm="internal-error")
    assert r.returncode == 1 and "error: KVM cannot run this kernel here: KVM internal error. Suberror: 1" in r.stderr
    assert "Traceback" not in r.stderr and len(calls) == 1          # the probe only


def test_a_kvm_that_runs_the_probe_runs_the_guest(tmp_path, fake_static):
    r, out, calls = fake_run(tmp_path, fake_static, "complete", kvm="ok")
    assert r.returncode == 0, r.stderr
    assert [c[c.index("-accel") + 1] for c in calls] == ["kvm", "kvm"]
    assert calls[1][calls[1].index("-cpu") + 1] == "host"
    assert "KVM probe" not in r.stderr and "EMULATED" not in r.stderr


def test_append_adds_kernel_options_to_the_guest_only(tmp_path, fake_static):
    r, out, calls = fake_run(tmp_path, fake_static, "complete", "--append", " init_on_free=1  nopti ")
    assert r.returncode == 0, r.stderr
    probe, guest = calls
    assert guest[guest.index("-append") + 1] == "console=ttyS0 panic=-1 loglevel=4 init_on_free=1  nopti"
    assert "init_on_free" not in probe[probe.index("-append") + 1]
    assert ", kernel options init_on_free=1  nopti); console log:" in r.stderr
    img = fake_image(tmp_path / "bzImage")
    r = vm_run("--dry-run", "--append", "mitigations=off", img)
    assert r.returncode == 0 and "kernel command line: console=ttyS0 panic=-1 loglevel=4 mitigations=off\n" in r.stdout


@pytest.mark.parametrize("mode,message", [
    ("truncated", "the transfer of the run directory was cut off (no end marker)"),
    ("incomplete", "the guest's run is not complete (meta.json status: running)"),
    ("panic", "the guest's kernel panicked: Kernel panic - not syncing: fake panic for the test"),
])
def test_no_complete_run_leaves_the_results_root_as_it_was(tmp_path, fake_static, mode, message):
    r, out, _ = fake_run(tmp_path, fake_static, mode)
    assert r.returncode == 3, r.stderr
    assert message in r.stderr and f"Results root {out} unchanged" in r.stderr
    assert entries(out) == ["keep"]
    assert "Traceback" not in r.stderr


def test_hanging_guest_is_killed_at_the_limit(tmp_path, fake_static):
    # The fake guest hangs for ever: vm-run ending at all (within the 30 s
    # the test waits) is the kill; its message says which limit did it.
    r, out, _ = fake_run(tmp_path, fake_static, "hang", "--limit", "2", timeout=30)
    assert r.returncode == 3, r.stderr
    assert "the guest did not finish within --limit 2 s: killed" in r.stderr
    assert "guest: kbench-run: rep 1/2 done" in r.stderr       # relayed while it ran
    assert entries(out) == ["keep"]


def test_sigterm_stops_the_guest(tmp_path, fake_static):
    out = tmp_path / "results"
    out.mkdir()
    p = subprocess.Popen([sys.executable, str(VM_RUN), "--static", str(fake_static), "--out", str(out),
                          "--no-summary", "--disk-mb", "8", "--accel", "tcg", str(fake_deb(tmp_path))],
                         env=dict(os.environ, KBENCH_VM_QEMU=str(FAKE_QEMU), FAKE_QEMU_MODE="hang"),
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    qemu = []
    while time.monotonic() < deadline and not qemu:
        time.sleep(0.2)
        qemu = subprocess.run(["pgrep", "-P", str(p.pid), "-f", "fake_qemu"], capture_output=True,
                              text=True).stdout.split()
    assert qemu, "the fake guest never started"
    p.send_signal(signal.SIGTERM)
    err = p.communicate(timeout=20)[1]
    assert p.returncode == 130
    assert "interrupted: the guest is stopped; the results root is unchanged" in err
    for pid in qemu:
        assert not pathlib.Path(f"/proc/{pid}").exists() or \
            pathlib.Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    assert list(out.iterdir()) == []


def test_an_arm64_guest_sends_its_run_back_on_the_console(tmp_path, fake_static):
    """arm64: qemu-system-aarch64 -M virt -cpu max (emulated on this machine,
    no KVM probe), the console on ttyAMA0 and the only serial port, the run
    back between the console's data markers, which are not relayed."""
    out = tmp_path / "results"
    log = tmp_path / "qemu-args.log"
    busybox = fake_static_elf(tmp_path / "busybox", 0xB7)
    deb = fake_deb(tmp_path, "6.9.0-fake-arm64", "linux-image-6.9.0-fake-arm64", arch="arm64")
    r = vm_run("--static", fake_static, "--out", out, "--no-summary", "--disk-mb", "8", "--busybox", busybox,
               deb, "--", "--quick",
               env={"KBENCH_VM_QEMU": str(FAKE_QEMU), "FAKE_QEMU_MODE": "complete", "FAKE_QEMU_LOG": str(log)})
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{out / 'vm-fake' / '6.9.0-fake' / '20260101T000000Z-abcdef'}\n"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 1                                  # no KVM probe for another architecture
    guest = calls[0]
    assert guest[:2] == ["-M", "virt"] and guest[guest.index("-cpu") + 1] == "max,pauth-impdef=on"
    assert guest[guest.index("-accel") + 1] == "tcg,thread=multi"
    assert "console=ttyAMA0 " in guest[guest.index("-append") + 1]
    assert guest.count("-serial") == 1 and len([a for a in guest if a.startswith("file:")]) == 1
    assert "KVM runs only its own architecture" in r.stderr and "WARNING: EMULATED GUEST" in r.stderr
    assert "guest: sending the run back on the console" in r.stderr
    assert "KBENCH-DATA" not in r.stderr and "H4sI" not in r.stderr       # no archive on the terminal


def test_an_arm64_guest_refuses_x86_binaries(tmp_path):
    static = tmp_path / "static"
    (static / "bin").mkdir(parents=True)
    fake_static_elf(static / "bin" / "kbench-run", 0x3E)
    busybox = fake_static_elf(tmp_path / "busybox", 0xB7)
    r = vm_run("--static", static, "--out", tmp_path / "results", "--busybox", busybox,
               fake_arm64_image(tmp_path / "Image"), env={"KBENCH_VM_QEMU": str(FAKE_QEMU)})
    assert r.returncode == 1
    assert f"{static} holds x86_64 binaries; an arm64 guest needs its own: make STATIC=1 ARCH=arm64" in r.stderr
    assert "Traceback" not in r.stderr


def test_reference_table_is_the_help():
    ref = (ROOT / "src" / "reference" / "vm-and-lab.md").read_text()
    sec = ref.split("\n## Another kernel in a guest (`make vm-run`)\n", 1)[1].split("\n## ", 1)[0]
    documented = {m for ln in sec.splitlines() if ln.startswith("| `--")
                  for m in re.findall(r"--[a-z][a-z0-9-]*", ln.split("|")[1])}
    helptext = vm_run("--help").stdout
    listed = set(re.findall(r"^  (--[a-z][a-z0-9-]*)", helptext, re.M)) - {"--help"}
    assert documented == listed
