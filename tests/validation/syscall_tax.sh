#!/bin/sh
# syscall_tax.sh — calibrate syscall_tax, the injected system-call slowdown.
#
# tests/validation/syscall_tax.c builds a wrapper, `syscall_tax N -- CMD...`,
# that runs CMD (and everything it starts) under seccomp filters which always
# allow but execute N BPF instructions on every system call: a known, uniform
# slowdown of the syscall path without a new kernel.  Use it to check that the
# suite's comparison flags an injected slowdown where it acts (cases making
# system calls) and nowhere else (memory-bound cases), e.g.
#     build/validation/syscall_tax 0   -- build/bin/kbench-run ...   # baseline
#     build/validation/syscall_tax 700 -- build/bin/kbench-run ...   # taxed
#
#   tests/validation/syscall_tax.sh build
#       build build/validation/syscall_tax (also done by calibrate if needed)
#   tests/validation/syscall_tax.sh calibrate [N...]      (default: 1 300 700 1000)
#       ROUNDS rounds of `0 N1 0 N2 ... 0 Nk`, one process each (CASE with
#       --samples SAMPLES), each taxed run paired with the baseline run just
#       before it, so that drift of the machine cancels out.  Prints every
#       round's per-process medians, then per N: the median baseline, the
#       median taxed value, the median of the paired differences (per op, in
#       percent, and per system call = per op / OPS).
#
#   tests/validation/syscall_tax.sh calibrate-cost NR=N[,NR=N...] [BASE]
#       the same pairing for a cost per system call (`syscall_tax --cost`):
#       ROUNDS rounds over the system-call-bound cases (COST_CASES), each a
#       baseline process (--cost BASE; without it every call of the spec at
#       0: all answered at once) then a taxed one; prints per case the median baseline, the median
#       taxed value and the median of the paired changes in percent.  For
#       one relative slowdown on every case, e.g. +10%.
#
# Environment: CASE (default "lat_syscall null"; a binary in BIN and its
# arguments), OPS (system calls per op of CASE, default 1: e.g. 2 for
# "lat_syscall open", which is open+close), ROUNDS (default 5), SAMPLES
# (default 5), BIN (default build/bin), CC (default cc).
#
# Takes about ROUNDS * 2 * (number of N) short processes: with the defaults,
# 40 processes, about 5 seconds on a 2-CPU VM (longer with more N or rounds).  Run on a quiet machine,
# nothing else benchmarking.  The cost of a BPF instruction depends on
# whether the filter is JIT-compiled (/proc/sys/net/core/bpf_jit_enable,
# printed), and every filter also costs a fixed amount on every system call
# (seccomp's slower entry path), so even N = 1 is a visible slowdown.
#
# Measured on a 2-CPU Firecracker VM (AMD EPYC, Linux 6.18, PTI, retpolines,
# JIT on), where the null system call takes about 1000-1200 ns: any filter
# costs about 120 ns per system call (N = 1: +11..12% on null; a cached
# constant-allow filter would cost about 40 ns, the entry path alone), then
# about 0.3 ns per instruction (one cycle), a few tens of ns more per extra
# filter (every 4094 instructions).  N = 700 adds about 300-350 ns per system
# call (null, stat, open+close, sigaction alike); bw_mem and lat_mem_rd do not
# move (under 1%).
set -eu
cd "$(dirname "$0")/../.."
BIN=${BIN:-build/bin}
CASE=${CASE:-lat_syscall null}
OPS=${OPS:-1}
ROUNDS=${ROUNDS:-5}
SAMPLES=${SAMPLES:-5}
TAX=build/validation/syscall_tax
SRC=tests/validation/syscall_tax.c

die() { echo "syscall_tax.sh: $*" >&2; exit 1; }

# median(a, k): the median of a[1..k] (sorts a in place); both summaries use it
AWK_MEDIAN='
function median(a, k,   i, j, x) {
  for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
  return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}'

build() {
  if [ ! -x "$TAX" ] || [ -n "$(find "$SRC" -newer "$TAX")" ]; then
    mkdir -p build/validation
    ${CC:-cc} -O2 -Wall -Wextra -Werror -o "$TAX" "$SRC" || die "building $TAX failed"
  fi
}

# measure TAXARGS -> "VALUE UNIT" of one process of CASE under `syscall_tax
# TAXARGS` (N, or --cost SPEC): the median ns_per_op of its JSON lines (the
# stderr line is for people: its unit changes with the size of the value)
measure() {
  # shellcheck disable=SC2086  # CASE and TAXARGS are command lines, split on purpose
  out=$("$TAX" $1 -- "$BIN"/$CASE --samples "$SAMPLES" 2>/dev/null) ||
    die "$1: $CASE failed"
  v=$(printf '%s\n' "$out" | sed -n 's/.*"ns_per_op":\([0-9.][0-9.e+-]*\).*/\1/p' | sort -g |
      awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
  [ -n "$v" ] || die "N=$1: no ns_per_op in the JSON lines of $CASE"
  echo "$v ns/op"
}

calibrate() {
  build
  [ $# -gt 0 ] || set -- 1 300 700 1000
  for n in "$@"; do
    case $n in '' | *[!0-9]*) die "N must be a non-negative integer, got '$n'" ;; esac
  done
  ns=$*
  # shellcheck disable=SC2086
  set -- $CASE
  [ -x "$BIN/$1" ] || die "$BIN/$1 not found (run make first, or set BIN)"
  # shellcheck disable=SC2086
  set -- $ns
  jit=$(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null || echo unknown)
  echo "case: $CASE --samples $SAMPLES  ($OPS syscall(s) per op), $ROUNDS rounds of: $(for n in "$@"; do printf '0 %s ' "$n"; done)"
  echo "kernel $(uname -r), bpf_jit_enable=$jit, $(grep '^Seccomp_filters' /proc/self/status 2>/dev/null | tr -s '\t' ' ' || echo 'Seccomp_filters: ?') already on this shell"
  tmp=$(mktemp)
  trap 'rm -f "$tmp"' EXIT
  unit=
  r=1
  while [ "$r" -le "$ROUNDS" ]; do
    line="round $r:"
    for n in "$@"; do
      b=$(measure 0); t=$(measure "$n")
      unit=${b#* }
      echo "$n ${b% *} ${t% *}" >> "$tmp"
      line="$line  0:${b% *} $n:${t% *}"
    done
    echo "$line"
    r=$((r + 1))
  done
  echo "per N, medians over $ROUNDS rounds ($unit; added = taxed minus the baseline run just before it):"
  awk -v ops="$OPS" -v unit="$unit" -v order="$*" "$AWK_MEDIAN"'
    { k = ++cnt[$1]; B[$1, k] = $2 + 0; T[$1, k] = $3 + 0; D[$1, k] = $3 - $2; P[$1, k] = 100 * ($3 - $2) / $2 }
    END {
      printf "%8s %12s %12s %12s %9s %18s\n", "N", "baseline", "taxed", "added/op", "added%", "added ns/syscall"
      m = split(order, ns, " ")
      for (i = 1; i <= m; i++) {
        n = ns[i]; k = cnt[n]
        for (j = 1; j <= k; j++) { b[j] = B[n, j]; t[j] = T[n, j]; d[j] = D[n, j]; p[j] = P[n, j] }
        dm = median(d, k)
        per = (unit == "ns/op") ? sprintf("%+.4g", dm / ops) : "-"
        printf "%8s %12.6g %12.6g %+12.4g %+8.1f%% %18s\n", n, median(b, k), median(t, k), dm, median(p, k), per
      }
    }' "$tmp"
}

COST_CASES=${COST_CASES:-"lat_syscall null
lat_syscall read
lat_syscall write
lat_syscall stat
lat_syscall fstat
lat_syscall open
lat_sig install"}

calibrate_cost() {
  build
  [ $# -eq 1 ] || [ $# -eq 2 ] || die "calibrate-cost wants NR=N[,NR=N...] and at most one baseline spec"
  spec=$1
  # the baseline: the second spec, or every call of the first at 0 (answered at once, cached)
  zero=${2:-$(printf '%s\n' "$spec" | tr ',' '\n' | sed 's/=.*/=0/' | paste -sd, -)}
  "$TAX" --cost "$spec" -- true || die "syscall_tax refused --cost $spec"
  "$TAX" --cost "$zero" -- true || die "syscall_tax refused the baseline --cost $zero"
  echo "--cost $spec against --cost $zero, $ROUNDS rounds, $SAMPLES samples a process"
  echo "kernel $(uname -r), bpf_jit_enable=$(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null || echo unknown)"
  tmp=$(mktemp)
  trap 'rm -f "$tmp"' EXIT
  r=1
  while [ "$r" -le "$ROUNDS" ]; do
    printf '%s\n' "$COST_CASES" | while IFS= read -r CASE; do
      [ -n "$CASE" ] || continue
      # shellcheck disable=SC2086
      set -- $CASE
      [ -x "$BIN/$1" ] || die "$BIN/$1 not found (run make first, or set BIN)"
      b=$(measure "--cost $zero"); t=$(measure "--cost $spec")
      echo "$CASE|${b% *}|${t% *}" >> "$tmp"
    done
    echo "round $r done"
    r=$((r + 1))
  done
  awk -F'|' "$AWK_MEDIAN"'
    { if (!($1 in cnt)) order[++m] = $1; k = ++cnt[$1]; B[$1, k] = $2; T[$1, k] = $3; P[$1, k] = 100 * ($3 - $2) / $2 }
    END {
      printf "%-20s %12s %12s %9s %15s\n", "case", "baseline", "taxed", "added%", "paired range"
      for (i = 1; i <= m; i++) {
        c = order[i]; k = cnt[c]; lo = hi = P[c, 1]
        for (j = 1; j <= k; j++) { b[j] = B[c, j]; t[j] = T[c, j]; p[j] = P[c, j]; if (p[j] < lo) lo = p[j]; if (p[j] > hi) hi = p[j] }
        printf "%-20s %12.6g %12.6g %+8.1f%% %+6.1f..%+.1f%%\n", c, median(b, k), median(t, k), median(p, k), lo, hi
      }
    }' "$tmp"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
  build) build ;;
  calibrate) calibrate "$@" ;;
  calibrate-cost) calibrate_cost "$@" ;;
  *) echo "usage: $0 build | calibrate [N...] | calibrate-cost NR=N[,NR=N...] [BASE]   (env: CASE OPS ROUNDS SAMPLES COST_CASES BIN CC)" >&2; exit 2 ;;
esac
