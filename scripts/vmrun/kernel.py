"""What KERNEL is: an x86 boot image or an arm64 Image (and its release,
read from the file), a Debian kernel package (.deb) or a package's name."""
import gzip
import os
import re
import struct
import zlib
from pathlib import Path

from .common import Usage


def image_release(path):
    """The release (first word of the version string) of an x86 boot image,
    None when the file is not one (no 'HdrS' at 0x202)."""
    try:
        with open(path, "rb") as f:
            head = f.read(0x10000)
    except OSError as e:
        raise Usage(f"{path}: cannot read: {e.strerror}")
    if len(head) < 0x210 or head[0x202:0x206] != b"HdrS":
        return None
    off = struct.unpack_from("<H", head, 0x20E)[0] + 0x200
    text = head[off:off + 256].split(b"\0", 1)[0].decode("ascii", "replace")
    return text.split()[0] if text.strip() else "unknown"


def arm64_image_release(path):
    """The release of an arm64 kernel Image (magic 'ARM\\x64' at 0x38), also
    gzip-compressed as Debian's vmlinuz-*-arm64 is: the word after "Linux
    version " in it ("unknown" when it has none); None when the file is not
    one."""
    try:
        with open(path, "rb") as f:
            head = f.read(2)
            f.seek(0)
            if head == b"\x1f\x8b":
                try:
                    data = gzip.GzipFile(fileobj=f).read(256 << 20)
                except (OSError, EOFError, zlib.error):
                    return None
            else:
                data = f.read(256 << 20)
    except OSError as e:
        raise Usage(f"{path}: cannot read: {e.strerror}")
    if len(data) < 0x40 or data[0x38:0x3C] != b"ARM\x64":
        return None
    m = re.search(rb"Linux version (\S+) ", data)
    return m.group(1).decode("ascii", "replace") if m else "unknown"


def image_arch(path):
    """('x86_64'|'arm64', release) of a kernel image file, None if neither."""
    rel = image_release(path)
    if rel is not None:
        return "x86_64", rel
    rel = arm64_image_release(path)
    if rel is not None:
        return "arm64", rel
    return None


def classify(kernel):
    """('image'|'deb'|'package', KERNEL); Usage for anything else."""
    if not kernel:
        raise Usage("no KERNEL given: make vm-run KERNEL=<bzImage | package.deb | Debian package name>")
    kernel = os.path.expanduser(kernel)
    p = Path(kernel)
    if p.is_dir():
        raise Usage(f"{kernel}: a directory, not a kernel image, .deb or package name")
    if p.is_file():
        with open(p, "rb") as f:
            magic = f.read(8)
        if magic == b"!<arch>\n":
            return "deb", kernel
        if kernel.endswith(".deb"):
            raise Usage(f"{kernel}: not a Debian package (no ar archive)")
        if image_release(p) is None and arm64_image_release(p) is None:
            raise Usage(f"{kernel}: not an x86 kernel image (no boot header 'HdrS') nor an arm64 Image "
                        f"(no 'ARM\\x64' magic); give a bzImage (arch/x86/boot/bzImage, /boot/vmlinuz-*), an "
                        f"arm64 Image (arch/arm64/boot/Image, Image.gz), a .deb or a Debian package name")
        return "image", kernel
    if "/" in kernel or kernel.endswith(".deb"):
        raise Usage(f"{kernel}: no such file")
    if not re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", kernel):
        raise Usage(f"{kernel}: not a file and not a Debian package name")
    return "package", kernel
