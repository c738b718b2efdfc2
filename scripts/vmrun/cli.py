"""vm-run's command line: its options (checked: a Usage error for each bad
one), and main, which takes the steps in order and turns every error into
a message and an exit status (0 ok, 1 a case failed or something is
missing, 2 usage, 3 no complete run came back, 130 interrupted)."""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from . import steps
from .arch import ALIASES
from .common import PROG, ROOT, Failure, Usage, say
from .elf import is_static
from .guest import Guest
from .initramfs import BUSYBOX
from .kernel import classify
from .modules import Modules, plan_modules
from .packages import ensure_deps, foreign_busybox
from .qemu import disk_image, guest_command
from .results import collect_run, guest_lines, invocation_lines, no_run_message, read_transfer


def positive(text, what):
    if not re.fullmatch(r"[0-9]+", text or "") or int(text) < 1:
        raise Usage(f"{what} must be a positive whole number, not {text!r}")
    return int(text)


def parse(argv):
    ap = argparse.ArgumentParser(prog=PROG, description="Run the kbench suite on another kernel in a QEMU guest.",
                                 usage="%(prog)s [options] KERNEL [-- KBENCH-RUN-ARGS...]")
    ap.add_argument("kernel", metavar="KERNEL", nargs="?", default="",
                    help="kernel image (bzImage/vmlinuz), Debian kernel .deb, or Debian package name")
    ap.add_argument("--arch", default="", metavar="ARCH",
                    help="the guest's architecture: x86_64 (amd64) or arm64 (aarch64); default: the kernel's "
                         "(an image's header, a .deb's Architecture, a package name's -amd64/-arm64), else this "
                         "machine's")
    ap.add_argument("--label", metavar="NAME", default="", help="kbench-run --label in the guest")
    ap.add_argument("--cpus", metavar="N", default="", help="guest CPUs (default: this machine's CPUs but one, at least 1)")
    ap.add_argument("--mem", metavar="SIZE", default="2G", help="guest memory (default 2G)")
    ap.add_argument("--out", metavar="DIR", default=str(ROOT / "results"), help="results root (default results/)")
    ap.add_argument("--limit", metavar="SEC", default="7200", help="stop the guest after SEC seconds: no run, exit 3 (default 7200)")
    ap.add_argument("--accel", default="auto", choices=("auto", "kvm", "tcg"),
                    help="auto: KVM if a probe guest runs under it, else emulation (tcg)")
    ap.add_argument("--append", metavar="ARGS", default="",
                    help="more kernel command-line options for the guest, e.g. 'mitigations=off init_on_free=1' "
                         "(meta.json's kernel_cmdline records them)")
    ap.add_argument("--modules", metavar="DIR", default="", help="lib/modules/RELEASE of a self-built kernel image")
    ap.add_argument("--disk-mb", metavar="MB", default="1024", help="size of the guest's ext4 disk image in MB (default 1024)")
    ap.add_argument("--work", metavar="DIR", default="", help="keep the kernel, initramfs, disk and logs here")
    ap.add_argument("--no-build", action="store_true",
                    help="use build/static (arm64: build/arm64) as it is (no make STATIC=1)")
    ap.add_argument("--static", metavar="DIR", default="", help="use the static suite in DIR as it is (no make)")
    ap.add_argument("--busybox", metavar="FILE", default="",
                    help="a static busybox of the guest's architecture (default: /bin/busybox of busybox-static; "
                         "another architecture's busybox-static .deb, fetched and unpacked)")
    ap.add_argument("--no-summary", action="store_true", help="no scripts/summarize at the end")
    ap.add_argument("--dry-run", action="store_true", help="say what would be booted, boot nothing")
    if "--" in argv:
        i = argv.index("--")
        argv, run_args = argv[:i], argv[i + 1:]
    else:
        run_args = []
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        raise Usage("see --help") if e.code else e
    a.run_args = run_args
    for bad in ("--out", "--resume"):
        if any(x == bad or x.startswith(bad + "=") for x in run_args):
            raise Usage(f"kbench-run {bad} cannot be given to the guest (it writes a new run to its /results): "
                        f"--out (make: VM_OUT=) chooses where the run lands")
    a.cpus = positive(a.cpus, "--cpus (CPUS=)") if a.cpus else max(1, (os.cpu_count() or 1) - 1)
    if not re.fullmatch(r"[0-9]+[MG]?", a.mem) or int(a.mem.rstrip("MG")) == 0:
        raise Usage(f"--mem (MEM=) must be a size such as 2G or 1536M, not {a.mem!r}")
    a.limit = positive(a.limit, "--limit")
    a.append = a.append.strip()
    if re.search(r"[\x00-\x1f\x7f]", a.append):
        raise Usage("--append (KERNEL_ARGS=) must be one line of kernel options, without control characters")
    clash = [w for w in a.append.split() if re.match(r"(console|panic|rdinit|init)=", w)]
    if clash:
        raise Usage(f"--append {clash[0]}: vm-run sets console=, panic= and the initramfs' init itself")
    if a.arch and a.arch not in ALIASES:
        raise Usage(f"--arch (ARCH=) must be x86_64 or arm64, not {a.arch!r}")
    a.arch = ALIASES.get(a.arch, "")
    a.disk_mb = positive(a.disk_mb, "--disk-mb")
    if a.busybox and not (Path(a.busybox).is_file() and is_static(a.busybox)):
        raise Usage(f"--busybox {a.busybox}: not a static ELF executable")
    if a.modules and not Path(a.modules).is_dir():
        raise Usage(f"--modules {a.modules}: no such directory")
    return a


def on_signal(sig, _frame):
    raise KeyboardInterrupt(sig)


def main(argv):
    try:
        a = parse(argv)
        kind, what = classify(a.kernel)
    except Usage as e:
        say(str(e))
        return 2
    work = Path(a.work or tempfile.mkdtemp(prefix="kbench-vm-")).resolve()
    out = Path(a.out).resolve()
    guests = []         # the one booted, stopped whatever happens
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        work.mkdir(parents=True, exist_ok=True)
        return boot(a, kind, what, work, out, guests)
    except Usage as e:
        say(str(e))
        return 2
    except Failure as e:
        msg = str(e)
        if e.code == 3 and "unchanged" not in msg:
            msg += f". Results root {out} unchanged."
        say(f"error: {msg}")
        return e.code
    except KeyboardInterrupt:
        say("interrupted: the guest is stopped; the results root is unchanged")
        return 130
    finally:
        for guest in guests:
            guest.stop()
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


def boot(a, kind, what, work, out, guests):
    """The run's steps: the kernel, its modules, the suite, the accelerator,
    the initramfs and disk, the guest booted, its run moved into OUT.
    kbench-run's exit status in the guest (0 after a dry run)."""
    if kind == "package" and a.dry_run:
        print(steps.package_line(what, steps.package_guest(a, what)))
        return 0
    k = steps.find_kernel(a, kind, what, work)
    mods = Modules(k.moddir)
    disk, order, mod_lines = plan_modules(mods, k.kind == "image", k.arch.disks)
    host = "vm-" + socket.gethostname().split(".")[0]
    if a.dry_run:
        print("\n".join(steps.dry_run_lines(a, k, host, order, mod_lines)))
        return 0
    ensure_deps(False, k.arch)
    busybox = a.busybox or (BUSYBOX if k.arch.native else foreign_busybox(k.arch, steps.DEBS))
    static = steps.static_suite(a, k.arch)
    say("; ".join(mod_lines) + "; loading: " + (" ".join(order) or "nothing"))
    accel = steps.accelerator(a.accel, k, work, busybox)
    virt = "kvm" if accel == "kvm" else "emulated"
    run_args, summary = steps.guest_run_args(a, accel)
    conf = {"KBENCH_MODULES": " ".join(order), "KBENCH_HOST": host, "KBENCH_VIRT": virt,
            "KBENCH_DISK": disk[1] if disk else "", "KBENCH_DATA": "console" if k.arch.data_on_console else "ttyS1"}
    initrd = steps.guest_initramfs(k, work, static, mods, order, conf, run_args, busybox)
    console = work / "console.log"
    cmd, data = guest_command(k.arch, accel, a.cpus, a.mem, k.image, initrd, disk_image(work, disk, a.disk_mb),
                              a.append, console, work / "data.txt")
    say(f"booting {k.release} ({k.arch.name}) in QEMU ({virt}, {a.cpus} CPUs, {a.mem}, limit {a.limit} s"
        + (f", kernel options {a.append}" if a.append else "") + f"); console log: {console}")
    guests.append(Guest(cmd, console, data, a.limit))
    rc, seconds = guests[0].run()
    markers = guests[0].markers
    raw, why = read_transfer(data)
    if raw is None:
        raise Failure(no_run_message(rc, markers, console, why, out, a.limit), 3)
    dest = collect_run(raw, markers, out)
    print("\n".join(guest_lines(markers, virt, a.cpus, a.mem, seconds) + invocation_lines(dest)), file=sys.stderr)
    if summary:
        subprocess.run([sys.executable, str(ROOT / "scripts" / "summarize"), str(dest)])
    print(f"{PROG}: results in {dest}", file=sys.stderr)
    print(dest)
    return int((markers.get("KBENCH-RC") or ["3"])[-1].split()[0])
