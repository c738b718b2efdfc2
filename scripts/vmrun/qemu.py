"""QEMU: its binary and accelerator options, the probe that tells whether a
guest of this kernel actually runs under KVM (and so which accelerator a
run gets), the guest's disk and its command line."""
import os
import signal
import subprocess
import time

from .arch import ARCHES
from .common import Failure
from .initramfs import BUSYBOX, probe_initramfs

KVM_PROBE_S = 60
KVM_INTERNAL = "KVM internal error"      # QEMU's word when KVM cannot go on


def qemu_binary(arch=ARCHES["x86_64"]):
    return os.environ.get("KBENCH_VM_QEMU", arch.qemu)


def accel_args(accel, arch=ARCHES["x86_64"]):
    # -cpu max on arm64: every feature QEMU emulates (SVE, MTE, pointer
    # authentication with QEMU's cheap algorithm instead of the costly QARMA).
    cpu = "max,pauth-impdef=on" if arch.name == "arm64" else "max"
    return arch.machine + (["-accel", "kvm", "-cpu", "host"] if accel == "kvm"
                           else ["-accel", "tcg,thread=multi", "-cpu", cpu])


def kvm_works(image, work, arch=ARCHES["x86_64"], busybox=BUSYBOX):
    """Whether a guest of this kernel actually runs under KVM: a probe
    initramfs that prints a line and powers off, within KVM_PROBE_S. A
    /dev/kvm that opens is no proof: under nested virtualisation KVM may
    run no stock kernel, and QEMU then either ends at once or says "KVM
    internal error" and stays, its guest paused; the probe stops it there."""
    if not arch.native:
        return False, f"an {arch.name} guest on an {os.uname().machine} host: KVM runs only its own architecture"
    initrd = probe_initramfs(work, busybox)
    console, qlog = work / "probe-console.log", work / "probe-qemu.log"
    console.write_bytes(b"")
    with open(qlog, "wb") as log:
        proc = subprocess.Popen([qemu_binary(arch), *accel_args("kvm", arch), "-smp", "1", "-m", "512M",
                                 "-kernel", str(image), "-initrd", str(initrd),
                                 "-append", f"console={arch.console} panic=-1 quiet", "-display", "none",
                                 "-no-reboot", "-monitor", "none", "-serial", f"file:{console}"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                                start_new_session=True)
    deadline = time.monotonic() + KVM_PROBE_S
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if KVM_INTERNAL in qlog.read_text("utf-8", "replace"):
                break
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    ok = b"KBENCH-PROBE-OK" in console.read_bytes()
    err = qlog.read_text("utf-8", "replace").strip().splitlines()
    if not ok and time.monotonic() >= deadline and not any(KVM_INTERNAL in ln for ln in err):
        err = [f"no answer within {KVM_PROBE_S} s"]
    return ok, ("" if ok else probe_error(err))


def probe_error(lines):
    """What QEMU's stderr LINES say of why the probe's guest did not run:
    KVM's internal error (and "emulation failure", its usual kind) rather
    than the register dump after it, else the first line that says error,
    else the last one."""
    for ln in lines:
        if KVM_INTERNAL in ln:
            return ln.strip() + (" (emulation failure)" if "emulation failure" in map(str.strip, lines) else "")
    errors = [ln.strip() for ln in lines if "error" in ln.lower()]
    return errors[0] if errors else (lines[-1].strip() if lines else "the guest said nothing")


def choose_accel(wanted, image, work, arch=ARCHES["x86_64"], busybox=BUSYBOX):
    """(accel, why): WANTED "tcg" as it is; "auto" is "kvm" where a probe
    guest of IMAGE runs under KVM (kvm_works), else "tcg" and WHY, the
    probe's answer; "kvm" that the probe refuses is a Failure. vm-run and
    lava-local both choose with it: /dev/kvm that opens is no proof (a
    nested host's KVM may run no stock kernel)."""
    if wanted not in ("auto", "kvm"):
        return wanted, ""
    ok, why = kvm_works(image, work, arch, busybox)
    if not ok and wanted == "kvm":
        raise Failure(f"KVM cannot run this kernel here: {why}")
    return ("kvm", "") if ok else ("tcg", why)


def disk_image(work, disk, size_mb):
    """The -drive options of an empty ext4 disk image of SIZE_MB for the
    guest's DISK (kind, device), none without one."""
    if not disk:
        return []
    img = work / "disk.img"
    with open(img, "wb") as f:
        f.truncate(size_mb << 20)
    r = subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "kbench", str(img)], capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure(f"mkfs.ext4 failed: {r.stderr.strip()}")
    return ["-drive", f"file={img},format=raw,if={disk[0]}"]


def guest_command(arch, accel, cpus, mem, image, initrd, drive, append, console, data):
    """(QEMU's command line, the file the data comes back in): the console
    in CONSOLE; the data in DATA on a second serial port, or on the console
    where the machine has one (arm64)."""
    cmd = [qemu_binary(arch), *accel_args(accel, arch), "-smp", str(cpus), "-m", mem,
           "-kernel", str(image), "-initrd", str(initrd), *drive,
           "-append", " ".join([f"console={arch.console} panic=-1 loglevel=4"] + ([append] if append else [])),
           "-display", "none", "-no-reboot", "-monitor", "none", "-serial", f"file:{console}"]
    if arch.data_on_console:
        data = console
    else:
        cmd += ["-serial", f"file:{data}"]
    return cmd, data
