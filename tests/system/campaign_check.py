"""make test-campaign: real campaigns (issues 42 and 59) in a QEMU guest,
kexec, watchdog and all.

Not part of make test: it downloads two Debian cloud kernels (apt-get
download, never installed here; KBENCH_CAMPAIGN_TEST_KERNELS, comma-separated,
default 6.1.0-57 and 6.12.117+deb12) and boots them emulated (TCG).

The guest is a small machine of its own: an ext4 disk holding a busybox
root (busybox init runs /etc/init.d/rcS, which runs /etc/init.d/S??*: where
the campaign's init-script hook goes), the static suite under /kbench, both
kernels in /boot with the initramfs that mounts the disk, and initramfs
images that fail: one whose init exits (the kernel panics), one whose init
never ends (the boot never reaches the hook), one whose init reboots through
the firmware (a kexec that fell back to a normal reboot). QEMU boots 6.12
(the default kernel: it has the i6300esb watchdog's driver as a module) with
an i6300esb, and no panic= on its command line: the campaign adds what every
test boot needs.

First boot, under lockdown=integrity: an image without its signature is
refused by the trial load before anything reboots, the errno named; a
kernel without an initrd is refused at plan time. Then the campaign, ROUNDS=1:

    A = 6.12                      runs
    B = 6.1                       runs
    C = 6.1, init exits           panics twice (panic=10): failed
    D = 6.12, label patched,      reboots through the firmware twice into the
        init reboots              default 6.12: no marker, failed, never measured
    E = 6.12, init never ends     reset twice by the watchdog: failed
    F = 6.12, label hangs         its kbench-run never ends: past the deadline
                                  the machine goes home, the step failed

started from a session that is hung up right after start; QEMU is killed
once in the middle of A's step and once between B's step and C's boot. The
state, the hook and the runs are read back from the disk image (debugfs),
each checked, the page and the comparison made here (kbench-campaign
report), and every boot, every kexec's boot-to-boot time, every step and
the total time printed.
"""
import json
import lzma
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "campaign-test"
KERNELS = os.environ.get("KBENCH_CAMPAIGN_TEST_KERNELS",
                         "linux-image-6.1.0-57-cloud-amd64,linux-image-6.12.117+deb12-cloud-amd64").split(",")
ONLY = "^lat_syscall null$"
# the virtio disk, when the kernel has it as modules, in load order
MODULES = ("virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci", "virtio_blk")
# no_timer_check: under TCG on a busy host the kernel's IO-APIC timer check
# can fail ("IO-APIC + timer doesn't work!", a panic). No panic=: every test
# boot gets panic=10 oops=panic softlockup_panic=1 from the campaign itself.
CMDLINE = "console=ttyS0 root=/dev/vda rw loglevel=4 no_timer_check"
LIMIT_S = int(os.environ.get("KBENCH_CAMPAIGN_TEST_LIMIT", "3600"))
WATCHDOG_S = 120   # the margin of a boot: kexec, boot, hook (TCG boots take 10-40 s here)
DEADLINE_S = 150   # a quick step takes 5-25 s here


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


def unsigned_copy(image, dest):
    """The image without its Authenticode signature: the PE certificate
    table's entry zeroed and the signature cut off the end."""
    data = bytearray(image.read_bytes())
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    assert data[pe:pe + 4] == b"PE\0\0", f"{image}: not a PE image"
    opt = pe + 24
    entry = opt + (112 if struct.unpack_from("<H", data, opt)[0] == 0x20B else 96) + 4 * 8
    offset, size = struct.unpack_from("<II", data, entry)
    assert size > 0, f"{image}: not signed"
    struct.pack_into("<II", data, entry, 0, 0)
    dest.write_bytes(bytes(data[:offset]))


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

# what a failing boot's initramfs does, by name
FAILING_INITS = {
    "panic": "echo 'TEST-PANIC-INIT: exiting, so that the kernel panics'\nexit 1\n",
    # never reaches the hook: only the watchdog brings the machine home
    "stuck": ("/bin/busybox mount -t proc proc /proc\n"
              "echo 'TEST-STUCK-INIT: this boot never reaches its hook'\n"
              "while :; do /bin/busybox sleep 20; echo \"TEST-STUCK-INIT still here, up $(/bin/busybox cut -d' ' -f1 /proc/uptime) s\"; done\n"),
    # a kexec that failed and fell back to a normal reboot (systemd does so quietly)
    "fallback": "echo 'TEST-FALLBACK-INIT: rebooting through the firmware'\n/bin/busybox reboot -f\n",
}

# kbench-run for the campaign: the real one, except for the kernel labelled
# "hangs", whose step never ends (a benchmark stuck in a kernel bug)
KBENCH_RUN = r"""#!/bin/sh
case " $* " in *" --label hangs "*) echo "TEST-HANGING-STEP: never ends" >&2; exec sleep 100000 ;; esac
exec /kbench/bin/kbench-run "$@"
"""

RCS = r"""#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /sys/kernel/security && mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
ip link set lo up
hostname kbench-guest
echo "TEST-BOOT $(uname -r) up $(cut -d' ' -f1 /proc/uptime) s"
echo "TEST-CMDLINE $(cat /proc/cmdline)"
if [ -f /etc/kbench-test-lockdown ]; then
    mv /etc/kbench-test-lockdown /tmp/lockdown && sync
    . /tmp/lockdown
    sync
    poweroff -f
fi
if [ -f /etc/kbench-test-start ]; then
    mv /etc/kbench-test-start /tmp/start && sync
    # start in a session of its own, as over SSH; the session hangs up as soon
    # as start has written its state, and again until start is gone
    setsid sh -c 'echo $$ > /tmp/start.pid; exec sh /tmp/start' &
    while [ -z "$(ls /results/campaign-*/campaign.json 2>/dev/null)" ] && [ -d /proc/$! ]; do sleep 0.05; done
    pid=$(cat /tmp/start.pid)
    n=0
    while [ -d /proc/$pid ] && [ $n -lt 200 ]; do kill -HUP -$pid 2>/dev/null; n=$((n + 1)); sleep 0.05; done
    echo "TEST-HUNG-UP the start session ($n times)"
    sleep 1200
    echo "TEST-NO-REBOOT"
    poweroff -f
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
    for name, body in FAILING_INITS.items():
        fr = g / name
        (fr / "bin").mkdir(parents=True)
        (fr / "proc").mkdir()
        shutil.copy2("/bin/busybox", fr / "bin" / "busybox")
        (fr / "init").write_text("#!/bin/busybox sh\n" + body)
        (fr / "init").chmod(0o755)
        cpio_gz(fr, g / f"{name}.cpio.gz")
    # the disk: the root file system
    rt = g / "root"
    for d in ("bin", "sbin", "etc/init.d", "proc", "sys", "dev", "tmp", "run", "boot", "results", "kbench/bin",
              "kbench/libexec", "kbench/testbin", "root", "usr/local/sbin"):
        (rt / d).mkdir(parents=True)
    shutil.copy2("/bin/busybox", rt / "bin" / "busybox")
    applets = subprocess.run(["/bin/busybox", "--list"], capture_output=True, text=True, check=True).stdout.split()
    for a in applets:
        if a != "busybox" and not (rt / "bin" / a).exists():
            os.symlink("busybox", rt / "bin" / a)
    os.symlink("../bin/busybox", rt / "sbin" / "init")
    (rt / "etc" / "inittab").write_text("::sysinit:/etc/init.d/rcS\n::shutdown:/bin/umount -a -r\n")
    (rt / "etc" / "init.d" / "rcS").write_text(RCS)
    (rt / "etc" / "init.d" / "rcS").chmod(0o755)
    for sub in ("bin", "libexec"):
        for f in sorted((static / sub).iterdir()):
            if f.is_file() and os.access(f, os.X_OK):
                subprocess.run(["strip", "-o", str(rt / "kbench" / sub / f.name), str(f)], check=True)
                (rt / "kbench" / sub / f.name).chmod(0o755)
    (rt / "kbench" / "testbin" / "kbench-run").write_text(KBENCH_RUN)
    (rt / "kbench" / "testbin" / "kbench-run").chmod(0o755)
    # the 6.12 kernel's watchdog modules, for busybox's modprobe; the 6.1 cloud kernel has no i6300esb
    for _image, rel, moddir in (k61, k612):
        mods = rt / "lib" / "modules" / rel
        (mods / "kernel/drivers/watchdog").mkdir(parents=True)
        dep = []
        for m, deps in (("watchdog", ""), ("i6300esb", " kernel/drivers/watchdog/watchdog.ko")):
            src = list(moddir.rglob(f"{m}.ko*"))
            if m == "i6300esb" and not src:
                continue
            data = src[0].read_bytes()
            (mods / "kernel/drivers/watchdog" / f"{m}.ko").write_bytes(
                lzma.decompress(data) if src[0].name.endswith(".xz") else data)
            dep.append(f"kernel/drivers/watchdog/{m}.ko:{deps}")
        (mods / "modules.dep").write_text("\n".join(dep) + "\n")
    for image, _rel, _m in (k61, k612):
        shutil.copy2(image, rt / "boot" / image.name)
    unsigned_copy(k61[0], rt / "boot" / "vmlinuz-unsigned")
    for name in ("initrd", *FAILING_INITS):
        shutil.copy2(g / f"{name}.cpio.gz", rt / "boot" / f"{name}.cpio.gz")
    a61, a612 = f"/boot/{k61[0].name}", f"/boot/{k612[0].name}"
    run_args = f"-- --quick --no-controls --only '{ONLY}'"
    (rt / "etc" / "kbench-test-lockdown").write_text(
        f"echo \"TEST-LOCKDOWN $(cat /sys/kernel/security/lockdown)\"\n"
        f"/kbench/bin/kbench-campaign start --results /results --watchdog none --initrd /boot/initrd.cpio.gz "
        f"/boot/vmlinuz-unsigned {a612} {run_args}\n"
        f"echo \"TEST-UNSIGNED-RC $?\"\n"
        f"/kbench/bin/kbench-campaign start --dry-run --results /results --watchdog none "
        f"--initrd /boot/initrd.cpio.gz {a612} {a61} {run_args} >/dev/null\n"
        f"echo \"TEST-SIGNED-RC $?\"\n"
        f"/kbench/bin/kbench-campaign start --dry-run --results /results --watchdog none {a612} {a61} {run_args} "
        f">/dev/null\n"
        f"echo \"TEST-NOINITRD-RC $?\"\n")
    (rt / "etc" / "kbench-test-start").write_text(
        f"exec /kbench/bin/kbench-campaign start --rounds 1 --results /results --bin-dir /kbench/testbin "
        f"--initrd /boot/initrd.cpio.gz --watchdog i6300esb --watchdog-timeout {WATCHDOG_S} "
        f"--step-deadline {DEADLINE_S} "
        f"{a612} {a61} {a61},initrd=/boot/panic.cpio.gz,label=panics "
        f"{a612},initrd=/boot/fallback.cpio.gz,label=patched {a612},initrd=/boot/stuck.cpio.gz,label=stuck "
        f"{a612},label=hangs {run_args}\n")
    disk = g / "disk.img"
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "kbench", "-d", str(rt), str(disk), "1G"], check=True)
    return disk, g


class Guest:
    """QEMU runs of one disk; every console line kept with its time since
    the first run began."""

    def __init__(self, kernel, initrd, disk, log):
        self.kernel, self.initrd, self.disk = kernel, initrd, disk
        self.log = open(log, "w")
        self.t0 = time.monotonic()
        self.events = []   # (t, run number, line) of the lines that tell
        self.runs = 0

    def run(self, append="", kill_on=None):
        """One QEMU run to its end (the guest powers off), or killed (SIGKILL,
        a power cut) when kill_on(line) says so: a number of seconds to wait."""
        self.runs += 1
        cmd = ["qemu-system-x86_64", "-accel", "tcg", "-m", "1024", "-smp", "1", "-display", "none",
               "-serial", "stdio", "-monitor", "none", "-nodefaults", "-device", "i6300esb",
               "-drive", f"file={self.disk},format=raw,if=virtio",
               "-kernel", str(self.kernel), "-initrd", str(self.initrd), "-append", (CMDLINE + " " + append).strip()]
        say(f"qemu run {self.runs}: " + " ".join(cmd))
        killed, cut = None, []
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)

        def power_cut():
            cut.append(True)
            p.kill()
        try:
            for raw in p.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                t = time.monotonic() - self.t0
                self.log.write(f"[{t:8.1f}] {line}\n")
                self.log.flush()
                if re.search(r"TEST-|kbench-campaign:|Kernel panic|i6300|watchdog", line):
                    say(f"[{t:6.1f} s] {line[:220]}")
                    self.events.append((t, self.runs, line))
                if kill_on and killed is None and (wait := kill_on(line)) is not None:
                    killed = threading.Timer(wait, power_cut)
                    killed.start()
                    self.events.append((t, self.runs, f"TEST-KILL in {wait} s"))
                if t > LIMIT_S:
                    p.kill()
                    raise AssertionError(f"the guest ran past {LIMIT_S} s: {self.log.name}")
        finally:
            try:
                p.wait(timeout=60)  # its output ended: the guest powered off, or the power was cut
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            if killed:
                killed.cancel()
        say(f"qemu run {self.runs} ended ({'the power cut' if cut else 'powered off'})")
        return bool(cut)

    def lines(self, pattern, run=None):
        return [(t, r, line) for t, r, line in self.events if re.search(pattern, line) and (run is None or r == run)]


def read_back(disk, dest):
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    subprocess.run(["debugfs", "-R", f"rdump /results {dest}", str(disk)], check=True, capture_output=True)
    ls = ""
    for d in ("/etc/init.d", "/usr/local/sbin"):
        ls += subprocess.run(["debugfs", "-R", f"ls -l {d}", str(disk)], check=True, capture_output=True,
                             text=True).stdout
    return dest / "results", ls


def test_campaign_in_a_guest():
    assert os.geteuid() == 0 or shutil.which("debugfs"), "needs debugfs (e2fsprogs)"
    k61, k612 = (fetch(n) for n in KERNELS[:2])
    disk, g = build_guest(k61, k612)
    guest = Guest(k612[0], g / "initrd.cpio.gz", disk, g / "console.log")

    # 1. under lockdown=integrity: refused before anything reboots, nothing left
    assert not guest.run("lockdown=integrity")
    assert guest.lines(r"TEST-LOCKDOWN .*\[integrity\]")
    assert guest.lines(r"TEST-UNSIGNED-RC 3")
    (refusal,) = guest.lines(r"refused: kernel A \(/boot/vmlinuz-unsigned\): a trial kexec_file_load refused it")
    assert "EPERM (Operation not permitted)" in refusal[2] and "locked down" in refusal[2], refusal
    assert guest.lines(r"TEST-NOINITRD-RC 3") and guest.lines(r"no initrd found \(looked for /boot/initrd.img-")
    signed = guest.lines(r"TEST-SIGNED-RC")[0][2]
    # (here the signed Debian images are refused too: without UEFI no platform keyring holds Debian's key)
    say(f"the signed Debian images under lockdown=integrity, a dry run: {signed}")
    results, _ls = read_back(disk, g / "back")
    assert not list(results.glob("campaign-*")), "a refused start left a campaign"

    # 2. the campaign; QEMU killed in the middle of A's step, then between B's step and C's boot
    cuts = {"mid-step": lambda line: 3.0 if re.search(r"step 1/6: A .*kbench-run", line) else None,
            "between": lambda line: 0.0 if re.search(r"step 2/6: done", line) else None}
    assert guest.run(kill_on=cuts["mid-step"]), "QEMU was to be killed during A's step"
    assert guest.run(kill_on=cuts["between"]), "QEMU was to be killed after B's step"
    for extra in range(3):  # then to its end (a reset by panic= or the watchdog stays in one run)
        if not guest.run():
            break
    results, ls = read_back(disk, g / "back")

    states = sorted(results.glob("campaign-*/campaign.json"))
    assert len(states) == 1, f"one campaign: {states} (console: {guest.log.name})"
    s = json.loads(states[0].read_text())
    camp = states[0].parent
    rel = {k61[1]: "6.1", k612[1]: "6.12"}
    assert [rel[k["release"]] for k in s["kernels"]] == ["6.12", "6.1", "6.1", "6.12", "6.12", "6.12"]
    assert s["status"] == "finished", s["status"]
    st = [p["status"] for p in s["steps"]]
    assert st == ["done", "done", "failed", "failed", "failed", "failed"], s["steps"]
    kernels = s["kernels"]
    assert [k["status"] for k in kernels] == ["ok", "ok", "failed", "failed", "failed", "ok"]
    for i in (2, 3, 4):  # the panic, the fallback reboot, the boot that never reached its hook
        assert "its boot failed 2 times" in kernels[i]["reason"] and "without the boot's marker" in kernels[i]["reason"]
        assert s["steps"][i]["boot_failures"] == 2 and s["steps"][i]["run_dir"] == ""
    assert "deadline of 150 s" in s["steps"][5]["reason"]
    # the hook, its program and the logins' lock gone from the disk
    assert s["hook_files"] == [] and "S99kbench-campaign" not in ls and "kbench-campaign-hook" not in ls, ls
    # the power cuts: A's step cut once and run again on a new boot; B's not run again
    assert s["steps"][0]["runs"] == 2 and s["steps"][1]["runs"] == 1
    # each run on its kernel, on a boot of its own proved by its marker, after the boot settled
    boots = {b["boot_id"]: b for b in s["boots"]}
    for i, p in enumerate(s["steps"][:2]):
        b = boots[p["boot_id"]]
        assert b["note"] == "kexec" and b["step"] == i and b["marker"] == f"kbench.campaign={s['id']}:{i + 1}:{b['attempt']}"
        assert p["settle"].startswith("init script: the hook is rc's last script")
        run = results / pathlib.Path(p["run_dir"]).relative_to("/results")
        meta = json.loads((run / "meta.json").read_text())
        assert meta["status"] == "complete" and meta["kernel_release"] == kernels[i]["release"]
        assert run.parts[-4] == "AB"[i]
        assert (camp / "logs" / f"step-0{i + 1}-{'AB'[i]}.log").is_file()
    assert s["steps"][0]["boot_id"] != s["steps"][1]["boot_id"]
    assert all(p["boot_id"] != s["home_boot_id"] for p in s["steps"][:2])
    # every test boot's command line: the safety options and its marker; QEMU's own has no panic=
    test_lines = [line for _t, _r, line in guest.lines(r"TEST-CMDLINE .*kbench\.campaign=")]
    assert test_lines and all("panic=10 oops=panic softlockup_panic=1" in line for line in test_lines)
    assert all("panic=" not in line for _t, _r, line in guest.lines(r"TEST-CMDLINE ") if "kbench.campaign=" not in line)
    # what brought each failed boot home: a panic (C), the firmware (D), the watchdog (E)
    assert len(guest.lines(r"Kernel panic")) >= 2
    assert len(guest.lines(r"TEST-FALLBACK-INIT")) == 2
    stuck = guest.lines(r"TEST-STUCK-INIT: this boot never reaches")
    assert len(stuck) == 2
    for t, r, _line in stuck:  # the next boot came without a panic: the watchdog's reset
        nxt = [e for e in guest.events if e[0] > t and re.search(r"TEST-BOOT|Kernel panic", e[2])]
        assert nxt and "TEST-BOOT" in nxt[0][2], nxt[:1]
    assert guest.lines(r"watchdog: .*taken: /dev/watchdog0, 120 s")
    assert guest.lines(r"TEST-HUNG-UP") and not guest.lines(r"TEST-NO-REBOOT")
    assert "TEST-IDLE" in guest.events[-1][2]

    # the page and the comparison, here (the guest has no Python)
    r = subprocess.run([str(ROOT / "build" / "bin" / "kbench-campaign"), "report", str(states[0])],
                       capture_output=True, text=True)
    say(r.stdout + r.stderr)
    assert r.returncode == 0
    assert (camp / "index.html").is_file()
    comparison = (camp / "comparison.txt").read_text()
    assert k61[1] in comparison and "lat_syscall" in comparison
    print(comparison, file=sys.stderr)

    # the figures: every boot, every kexec from its request to the new kernel's rcS, every step
    say("boots (seconds since the first QEMU run began, the QEMU run, the guest's release):")
    prev = 0.0
    for t, r, line in guest.lines(r"TEST-BOOT "):
        say(f"  {t:7.1f} s  run {r}  {line.split()[1]}  (+{t - prev:.1f} s)")
        prev = t
    say("kexecs, from the request to the next boot's rcS (none should stall 90 s):")
    for t, r, line in guest.lines(r"kexec into "):
        nxt = [(t2, l2) for t2, r2, l2 in guest.events if t2 > t and r2 == r and "TEST-CMDLINE" in l2]
        what = re.search(r"kexec into (\S+)", line).group(1)
        if not nxt:
            say(f"  {t:7.1f} s  {what}: no boot in this QEMU run (its power cut)")
        elif "kbench.campaign=" in nxt[0][1]:
            say(f"  {t:7.1f} s  {what}: booted in {nxt[0][0] - t:.1f} s")
        else:
            say(f"  {t:7.1f} s  {what}: did not come; the default kernel {nxt[0][0] - t:.1f} s later")
    say("steps:")
    for i, p in enumerate(s["steps"]):
        say(f"  {i + 1} {'ABCDEF'[p['kernel']]} {p['status']:6} runs {p['runs']} boots {p['boots']} "
            f"{p['started']} .. {p['ended']} {p['reason'][:150]}")
    say(f"total: {time.monotonic() - guest.t0:.1f} s over {guest.runs} QEMU runs (console: {guest.log.name})")
