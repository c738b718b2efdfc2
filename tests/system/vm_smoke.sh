#!/bin/sh
# vm_smoke.sh — run the static suite on another kernel in a QEMU guest and
# bring the run directory back. A check that every case runs or skips with
# its reason on that kernel (issue 21), not a measurement: without KVM the
# guest runs under emulation (TCG), 5-30x slower. Not part of `make test`.
#
#   tests/system/vm_smoke.sh [options] KERNEL
#
# KERNEL: a Debian kernel package name (fetched with `apt-get download`,
# never installed), a .deb file, or a kernel image (bzImage/vmlinuz).
#
#   --out DIR        results root on the host (default results/vm); the run
#                    lands in DIR/<host>/<kernel-release>/<run-id>/
#   --cpus N         guest CPUs (default 2: the @cross cases need two)
#   --mem SIZE       guest memory (default 2G)
#   --limit SEC      kill the guest after SEC seconds (default 7200)
#   --kvm            use KVM instead of emulation (where it can run the kernel)
#   --work DIR       keep the kernel, initramfs and console logs here
#                    (default a temporary directory, removed at the end)
#   -- ARGS...       kbench-run options inside the guest (default:
#                    --quick --timeout 300)
#
# Needs: qemu-system-x86 busybox-static cpio (apt-get install -y ...), and
# `make STATIC=1` (run here). The guest: busybox as /bin/sh, build/static
# (bin, libexec) under /kbench, /proc, /sys, devtmpfs and a tmpfs /tmp
# mounted, lo up, hostname kbench-vm; kbench-run's stderr (its progress)
# goes to the console, ttyS0, and the run directory comes back as a gzipped
# tar in base64 on a second serial port, ttyS1. No kernel modules are loaded.
#
# Prints the console log path, the kernel's `uname -a`, the run directory,
# and ok/skipped/failed counts of the invocations with every skip reason.
# Exit status: kbench-run's in the guest (0: nothing failed), 3 if no
# results came back (the guest panicked, hung or was killed).
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
out=results/vm cpus=2 mem=2G limit=7200 accel=tcg work=
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --cpus) cpus=$2; shift 2 ;;
        --mem) mem=$2; shift 2 ;;
        --limit) limit=$2; shift 2 ;;
        --kvm) accel=kvm; shift ;;
        --work) work=$2; shift 2 ;;
        --) shift; break ;;
        -*) echo "vm_smoke.sh: unknown option $1" >&2; exit 2 ;;
        *) kernel=$1; shift ;;
    esac
done
[ -n "${kernel:-}" ] || { echo "usage: vm_smoke.sh [options] KERNEL [-- kbench-run args]" >&2; exit 2; }
[ $# -gt 0 ] || set -- --quick --timeout 300

for tool in qemu-system-x86_64 cpio dpkg-deb; do
    command -v $tool >/dev/null || { echo "vm_smoke.sh: $tool missing: apt-get install -y qemu-system-x86 busybox-static cpio" >&2; exit 2; }
done
busybox=/bin/busybox   # busybox-static's: the guest has no shared libraries
[ -x "$busybox" ] || { echo "vm_smoke.sh: no static busybox: apt-get install -y busybox-static" >&2; exit 2; }

if [ -z "$work" ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)

# The kernel image.
case "$kernel" in
    *.deb) deb=$kernel ;;
    */*) deb= ; image=$kernel ;;
    *) (cd "$work" && apt-get download "$kernel" >/dev/null 2>&1) ||
           { echo "vm_smoke.sh: apt-get download $kernel failed" >&2; exit 2; }
       deb=$(ls "$work"/"$kernel"_*.deb) ;;
esac
if [ -n "${deb:-}" ]; then
    rm -rf "$work/kroot"
    dpkg-deb -x "$deb" "$work/kroot"
    image=$(ls "$work"/kroot/boot/vmlinuz-* | head -n1)
fi
[ -f "$image" ] || { echo "vm_smoke.sh: no kernel image in $kernel" >&2; exit 2; }

# The suite, statically linked.
make -C "$root" -s STATIC=1 >/dev/null

# The initramfs.
ir=$work/initramfs
rm -rf "$ir"
mkdir -p "$ir/bin" "$ir/proc" "$ir/sys" "$ir/dev" "$ir/tmp" "$ir/results" "$ir/kbench"
cp "$busybox" "$ir/bin/busybox"
ln -s busybox "$ir/bin/sh"
cp -r "$root/build/static/bin" "$root/build/static/libexec" "$ir/kbench/"
printf '%s\n' "$@" > "$ir/kbench/run_args"   # one argument a line
cat > "$ir/init" <<'EOF'
#!/bin/sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
ip link set lo up
hostname kbench-vm
echo "KBENCH-UNAME $(uname -a)"
cd /kbench
set --
while IFS= read -r a; do set -- "$@" "$a"; done < run_args
TMPDIR=/tmp bin/kbench-run --out /results "$@" >/tmp/run_dir
echo "KBENCH-RC $?"
echo "KBENCH-RUNDIR $(cat /tmp/run_dir)"
stty -F /dev/ttyS1 raw -echo 2>/dev/null
{ echo KBENCH-DATA-BEGIN; tar -C /results -cz . | base64; echo KBENCH-DATA-END; } > /dev/ttyS1
sync
poweroff -f
EOF
chmod +x "$ir/init"
(cd "$ir" && find . | cpio -o -H newc 2>/dev/null | gzip -1) > "$work/initramfs.cpio.gz"

console=$work/console.log data=$work/data.txt
rm -f "$console" "$data"
if [ "$accel" = tcg ]; then
    echo "vm_smoke.sh: WARNING: emulated guest (TCG): timings are 5-30x off and mean nothing; this checks that every case runs" >&2
    accel_opts="-accel tcg,thread=multi -cpu max"
else
    accel_opts="-accel kvm -cpu host"
fi
echo "vm_smoke.sh: booting $(basename "$image") ($cpus CPUs, $mem); console: $console" >&2
# shellcheck disable=SC2086
timeout --kill-after=10 "$limit" qemu-system-x86_64 $accel_opts -smp "$cpus" -m "$mem" \
    -kernel "$image" -initrd "$work/initramfs.cpio.gz" \
    -append "console=ttyS0 panic=-1 loglevel=4" \
    -display none -no-reboot -monitor none \
    -serial "file:$console" -serial "file:$data" || true

uname_line=$(grep -a '^KBENCH-UNAME ' "$console" | head -n1 | cut -d' ' -f2-)
rc=$(grep -a '^KBENCH-RC ' "$console" | tr -d '\r' | cut -d' ' -f2)
if ! grep -aq KBENCH-DATA-END "$data" 2>/dev/null; then
    echo "vm_smoke.sh: no results came back (kernel panic, hang or --limit $limit s reached); console: $console" >&2
    tail -n 20 "$console" >&2
    exit 3
fi
mkdir -p "$out"
sed -n '/KBENCH-DATA-BEGIN/,/KBENCH-DATA-END/p' "$data" | tr -d '\r' | grep -v '^KBENCH-DATA' |
    base64 -d | tar -C "$out" -xz
run_dir=$(grep -a '^KBENCH-RUNDIR ' "$console" | tr -d '\r' | cut -d' ' -f2)
run_dir=$out/${run_dir#/results/}
echo "kernel: $uname_line"
echo "run directory: $run_dir"
python3 - "$run_dir" <<'EOF' || true
import collections, json, pathlib, sys
d = pathlib.Path(sys.argv[1])
runs = [json.loads(l) for l in (d / "runs.jsonl").read_text().splitlines() if l.strip()]
n = collections.Counter(r["status"] for r in runs)
print(f"invocations: {len(runs)}: " + ", ".join(f"{v} {k}" for k, v in sorted(n.items())))
for r in runs:
    if r["status"] != "ok":
        print(f"  {r['status']}: {r['case']} (rep {r['rep_idx']}): {r['reason']}")
without = collections.Counter()
for l in (d / "samples.jsonl").read_text().splitlines():
    s = json.loads(l)
    for k, v in s.items():
        if v == "unavailable":
            without[(s["case"], k)] += 1
for (case, k), c in sorted(without.items()):
    print(f"  ran without {k}: {case} ({c} samples)")
EOF
exit "${rc:-3}"
