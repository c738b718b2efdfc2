"""The kernel's modules (lib/modules/RELEASE): which of the run's needs are
built in, which are modules and what they depend on, in load order."""
import gzip
import lzma
import re
import subprocess
from pathlib import Path

from .arch import DISKS
from .common import Failure

FS_MODULES = ("ext4", "loop", "ipv6")


def module_name(path):
    return re.sub(r"\.ko(\.(xz|zst|gz))?$", "", path.name).replace("-", "_")


def read_module(path):
    data = path.read_bytes()
    if path.name.endswith(".xz"):
        return lzma.decompress(data)
    if path.name.endswith(".gz"):
        return gzip.decompress(data)
    if path.name.endswith(".zst"):
        r = subprocess.run(["zstd", "-dc", str(path)], capture_output=True)
        if r.returncode != 0:
            raise Failure(f"{path}: zstd -d failed (apt-get install -y zstd)")
        return r.stdout
    return data


def modinfo(data, key):
    out = []
    for m in re.finditer(rb"(?:^|\0)" + key.encode() + rb"=([^\0]*)", data):
        out.append(m.group(1).decode("ascii", "replace"))
    return out


class Modules:
    """The kernel's modules (lib/modules/RELEASE): which of the run's needs
    are built in, which are modules (with what they depend on), which are
    missing."""

    def __init__(self, moddir):
        self.dir = moddir
        self.files = {}
        self.builtin = set()
        if moddir is None:
            return
        for p in moddir.rglob("*.ko*"):
            if re.search(r"\.ko(\.(xz|zst|gz))?$", p.name):
                self.files[module_name(p)] = p
        bi = moddir / "modules.builtin"
        if bi.is_file():
            self.builtin = {module_name(Path(l.strip())) for l in bi.read_text().splitlines() if l.strip()}
        self.data = {}

    def _data(self, name):
        if name not in self.data:
            self.data[name] = read_module(self.files[name])
        return self.data[name]

    def state(self, name):
        if name in self.builtin:
            return "built in"
        if name in self.files:
            return "module"
        return "missing"

    def closure(self, name, order, seen=None):
        """Append NAME's modules in load order (dependencies first)."""
        seen = set() if seen is None else seen
        if name in seen or name not in self.files:
            return
        seen.add(name)
        data = self._data(name)
        deps = [d for v in modinfo(data, "depends") for d in v.split(",") if d]
        soft = []
        for v in modinfo(data, "softdep"):       # "pre: crc32c" (the checksum ext4 asks for by name)
            m = re.search(r"pre:\s*([^:]*?)(\s+post:|$)", v)
            if m:
                soft += m.group(1).split()
        for d in deps:
            self.closure(d.replace("-", "_"), order, seen)
        for d in soft:
            self.closure(self.provider(d), order, seen)
        if name not in order:
            order.append(name)

    def provider(self, alias):
        """The module a soft dependency names: a module's own name, or an
        alias of the crypto API (ext4's "pre: crypto-crc32c" on Debian's
        generic kernels, "pre: crc32c" on others), which the guest, without
        modprobe and modules.alias, cannot look up: the algorithm's module,
        else its generic C one (crc32c_generic)."""
        d = alias.replace("-", "_")
        base = d[len("crypto_"):] if d.startswith("crypto_") else d
        for cand in (d, base, base + "_generic"):
            if cand in self.files or cand in self.builtin:
                return cand
        return d


def plan_modules(mods, image_only, disks=DISKS):
    """(disk kind, guest device, [modules to load], [lines saying what])."""
    lines, order = [], []
    disk = None
    for kind, dev, need in disks:
        states = [mods.state(n) for n in need]
        if image_only and mods.dir is None:
            states = ["built in?"] * len(need)        # unknown: try it, the guest says
        if "missing" not in states:
            disk = (kind, dev)
            for n, s in zip(need, states):
                if s == "module":
                    mods.closure(n, order)
            lines.append(f"disk: {kind} (" + ", ".join(f"{n} {s}" for n, s in zip(need, states)) + ")")
            break
    if disk is None:
        lines.append("disk: none (" + " nor ".join("/".join(n for n in d[2] if n != "virtio_pci") for d in disks)
                     + " in this kernel): lat_fs on tmpfs")
    for n in FS_MODULES:
        s = mods.state(n) if mods.dir is not None else "built in?"
        if s == "module":
            mods.closure(n, order)
        lines.append(f"{n}: {s}")
    return disk, order, lines
