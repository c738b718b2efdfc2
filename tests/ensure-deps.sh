#!/bin/sh
# ensure-deps.sh — make sure the tools `make test` needs are installed.
#
# Catch2 v2 (Debian's catch2), pytest, numpy and matplotlib for the Python
# under test ($PYTHON, default /usr/bin/python3), and the tools some tests
# run: strace (the O_EXCL/0700 checks, the lat_fs counts), ip and sysctl
# (a network namespace without IPv6), unshare and mount, perf (linux-perf:
# kbench-run --profile with the real perf, tests/system/test_profile_perf.py). Installs what is
# missing with apt-get (through sudo when not root); where that is
# impossible, prints the exact command and fails. With them installed, a
# test that needs one of them may not skip (tests/conftest.py, MAY_SKIP).
set -u
PYTHON=${PYTHON:-/usr/bin/python3}
PATH="$PATH:/usr/sbin:/sbin"  # ip, sysctl: where an ordinary user's PATH may not look
missing=""
[ -f /usr/include/catch2/catch.hpp ] || missing="$missing catch2"
for tool in strace:strace ip:iproute2 sysctl:procps unshare:util-linux mount:mount perf:linux-perf \
            cpio:cpio mkfs.ext4:e2fsprogs dpkg-deb:dpkg; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing="$missing ${tool#*:}"
done
# scripts/vm-run's initramfs (tests/system/test_vm_run.py): a static busybox.
dpkg-query -W -f '${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || missing="$missing busybox-static"
if [ ! -x "$PYTHON" ]; then
  missing="$missing python3"
fi
for mod in pytest:python3-pytest numpy:python3-numpy matplotlib:python3-matplotlib; do
  name=${mod%%:*}
  pkg=${mod#*:}
  if [ ! -x "$PYTHON" ] || ! "$PYTHON" -c "import $name" >/dev/null 2>&1; then
    missing="$missing $pkg"
  fi
done
[ -z "$missing" ] && exit 0

cmd="apt-get install -y$missing"
echo "ensure-deps: missing:$missing" >&2
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-deps: no apt-get here; install the equivalent of: $cmd" >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo="sudo"
else
  echo "ensure-deps: not root and no password-less sudo; run: sudo apt-get update && sudo $cmd" >&2
  exit 1
fi
echo "ensure-deps: running: ${sudo:+$sudo }apt-get update && ${sudo:+$sudo }$cmd" >&2
if ! { $sudo apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo $cmd >/dev/null; }; then
  echo "ensure-deps: installation failed; run: ${sudo:+$sudo }apt-get update && ${sudo:+$sudo }$cmd" >&2
  exit 1
fi
