"""The steps of one vm-run, in the order main takes them: which kernel (and
architecture) it boots, what a dry run says, the static suite the guest
gets, its accelerator and kbench-run's arguments, and its initramfs."""
import shutil
import subprocess
import sys
from pathlib import Path

from .arch import ALIASES, ARCHES, kernel_arch, package_arch
from .common import ROOT, Failure, Usage, say
from .elf import elf_arch
from .initramfs import make_initramfs
from .kernel import image_arch
from .packages import deb_arch, fetch_package, foreign_busybox, unpack_deb
from .qemu import choose_accel

DEBS = ROOT / "build" / "vm" / "debs"       # apt-get download's cache


class Kernel:
    """The kernel a run boots: KIND (image or deb, a package once fetched),
    WHAT the user gave, its architecture, image file, release and modules'
    directory (None: none)."""

    def __init__(self, kind, what, arch, image, release, moddir):
        self.kind, self.what, self.arch, self.image, self.release, self.moddir = \
            kind, what, arch, image, release, moddir


def package_guest(a, what):
    """The architecture of the guest of a Debian package name."""
    return ARCHES[kernel_arch(a.arch, what, package_arch(what))]


def package_line(what, arch):
    """What a dry run says of a package name (it downloads nothing)."""
    return (f"kernel: Debian package {what} (apt-get download, not installed)"
            + ("" if arch.native else f" for {arch.name}: {arch.qemu} {' '.join(arch.machine)}"))


def find_kernel(a, kind, what, work):
    """The Kernel of KERNEL: a package name fetched (apt-get download) and
    unpacked, a .deb unpacked, an image as it is; says which."""
    if kind == "package":
        arch = package_guest(a, what)
        if not arch.native and not a.busybox:
            foreign_busybox(arch, DEBS)      # dpkg --add-architecture first, when missing
        deb = fetch_package(what, DEBS, arch.deb)
        kind = "deb"
    else:
        deb = Path(what)
    if kind == "deb":
        da = deb_arch(deb)
        if da and da not in ALIASES:
            raise Usage(f"{what}: a package for {da}: vm-run boots amd64 and arm64 kernels")
        arch = ARCHES[kernel_arch(a.arch, what, ALIASES.get(da))]
        image, release, moddir = unpack_deb(deb, work / "kernel", arch.deb)
        say(f"kernel {release} from {deb.name}")
    else:
        found, release = image_arch(what)
        arch = ARCHES[kernel_arch(a.arch, what, found)]
        image = Path(what).resolve()
        moddir = Path(a.modules).resolve() if a.modules else None
        say(f"kernel image {image} (release {release}"
            + (f", modules from {moddir})" if moddir else ", no modules: what it needs must be built in)"))
    return Kernel(kind, what, arch, image, release, moddir)


def dry_run_lines(a, k, host, order, mod_lines):
    """What --dry-run prints: the kernel, the guest, its modules, QEMU."""
    lines = [f"kernel: {k.kind} {k.what}: release {k.release}, image {k.image.name}",
             f"guest host name: {host}; {a.cpus} CPUs, {a.mem}"]
    if a.append:
        lines.append(f"kernel command line: console=ttyS0 panic=-1 loglevel=4 {a.append}")
    lines += mod_lines
    lines.append("modules to load: " + (" ".join(order) or "none"))
    lines.append(f"architecture: {k.arch.name}: {k.arch.qemu} {' '.join(k.arch.machine + ['-cpu'])} "
                 f"{'host (KVM) or max' if k.arch.native else 'max (emulated)'}, console {k.arch.console}, "
                 f"static suite {a.static or k.arch.static}")
    return lines


def static_suite(a, arch):
    """The static suite's directory for ARCH's guest: --static as it is,
    else make STATIC=1 (arm64: ARCH=arm64) first unless --no-build; its
    kbench-run there and of the guest's architecture."""
    make = " ".join(arch.make)
    if not (a.no_build or a.static):
        say(f"make {make} (the static suite for the guest)")
        # Its output on stderr: stdout is the run directory's alone.
        r = subprocess.run(["make", "-C", str(ROOT), "--no-print-directory", "-s", *arch.make, "all"],
                           stdout=sys.stderr)
        if r.returncode != 0:
            raise Failure(f"make {make} failed")
    static = Path(a.static).resolve() if a.static else ROOT / arch.static
    if not (static / "bin" / "kbench-run").is_file():
        raise Failure(f"{static}/bin/kbench-run missing: make {make}")
    built = elf_arch(static / "bin" / "kbench-run")
    if built not in (None, arch.name):
        raise Failure(f"{static} holds {built} binaries; an {arch.name} guest needs its own: make {make}")
    return static


def accelerator(wanted, k, work, busybox):
    """KVM only where a guest actually runs under it (the probe's answer on
    stderr when not); emulation, loudly."""
    accel, why = choose_accel(wanted, k.image, work, k.arch, busybox)
    if why:
        say(f"KVM probe: {why}")
    if accel == "tcg":
        bar = "!" * 78
        say(f"\n{bar}\n  WARNING: EMULATED GUEST (QEMU TCG, no KVM): its timings are 5-30x off and NOT\n"
            f"  comparable with native runs. This checks that every case runs on {k.release};\n"
            f"  meta.json records virt: emulated, and the scripts say so.\n{bar}")
    return accel


def guest_run_args(a, accel):
    """(kbench-run's arguments in the guest, whether scripts/summarize runs
    here at the end): the user's, else a quick run under emulation and a
    300 s budget under KVM; --no-table when summarize prints the table."""
    run_args = list(a.run_args) or (["--quick"] if accel == "tcg" else ["--budget", "300"])
    if not a.run_args:
        say(f"kbench-run {' '.join(run_args)} (the default under {'emulation' if accel == 'tcg' else 'KVM'})")
    if a.label:
        run_args += ["--label", a.label]
    summary = not a.no_summary and subprocess.run([sys.executable, "-c", "import numpy"],
                                                  capture_output=True).returncode == 0
    if summary:
        run_args = ["--no-table"] + run_args     # scripts/summarize prints the full one here
    return run_args, summary


def guest_initramfs(k, work, static, mods, order, conf, run_args, busybox):
    """The guest's initramfs, with the kernel's config where kbench-run
    reads it (beside the image, or the .config of the tree it was built in)."""
    config = k.image.parent / f"config-{k.release}"
    tree = k.image.parents[3] / ".config" if len(k.image.parents) > 3 else None   # arch/x86/boot/bzImage
    if not config.is_file() and tree and tree.is_file():
        config = work / f"config-{k.release}"
        shutil.copy2(tree, config)
    strip = shutil.which(k.arch.tools + "strip") or (shutil.which("strip") if k.arch.native else None)
    return make_initramfs(work, static, mods, order, conf, run_args, config, busybox, strip or "false")
