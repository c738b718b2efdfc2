"""The guest's initramfs: busybox, the static suite, the modules to load and
an init that runs kbench-run and sends the run back; and the probe's, whose
init only says it booted."""
import gzip
import os
import shlex
import shutil
import subprocess

from .common import Failure

BUSYBOX = "/bin/busybox"        # busybox-static's: the guest has no shared library


INIT = r"""#!/bin/sh
# The guest's init (written by scripts/vm-run): mount, load modules, run
# kbench-run with its progress on the console, send the run back on ttyS1.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
. /kbench/vm.conf
echo "KBENCH-BOOTED $(cut -d' ' -f1 /proc/uptime)"
for m in $KBENCH_MODULES; do
    if insmod /lib/modules/$m.ko 2>/tmp/insmod.err; then echo "KBENCH-MODULE loaded $m"
    else echo "KBENCH-MODULE failed $m: $(cat /tmp/insmod.err)"; fi
done
ip link set lo up
hostname "$KBENCH_HOST"
tmpdir=/tmp fs="tmpfs (no disk)"
if [ -n "$KBENCH_DISK" ]; then
    i=0
    while [ ! -b /dev/$KBENCH_DISK ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    mkdir -p /mnt/disk
    if [ ! -b /dev/$KBENCH_DISK ]; then fs="tmpfs (no /dev/$KBENCH_DISK appeared)"
    elif mount -t ext4 /dev/$KBENCH_DISK /mnt/disk 2>/tmp/mount.err; then
        mkdir -p /mnt/disk/tmp && chmod 1777 /mnt/disk/tmp && tmpdir=/mnt/disk/tmp fs="ext4 on /dev/$KBENCH_DISK"
    else fs="tmpfs (mount -t ext4 /dev/$KBENCH_DISK failed: $(cat /tmp/mount.err))"; fi
fi
echo "KBENCH-FS $fs"
echo "KBENCH-UNAME $(uname -r) | $(uname -v)"
echo "KBENCH-CLOCKSOURCE $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
cd /kbench
set --
while IFS= read -r a; do set -- "$@" "$a"; done < run_args
echo "KBENCH-START $(cut -d' ' -f1 /proc/uptime)"
KBENCH_VIRT=$KBENCH_VIRT TMPDIR=$tmpdir bin/kbench-run --out /results "$@" >/tmp/run_dir
rc=$?
echo "KBENCH-RC $rc $(cut -d' ' -f1 /proc/uptime)"
echo "KBENCH-RUNDIR $(cat /tmp/run_dir)"
sync
tar -C /results -czf /tmp/results.tgz .
if [ "$KBENCH_DATA" = console ]; then
    # One serial port (arm64's virt machine): the data on the console, with
    # the kernel's messages held back below emergencies meanwhile.
    echo 1 > /proc/sys/kernel/printk
    data=/dev/console
else
    data=/dev/ttyS1
    stty -F $data raw -echo 2>/dev/null
fi
{ echo KBENCH-DATA-BEGIN; base64 /tmp/results.tgz
  echo "KBENCH-DATA-END $(wc -c < /tmp/results.tgz) $(md5sum /tmp/results.tgz | cut -d' ' -f1)"; } > $data
[ "$tmpdir" = /tmp ] || umount /mnt/disk
echo KBENCH-DONE
poweroff -f
"""

PROBE_INIT = """#!/bin/sh
echo KBENCH-PROBE-OK
/bin/busybox poweroff -f
"""


def cpio(src, dest):
    names = subprocess.run(["find", "."], cwd=src, capture_output=True, text=True, check=True).stdout
    r = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=src, input=names.encode(),
                       capture_output=True)
    if r.returncode != 0:
        raise Failure(f"cpio failed: {r.stderr.decode(errors='replace').strip()}")
    with gzip.open(dest, "wb", compresslevel=1) as f:
        f.write(r.stdout)


def make_initramfs(work, static_dir, mods, order, conf, run_args, config=None, busybox=BUSYBOX, strip=None):
    ir = work / "initramfs"
    shutil.rmtree(ir, ignore_errors=True)
    for d in ("bin", "proc", "sys", "dev", "tmp", "results", "mnt", "kbench", "lib/modules", "boot"):
        (ir / d).mkdir(parents=True, exist_ok=True)
    if config and config.is_file():
        # Where kbench-run looks for it: meta.json's kernel_config (part of the kernel's identity).
        shutil.copy2(config, ir / "boot" / config.name)
    shutil.copy2(busybox, ir / "bin" / "busybox")
    os.symlink("busybox", ir / "bin" / "sh")
    strip = strip or shutil.which("strip")
    for sub in ("bin", "libexec"):
        (ir / "kbench" / sub).mkdir()
        for f in sorted((static_dir / sub).iterdir()):
            if not (f.is_file() and os.access(f, os.X_OK)):
                continue
            dest = ir / "kbench" / sub / f.name
            # Without debug info: a tenth of the size, the same code.
            if not strip or subprocess.run([strip, "-o", str(dest), str(f)], capture_output=True).returncode:
                shutil.copy2(f, dest)
    for name in order:
        (ir / "lib" / "modules" / f"{name}.ko").write_bytes(mods._data(name))
    (ir / "kbench" / "run_args").write_text("".join(a + "\n" for a in run_args))
    (ir / "kbench" / "vm.conf").write_text("".join(f"{k}={shlex.quote(v)}\n" for k, v in conf.items()))
    (ir / "init").write_text(INIT)
    (ir / "init").chmod(0o755)
    out = work / "initramfs.cpio.gz"
    cpio(ir, out)
    shutil.rmtree(ir)
    return out


def probe_initramfs(work, busybox=BUSYBOX):
    ir = work / "probe"
    shutil.rmtree(ir, ignore_errors=True)
    (ir / "bin").mkdir(parents=True)
    shutil.copy2(busybox, ir / "bin" / "busybox")
    os.symlink("busybox", ir / "bin" / "sh")
    (ir / "init").write_text(PROBE_INIT)
    (ir / "init").chmod(0o755)
    out = work / "probe.cpio.gz"
    cpio(ir, out)
    shutil.rmtree(ir)
    return out
