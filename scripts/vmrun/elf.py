"""What an ELF file's header says: static or not, which machine."""
import struct


def is_static(path):
    """An ELF file without a program interpreter (PT_INTERP)."""
    with open(path, "rb") as f:
        h = f.read(64)
        if h[:4] != b"\x7fELF" or h[4] != 2:
            return False
        phoff, = struct.unpack_from("<Q", h, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", h, 0x36)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
    return all(struct.unpack_from("<I", ph, i * phentsize)[0] != 3 for i in range(phnum))


def elf_arch(path):
    """x86_64 or arm64 for an ELF file's machine, None for another or none."""
    try:
        with open(path, "rb") as f:
            h = f.read(20)
    except OSError:
        return None
    if h[:4] != b"\x7fELF" or len(h) < 20:
        return None
    return {0x3E: "x86_64", 0xB7: "arm64"}.get(struct.unpack_from("<H", h, 18)[0])
