#!/bin/sh
# first_comparison.sh — the runs behind a first comparison's figures (one run
# a side, no history on the host): A/A runs, a uniform system-call slowdown,
# one system call slowed alone, and the same at --quick --reps 5; then the
# calibration of both slowdowns and the fork experiment (handloop_fork).
#
# Each label in RUNS is one full suite run like `make run` (kbench-run
# --budget BUDGET --scaling), one after another, each under the machine-wide
# lock /tmp/kbench-quiet.lock (nothing else heavy runs during a run):
#   aa*    plain
#   tax*   under `syscall_tax NTAX` (every system call slower; NTAX default 400)
#   base*  under `syscall_tax --only getppid 0` (every system call through
#          seccomp's cached path: the baseline of one*)
#   one*   under `syscall_tax --only getppid NONE` (getppid alone slower)
#   q...   the same kinds with `--quick --reps QREPS` (default 5) instead of the budget
#          (qaa1, qtax1, ...)
# Then: CAL (default 1) interleaved calibration rounds (ROUNDS, default 5):
# per round lat_syscall null and read plain, taxed, --only 0 and --only NONE,
# and lat_proc fork against handloop_fork (with and without EXTRA_KB of
# touched memory), all pinned to CPU PIN (default the last CPU).  Raw
# outputs go to OUT/cal/; every run's directory to OUT/LABEL.dir.
#
# Environment: OUT (default results-validation/first-UTC), BUDGET (300),
# RUNS, NTAX (400), NONE (450), QREPS (5), ROUNDS (5), CAL (1), PIN.
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-results-validation/first-$(date -u +%Y%m%dT%H%M%SZ)}
BUDGET=${BUDGET:-300}
RUNS=${RUNS:-aa1 tax1 base1 one1 aa2 tax2 one2 aa3 tax3}
NTAX=${NTAX:-400}
NONE=${NONE:-450}
ROUNDS=${ROUNDS:-5}
CAL=${CAL:-1}
PIN=${PIN:-$(($(nproc) - 1))}
LOCK=/tmp/kbench-quiet.lock
TAX=build/validation/syscall_tax
HAND=build/validation/handloop_fork

make -s all
mkdir -p build/validation "$OUT/cal"
cc -O2 -Wall -Wextra -Werror -o "$TAX" tests/validation/syscall_tax.c
cc -O2 -static -Wall -Wextra -Werror -o "$HAND" tests/validation/handloop_fork.c

run() {  # run LABEL [wrapper...]
  label=$1; shift
  case $label in
    q*) how="--quick --reps ${QREPS:-5}" ;;
    *) how="--budget $BUDGET --scaling" ;;
  esac
  echo "first_comparison: $(date -u +%H:%M:%S) run $label ($* $how)" >&2
  # shellcheck disable=SC2086
  dir=$(flock "$LOCK" "$@" build/bin/kbench-run --no-table $how --out "$OUT/$label")
  echo "$dir" > "$OUT/$label.dir"
  sleep 2   # lets a waiting holder of the lock in between runs
}

for r in $RUNS; do
  k=${r#q}
  case $k in
    aa*) run "$r" ;;
    tax*) run "$r" "$TAX" "$NTAX" -- ;;
    base*) run "$r" "$TAX" --only getppid 0 -- ;;
    one*) run "$r" "$TAX" --only getppid "$NONE" -- ;;
    *) echo "first_comparison: unknown label $r" >&2; exit 2 ;;
  esac
done

[ "$CAL" = 1 ] || exit 0
echo "first_comparison: $(date -u +%H:%M:%S) calibration, $ROUNDS rounds" >&2
export OUT ROUNDS PIN TAX NTAX NONE HAND
flock "$LOCK" sh -c '
  set -eu
  round=1
  while [ "$round" -le "$ROUNDS" ]; do
    for c in null read; do
      taskset -c "$PIN" build/bin/lat_syscall $c --samples 5 > "$OUT/cal/plain-$c.r$round"
      taskset -c "$PIN" "$TAX" "$NTAX" -- build/bin/lat_syscall $c --samples 5 > "$OUT/cal/tax-$c.r$round"
      taskset -c "$PIN" "$TAX" --only getppid 0 -- build/bin/lat_syscall $c --samples 5 > "$OUT/cal/only0-$c.r$round"
      taskset -c "$PIN" "$TAX" --only getppid "$NONE" -- build/bin/lat_syscall $c --samples 5 > "$OUT/cal/one-$c.r$round"
    done
    taskset -c "$PIN" build/bin/lat_proc fork --samples 5 > "$OUT/cal/fork-kbench.r$round"
    taskset -c "$PIN" "$HAND" 50 5 > "$OUT/cal/fork-hand.r$round" 2>>"$OUT/cal/fork-hand.rss"
    taskset -c "$PIN" "$HAND" 50 5 2800 > "$OUT/cal/fork-hand3m.r$round" 2>>"$OUT/cal/fork-hand3m.rss"
    round=$((round + 1))
  done
' 2>&1
echo "first_comparison: $(date -u +%H:%M:%S) done: $OUT" >&2
