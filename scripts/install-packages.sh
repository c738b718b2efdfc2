#!/bin/sh
# install-packages.sh — install Debian packages with apt-get when this user
# may: as root, or through password-less sudo. Otherwise, or when apt-get
# fails, print the exact command to run and exit 1. make run (numpy and
# matplotlib for the summary) and tests/ensure-deps.sh (what make test
# needs) use it.
#
#   install-packages.sh WHO PACKAGE...     WHO: the prefix of every message
#
# Exit status: 0 installed, 1 not installed (the command printed), 2 usage.
set -u
if [ $# -lt 2 ]; then
  echo "usage: install-packages.sh WHO PACKAGE..." >&2
  exit 2
fi
who=$1
shift
# Without what Debian recommends beside them: matplotlib's recommendations
# bring scipy, sympy, tk, Boost and the Python headers (60 packages in all on
# a fresh Debian 12, December 2026), which neither kbench nor its tests use.
cmd="apt-get install -y --no-install-recommends $*"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "$who: no apt-get here; install the equivalent of: $cmd" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo="sudo"
else
  echo "$who: not root and no password-less sudo; run: sudo apt-get update && sudo $cmd" >&2
  exit 1
fi
echo "$who: running: ${sudo:+$sudo }apt-get update && ${sudo:+$sudo }$cmd" >&2
if ! { $sudo apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo $cmd >/dev/null; }; then
  echo "$who: installation failed; run: ${sudo:+$sudo }apt-get update && ${sudo:+$sudo }$cmd" >&2
  exit 1
fi
