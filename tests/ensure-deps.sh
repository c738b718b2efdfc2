#!/bin/sh
# ensure-deps.sh — make sure the tools `make test` needs are installed.
#
# Catch2 v2 (Debian's catch2), pytest, numpy and matplotlib for the Python
# under test ($PYTHON, default /usr/bin/python3), and the tools some tests
# run: strace (the O_EXCL/0700 checks, the lat_fs counts), ip and sysctl
# (a network namespace without IPv6), unshare and mount, perf (linux-perf:
# kbench-run --profile with the real perf, tests/system/test_profile_perf.py). Installs what is
# missing with apt-get (through sudo when not root: scripts/install-packages.sh);
# where that is impossible, prints the exact command and fails. With them installed, a
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
# yaml: the LAVA files' tests (tests/system/test_lab_lava.py) read them as LAVA does.
for mod in pytest:python3-pytest numpy:python3-numpy matplotlib:python3-matplotlib yaml:python3-yaml; do
  name=${mod%%:*}
  pkg=${mod#*:}
  if [ ! -x "$PYTHON" ] || ! "$PYTHON" -c "import $name" >/dev/null 2>&1; then
    missing="$missing $pkg"
  fi
done
# chromium: the page's width at 1280 px (tests/scripts/test_kb_page_width.py). Wanted, not
# needed: where it cannot be installed, that test skips and says why.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  "$(dirname "$0")/../scripts/install-packages.sh" ensure-deps chromium ||
    echo "ensure-deps: chromium not installed: the page-width test will skip" >&2
fi
[ -z "$missing" ] && exit 0

echo "ensure-deps: missing:$missing" >&2
exec "$(dirname "$0")/../scripts/install-packages.sh" ensure-deps $missing
