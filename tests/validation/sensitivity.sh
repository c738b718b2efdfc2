#!/bin/sh
# sensitivity.sh — does the comparison tell a kernel change from noise on this
# machine?  The self-test of issues 11 and 19: an A/A pair, two known
# slowdowns of the system-call path (no new kernel needed: syscall_tax runs
# the suite under always-allow seccomp filters), and a machine shift made on
# purpose (duty_hog takes short bursts of every CPU during one run).
#
# Runs, one after another, each a full suite run with `--budget BUDGET` like
# `make run` (so about BUDGET seconds each):
#   aa1   plain
#   t10   under `syscall_tax N10`  (default 1: the smallest filter, about +11% on null here)
#   aa2   plain
#   t300  under `syscall_tax N300` (default 700: about +300 ns per system call here)
#   hog   plain, with duty_hog BUSY/PERIOD us (default 150/1000) on every CPU
# (any label starting aa, t10 or t300 is a plain, +10% or +300 ns run: more
# runs per side, e.g. RUNS="aa3 aa4 t300b", for comparisons of pooled runs)
# then an interleaved calibration of the tax (syscall_tax.sh calibrate) and
# the comparisons: aa1/aa2 (A/A), aa1/t10, aa2/t300, aa1/hog, each saved as
# compare-*.txt; figures.txt holds the numbers quoted in the issues
# (tests/validation/sensitivity_figures.py).
#
# Environment: OUT (default results-validation/sensitivity-UTC), BUDGET (300),
# RUNS (default "aa1 t10 aa2 t300 hog"), RUN_ARGS (extra kbench-run options,
# e.g. "--only ^lat_syscall" for a short check), N10, N300, BUSY, PERIOD.
# Takes about 5 x BUDGET + 1 minute.  Run it on a machine where nothing else
# runs benchmarks.
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-results-validation/sensitivity-$(date -u +%Y%m%dT%H%M%SZ)}
BUDGET=${BUDGET:-300}
RUNS=${RUNS:-aa1 t10 aa2 t300 hog}
RUN_ARGS=${RUN_ARGS:-}
N10=${N10:-1}
N300=${N300:-700}
BUSY=${BUSY:-150}
PERIOD=${PERIOD:-1000}
PY=${PYTHON:-/usr/bin/python3}

make -s all
mkdir -p build/validation "$OUT"
[ -x build/validation/syscall_tax ] || cc -O2 -Wall -Wextra -Werror -o build/validation/syscall_tax tests/validation/syscall_tax.c
[ -x build/validation/duty_hog ] || cc -O2 -Wall -Wextra -Werror -o build/validation/duty_hog tests/validation/duty_hog.c

hogs=""
stop_hogs() { for p in $hogs; do kill "$p" 2>/dev/null || true; done; hogs=""; }
trap 'stop_hogs' EXIT INT TERM

run() {  # run LABEL [wrapper...]
  label=$1; shift
  echo "sensitivity: run $label ($*)" >&2
  # shellcheck disable=SC2086
  dir=$("$@" build/bin/kbench-run --no-table --budget "$BUDGET" --out "$OUT/$label" $RUN_ARGS)
  echo "$dir" > "$OUT/$label.dir"
}

for r in $RUNS; do
  case $r in
    aa*) run "$r" ;;
    t10*) run "$r" build/validation/syscall_tax "$N10" -- ;;
    t300*) run "$r" build/validation/syscall_tax "$N300" -- ;;
    hog)
      for cpu in $(seq 0 $(($(nproc) - 1))); do
        build/validation/duty_hog "$cpu" "$BUSY" "$PERIOD" & hogs="$hogs $!"
      done
      run hog
      stop_hogs ;;
    *) echo "sensitivity: unknown run '$r'" >&2; exit 2 ;;
  esac
done

[ -n "${NO_CALIBRATION:-}" ] && exit 0
echo "sensitivity: calibrating the tax (interleaved)" >&2
ROUNDS=9 tests/validation/syscall_tax.sh calibrate "$N10" "$N300" > "$OUT/calibration.txt" 2>&1 || true

cmp() {  # cmp BASE OTHER
  if [ -f "$OUT/$1.dir" ] && [ -f "$OUT/$2.dir" ]; then
    "$PY" scripts/compare "$(cat "$OUT/$1.dir")" "$(cat "$OUT/$2.dir")" > "$OUT/compare-$1-$2.txt" 2>&1 || true
  fi
}
cmp aa1 aa2
cmp aa1 t10
cmp aa2 t300
cmp aa1 hog
N10=$N10 N300=$N300 "$PY" tests/validation/sensitivity_figures.py "$OUT" | tee "$OUT/figures.txt"
