"""make test-campaign: a real campaign (issue 42) in a QEMU guest, kexec and all.

Not part of make test: it downloads two Debian cloud kernels (apt-get
download, never installed here; KBENCH_CAMPAIGN_TEST_KERNELS, comma-separated,
default 6.1.0-57 and 6.12.117+deb12) and boots them emulated (TCG).

The guest is a small machine of its own: an ext4 disk holding a busybox
root (busybox init runs /etc/init.d/rcS, which runs /etc/init.d/S??*: where
the campaign's init-script hook goes), the static suite (make STATIC=1)
under /kbench, and in /boot both kernels, the initramfs that mounts the disk
(with each kernel's virtio modules) and a second initramfs whose init exits
at once, so that the kernel booted with it panics. QEMU boots the 6.1 kernel
with panic=1; on the first boot rcS starts

    kbench-campaign start --rounds 2 A B C -- --quick --only ...

A = 6.1, B = 6.12, C = 6.12 with the panicking initramfs (label panics):
the plan A B C C B A. The campaign runs A, kexecs into B (kexec_file_load
from the static binary, no kexec-tools), runs, kexecs into C, which panics:
the machine resets into 6.1, where the hook finds C failed (the wrong
release booted), goes on with B and A, then reboots into the default kernel
and removes the hook; rcS finds nothing to do and powers off. The state and
the runs are read back from the disk image (debugfs), the page and the
comparison made here (kbench-campaign report), and every boot, step and the
total time printed.
"""
import json
import lzma
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "campaign-test"
KERNELS = os.environ.get("KBENCH_CAMPAIGN_TEST_KERNELS",
                         "linux-image-6.1.0-57-cloud-amd64,linux-image-6.12.117+deb12-cloud-amd64").split(",")
ONLY = "^lat_syscall null$"
# the virtio disk, when the kernel has it as modules, in load order
MODULES = ("virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci", "virtio_blk")
# no_timer_check: under TCG on a busy host the kernel's IO-APIC timer check
# can fail ("IO-APIC + timer doesn't work!", a panic), as it did once here
# for a kexec'd 6.12 while the suite compiled beside it. The campaign passes
# the line on to every kexec'd kernel.
CMDLINE = "console=ttyS0 root=/dev/vda rw panic=1 loglevel=4 no_timer_check"
LIMIT_S = int(os.environ.get("KBENCH_CAMPAIGN_TEST_LIMIT", "2400"))


def say(msg):
    print(f"test-campaign: {msg}", file=sys.stderr, flush=True)


def fetch(name):
    cache = WORK / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    have = sorted(cache.glob(f"{name}_*.deb"))
    if not have:
        say(f"apt-get download {name} (not installed here)")
        subprocess.run(["apt-get", "download", name], cwd=cache, check=True)
        have = sorted(cache.glob(f"{name}_*.deb"))
    assert have, f"{name}: apt-get download left no .deb"
    dest = WORK / "x" / name
    if not dest.is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg-deb", "-x", str(have[-1]), str(dest)], check=True)
    image = next((dest / "boot").glob("vmlinuz-*"))
    release = image.name[len("vmlinuz-"):]
    return image, release, dest / "lib" / "modules" / release


def cpio_gz(src, dest):
    names = subprocess.run(["find", "."], cwd=src, capture_output=True, text=True, check=True).stdout
    data = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=src, input=names.encode(),
                          capture_output=True, check=True).stdout
    import gzip
    with gzip.open(dest, "wb", compresslevel=1) as f:
        f.write(data)


INITRD_INIT = r"""#!/bin/busybox sh
# The test guest's initramfs: the virtio disk's modules for this kernel, then
# the root named by root= on the command line.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
r=$(uname -r)
for m in {modules}; do
    [ -f /lib/modules/$r/$m.ko ] && insmod /lib/modules/$r/$m.ko
done
root=$(sed -n 's/.*root=\([^ ]*\).*/\1/p' /proc/cmdline)
i=0
while [ ! -b "$root" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
mkdir -p /newroot
mount -t ext4 -o rw "$root" /newroot || {{ echo "TEST-INITRD: cannot mount $root"; poweroff -f; }}
umount /proc /sys /dev
exec switch_root /newroot /sbin/init
"""

PANIC_INIT = """#!/bin/busybox sh
echo "TEST-PANIC-INIT: exiting, so that the kernel panics"
exit 1
"""

RCS = r"""#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mkdir -p /sys/kernel/security && mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
ip link set lo up
hostname kbench-guest
echo "TEST-BOOT $(uname -r) up $(cut -d' ' -f1 /proc/uptime) s"
if [ -f /etc/kbench-test-start ]; then
    mv /etc/kbench-test-start /tmp/start && sync
    . /tmp/start
    echo "TEST-START-RC $?"
fi
for s in /etc/init.d/S??*; do
    [ -x "$s" ] && "$s" start
done
echo "TEST-IDLE $(uname -r): no hook left"
sync
poweroff -f
"""


def build_guest(k61, k612):
    subprocess.run(["make", "-C", str(ROOT), "--no-print-directory", "STATIC=1"], check=True)
    static = ROOT / "build" / "static"
    g = WORK / "guest"
    shutil.rmtree(g, ignore_errors=True)
    # the initramfs of both kernels
    ir = g / "initrd"
    for d in ("bin", "proc", "sys", "dev", "newroot"):
        (ir / d).mkdir(parents=True)
    shutil.copy2("/bin/busybox", ir / "bin" / "busybox")
    for _image, rel, moddir in (k61, k612):
        dest = ir / "lib" / "modules" / rel
        dest.mkdir(parents=True)
        for m in MODULES:
            for f in moddir.rglob(f"{m}.ko*"):
                data = f.read_bytes()
                if f.name.endswith(".xz"):
                    data = lzma.decompress(data)
                (dest / f"{m}.ko").write_bytes(data)
    (ir / "init").write_text(INITRD_INIT.format(modules=" ".join(MODULES)))
    (ir / "init").chmod(0o755)
    cpio_gz(ir, g / "initrd.cpio.gz")
    pr = g / "panic"
    (pr / "bin").mkdir(parents=True)
    shutil.copy2("/bin/busybox", pr / "bin" / "busybox")
    (pr / "init").write_text(PANIC_INIT)
    (pr / "init").chmod(0o755)
    cpio_gz(pr, g / "panic.cpio.gz")
    # the disk: the root file system
    rt = g / "root"
    for d in ("bin", "sbin", "etc/init.d", "proc", "sys", "dev", "tmp", "boot", "results", "kbench/bin",
              "kbench/libexec", "root"):
        (rt / d).mkdir(parents=True)
    shutil.copy2("/bin/busybox", rt / "bin" / "busybox")
    applets = subprocess.run(["/bin/busybox", "--list"], capture_output=True, text=True, check=True).stdout.split()
    for a in applets:
        if a != "busybox" and not (rt / "bin" / a).exists():
            os.symlink("busybox", rt / "bin" / a)
    os.symlink("../bin/busybox", rt / "sbin" / "init")
    (rt / "etc" / "inittab").write_text("::sysinit:/etc/init.d/rcS\n")
    (rt / "etc" / "init.d" / "rcS").write_text(RCS)
    (rt / "etc" / "init.d" / "rcS").chmod(0o755)
    for sub in ("bin", "libexec"):
        for f in sorted((static / sub).iterdir()):
            if f.is_file() and os.access(f, os.X_OK):
                subprocess.run(["strip", "-o", str(rt / "kbench" / sub / f.name), str(f)], check=True)
                (rt / "kbench" / sub / f.name).chmod(0o755)
    shutil.copy2(k61[0], rt / "boot" / k61[0].name)
    shutil.copy2(k612[0], rt / "boot" / k612[0].name)
    shutil.copy2(g / "initrd.cpio.gz", rt / "boot" / "initrd.cpio.gz")
    shutil.copy2(g / "panic.cpio.gz", rt / "boot" / "panic.cpio.gz")
    a, b = f"/boot/{k61[0].name}", f"/boot/{k612[0].name}"
    (rt / "etc" / "kbench-test-start").write_text(
        f"/kbench/bin/kbench-campaign start --rounds 2 --results /results --initrd /boot/initrd.cpio.gz "
        f"{a} {b} {b},initrd=/boot/panic.cpio.gz,label=panics -- --quick --no-controls --only '{ONLY}'\n")
    disk = g / "disk.img"
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "kbench", "-d", str(rt), str(disk), "768M"], check=True)
    return disk, g


def boot(kernel, initrd, disk, log):
    cmd = ["qemu-system-x86_64", "-accel", "tcg", "-m", "1024", "-smp", "1", "-display", "none",
           "-serial", "stdio", "-monitor", "none", "-nodefaults",
           "-drive", f"file={disk},format=raw,if=virtio",
           "-kernel", str(kernel), "-initrd", str(initrd),
           "-append", CMDLINE]
    say("qemu: " + " ".join(cmd))
    t0 = time.monotonic()
    events = []
    with open(log, "w") as out:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        try:
            for raw in p.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                t = time.monotonic() - t0
                out.write(f"[{t:8.1f}] {line}\n")
                out.flush()
                if re.search(r"TEST-|kbench-campaign:|Kernel panic|Linux version", line):
                    say(f"[{t:6.1f} s] {line[:200]}")
                    events.append((t, line))
                if t > LIMIT_S:
                    p.kill()
                    raise AssertionError(f"the guest ran past {LIMIT_S} s: {log}")
        finally:
            if p.poll() is None:
                p.kill()
            p.wait()
    return time.monotonic() - t0, events


def read_back(disk, dest):
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    subprocess.run(["debugfs", "-R", f"rdump /results {dest}", str(disk)], check=True, capture_output=True)
    ls = subprocess.run(["debugfs", "-R", "ls -l /etc/init.d", str(disk)], check=True, capture_output=True,
                        text=True).stdout
    return dest / "results", ls


def test_campaign_in_a_guest():
    assert os.geteuid() == 0 or shutil.which("debugfs"), "needs debugfs (e2fsprogs)"
    k61, k612 = (fetch(n) for n in KERNELS[:2])
    disk, g = build_guest(k61, k612)
    log = g / "console.log"
    total, events = boot(k61[0], g / "initrd.cpio.gz", disk, log)
    results, initd = read_back(disk, g / "back")

    states = sorted(results.glob("campaign-*/campaign.json"))
    assert len(states) == 1, f"one campaign: {states} (console: {log})"
    s = json.loads(states[0].read_text())
    kernels = [k["release"] for k in s["kernels"]]
    assert kernels == [k61[1], k612[1], k612[1]]
    assert s["status"] == "finished", s["status"]
    order = "".join("ABC"[p["kernel"]] for p in s["steps"])
    assert order == "ABCCBA"
    st = {i: p["status"] for i, p in enumerate(s["steps"])}
    assert [st[i] for i in range(6)] == ["done", "done", "failed", "failed", "done", "done"], s["steps"]
    assert s["kernels"][0]["status"] == s["kernels"][1]["status"] == "ok"
    assert s["kernels"][2]["status"] == "failed" and "instead of" in s["kernels"][2]["reason"]
    assert s["hook_files"] == [] and "S99kbench-campaign" not in initd, initd
    # each run on its kernel, where the campaign put it
    for p in s["steps"]:
        if p["status"] != "done":
            continue
        run = results / pathlib.Path(p["run_dir"]).relative_to("/results")
        meta = json.loads((run / "meta.json").read_text())
        assert meta["status"] == "complete"
        assert meta["kernel_release"] == kernels[p["kernel"]]
        assert run.parts[-4] == "ABC"[p["kernel"]]
    # the boots the console saw: 6.1, B, (C panics), 6.1, B, A, then the default kernel again
    booted = [re.search(r"TEST-BOOT (\S+)", line).group(1) for _t, line in events if "TEST-BOOT" in line]
    assert booted == [k61[1], k612[1], k61[1], k612[1], k61[1], k61[1]], booted
    assert any("Kernel panic" in line for _t, line in events)
    assert "TEST-IDLE" in events[-1][1]

    # the page and the comparison, here (the guest has no Python)
    r = subprocess.run([str(ROOT / "build" / "bin" / "kbench-campaign"), "report", str(states[0])],
                       capture_output=True, text=True)
    say(r.stdout + r.stderr)
    assert r.returncode == 0
    camp = states[0].parent
    assert (camp / "index.html").is_file()
    comparison = (camp / "comparison.txt").read_text()
    assert k612[1] in comparison and "lat_syscall" in comparison
    print(comparison, file=sys.stderr)

    # the figures
    t_boot = [t for t, line in events if "TEST-BOOT" in line]
    say("boots (seconds since QEMU started, the guest's release):")
    prev = 0.0
    for t, rel in zip(t_boot, booted):
        say(f"  {t:7.1f} s  {rel}  ({t - prev:.1f} s after the previous boot's start)")
        prev = t
    say("steps:")
    for i, p in enumerate(s["steps"]):
        say(f"  {i + 1} {'ABC'[p['kernel']]} {p['status']:6} {p['started']} .. {p['ended']} {p['reason']}")
    say(f"total: {total:.1f} s in the guest (console: {log})")
