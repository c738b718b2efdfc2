"""The guest's architecture: what differs between an x86_64 and an arm64
guest (QEMU and its machine, the console, the Debian architecture, where
the static suite is built), and which one a kernel asks for."""
import os

from .common import Usage

# What the run needs from the kernel, when they are modules: the disk for
# lat_fs (virtio, else IDE), ext4, loop, IPv6 (lat_udp/lat_tcp/lat_connect ipv6).
DISKS = (("virtio", "vda", ("virtio_pci", "virtio_blk")), ("ide", "sda", ("ata_piix", "sd_mod")))


class Arch:
    """What differs between the guests of two architectures: QEMU and its
    machine, the console, the Debian architecture of the packages, where
    the static suite is built, how the data comes back."""

    def __init__(self, name, deb, uname, qemu, qemu_pkg, machine, console, static, make, disks, tools):
        self.name, self.deb, self.uname, self.qemu, self.qemu_pkg = name, deb, uname, qemu, qemu_pkg
        self.machine, self.console, self.static, self.make, self.disks = machine, console, static, make, disks
        self.tools = tools      # the cross binutils' prefix for strip ("" native)

    @property
    def native(self):
        return os.uname().machine == self.uname

    @property
    def data_on_console(self):
        # x86: a second 8250 UART (ttyS1); the arm64 virt machine has one PL011.
        return self.name == "arm64"


ARCHES = {
    "x86_64": Arch("x86_64", "amd64", "x86_64", "qemu-system-x86_64", "qemu-system-x86", [], "ttyS0",
                   "build/static", ["STATIC=1"], DISKS, "x86_64-linux-gnu-"),
    "arm64": Arch("arm64", "arm64", "aarch64", "qemu-system-aarch64", "qemu-system-arm", ["-M", "virt"], "ttyAMA0",
                  "build/arm64", ["STATIC=1", "ARCH=arm64"], DISKS[:1], "aarch64-linux-gnu-"),
}
ALIASES = {"x86_64": "x86_64", "amd64": "x86_64", "x86": "x86_64", "arm64": "arm64", "aarch64": "arm64"}


def package_arch(name):
    """arm64 or x86_64 for a Debian kernel package name that says it
    (linux-image-...-arm64, -amd64), else None."""
    for suffix, arch in (("-arm64", "arm64"), ("-amd64", "x86_64")):
        if name.endswith(suffix) or f"{suffix}-" in name:
            return arch
    return None


def kernel_arch(want, what, found):
    """The guest's architecture: the kernel's (FOUND), which --arch WANT may
    name too but not contradict; this machine's when neither says."""
    if want and found and want != found:
        raise Usage(f"{what} is an {found} kernel, not {want}: give ARCH={found} (--arch {found}) or an "
                    f"{want} kernel")
    host = ALIASES.get(os.uname().machine, "x86_64")
    return found or want or host
