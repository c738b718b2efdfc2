"""Debian packages, fetched and unpacked here, never installed: a kernel
package (and the kernel a meta-package depends on), another architecture's
busybox-static; and the tools vm-run needs on this machine, installed with
apt-get when missing."""
import os
import re
import shutil
import subprocess
from pathlib import Path

from .arch import ARCHES
from .common import Failure, Usage, say
from .elf import is_static
from .initramfs import BUSYBOX

DEPS = {"cpio": "cpio", "mkfs.ext4": "e2fsprogs", "dpkg-deb": "dpkg"}


def deb_arch(deb):
    """The Debian architecture of a .deb (its control's Architecture)."""
    r = subprocess.run(["dpkg-deb", "-f", str(deb), "Architecture"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def host_deb_arch():
    r = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def fetch_package(name, cache, debarch=None):
    """NAME's .deb of Debian architecture DEBARCH (default this machine's),
    from CACHE or apt-get download (a foreign one as NAME:DEBARCH, which
    needs dpkg --add-architecture DEBARCH and apt-get update first)."""
    cache.mkdir(parents=True, exist_ok=True)
    pattern = f"{name}_*_{debarch}.deb" if debarch else f"{name}_*.deb"
    have = sorted(cache.glob(pattern))
    if have:
        return have[-1]
    spec = name if not debarch or debarch == host_deb_arch() else f"{name}:{debarch}"
    say(f"apt-get download {spec} (into {cache}; not installed)")
    r = subprocess.run(["apt-get", "download", spec], cwd=cache, capture_output=True, text=True)
    have = sorted(cache.glob(pattern))
    if r.returncode != 0 or not have:
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or [""]
        hint = (f"; a foreign architecture needs: dpkg --add-architecture {debarch} && apt-get update"
                if spec != name else "")
        raise Usage(f"apt-get download {spec} failed: {tail[0]} (names: apt-cache search linux-image; "
                    f"after apt-get update{hint})")
    return have[-1]


def unpack_deb(deb, dest, debarch=None):
    shutil.rmtree(dest, ignore_errors=True)
    r = subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], capture_output=True, text=True)
    if r.returncode != 0:
        raise Usage(f"{deb}: dpkg-deb -x failed: {r.stderr.strip()}")
    images = sorted((dest / "boot").glob("vmlinuz-*"))
    if not images:
        # A meta-package (linux-image-cloud-amd64): the kernel it depends on.
        dep = subprocess.run(["dpkg-deb", "-f", str(deb), "Depends"], capture_output=True, text=True).stdout
        names = re.findall(r"(?:^|,)\s*(linux-image-[a-z0-9+.-]+)", dep)
        if names and not deb.name.startswith(names[0] + "_"):
            say(f"{deb.name} is a meta-package: its kernel is {names[0]}")
            return unpack_deb(fetch_package(names[0], deb.parent, debarch), dest, debarch)
        raise Usage(f"{deb}: holds no boot/vmlinuz-*: not a kernel image package")
    image = images[0]
    release = image.name[len("vmlinuz-"):]
    mods = dest / "lib" / "modules" / release
    return image, release, mods if mods.is_dir() else None


def root_or_sudo(cmd):
    """[] as root, ["sudo"] with password-less sudo; else Failure saying CMD."""
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
        return ["sudo"]
    raise Failure(f"not root and no password-less sudo; run: sudo apt-get update && sudo {cmd}")


def ensure_deps(dry, arch=ARCHES["x86_64"]):
    fake_qemu = "KBENCH_VM_QEMU" in os.environ       # the tests' stand-in
    deps = dict(DEPS, **({} if fake_qemu else {arch.qemu: arch.qemu_pkg}))
    missing = sorted({pkg for tool, pkg in deps.items() if not shutil.which(tool)})
    if arch.native and not (Path(BUSYBOX).is_file() and is_static(BUSYBOX)):
        missing.append("busybox-static")
    if not missing:
        return
    cmd = "apt-get install -y " + " ".join(missing)
    say(f"missing: {' '.join(missing)}")
    if dry or not shutil.which("apt-get"):
        raise Failure(f"install them: {cmd}")
    sudo = root_or_sudo(cmd)
    say(f"running: {' '.join(sudo + ['apt-get', 'update'])} && {' '.join(sudo)} {cmd}".replace("  ", " "))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    ok = (subprocess.run(sudo + ["apt-get", "update", "-q"], capture_output=True).returncode == 0 and
          subprocess.run(sudo + cmd.split(), capture_output=True, env=env).returncode == 0)
    if not ok:
        raise Failure(f"installation failed; run: {' '.join(sudo)} apt-get update && {' '.join(sudo)} {cmd}")


def foreign_busybox(arch, cache):
    """A static busybox for a guest of another architecture: Debian's
    busybox-static of that architecture, fetched with apt-get download and
    unpacked here (never installed). Adds the architecture to dpkg first
    when it is missing (dpkg --add-architecture, apt-get update), as root."""
    dest = cache.parent / f"busybox-{arch.deb}"
    bb = dest / "bin" / "busybox"
    if bb.is_file() and is_static(bb):
        return bb
    foreign = subprocess.run(["dpkg", "--print-foreign-architectures"], capture_output=True, text=True).stdout.split()
    if arch.deb not in foreign and not sorted(cache.glob(f"busybox-static_*_{arch.deb}.deb")):
        cmd = f"dpkg --add-architecture {arch.deb} && apt-get update"
        sudo = root_or_sudo(cmd)
        say(f"running: {' '.join(sudo + ['dpkg', '--add-architecture', arch.deb])} && "
            f"{' '.join(sudo + ['apt-get', 'update'])} (for {arch.name} packages to download, never to install)")
        if (subprocess.run(sudo + ["dpkg", "--add-architecture", arch.deb], capture_output=True).returncode != 0 or
                subprocess.run(sudo + ["apt-get", "update", "-q"], capture_output=True).returncode != 0):
            raise Failure(f"{cmd} failed; run it, then again")
    deb = fetch_package("busybox-static", cache, arch.deb)
    shutil.rmtree(dest, ignore_errors=True)
    r = subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], capture_output=True, text=True)
    if r.returncode != 0 or not bb.is_file() or not is_static(bb):
        raise Failure(f"{deb}: no static bin/busybox in it ({r.stderr.strip() or 'not found'})")
    return bb
