#!/bin/sh
# harness.sh — what the harness adds (issue 2's acceptance figures).
#
# 1. lat_harness empty: the timed loop alone, ns per turn.
# 2. lat_syscall null against a hand-written getppid loop timed the same way:
#    ROUNDS alternating processes of each, 10 samples each, the same
#    iteration count; prints the median of the per-process medians of both
#    and their ratio. Run on a quiet machine; nothing else benchmarking.
set -eu
cd "$(dirname "$0")/../.."
BIN=${BIN:-build/bin}
ROUNDS=${ROUNDS:-15}
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O2 -o "$tmp/handloop" tests/validation/handloop_getppid.cpp

med() { $PY -c 'import sys,statistics; v=[float(x) for x in sys.stdin if x.strip()]; print(statistics.median(v))'; }
json_med() { $PY -c 'import sys,json,statistics; print(statistics.median(json.loads(l)["ns_per_op"] for l in sys.stdin))'; }

echo "lat_harness empty (5 processes):"
for i in 1 2 3 4 5; do "$BIN/lat_harness" empty 2>/dev/null | json_med; done | med | sed 's/^/  median ns per loop turn: /'

iters=$("$BIN/lat_syscall" null --samples 1 2>/dev/null | $PY -c 'import sys,json; print(json.loads(sys.stdin.readline())["iters"])')
echo "lat_syscall null vs hand loop, $ROUNDS rounds, $iters iterations per sample:"
: > "$tmp/h"; : > "$tmp/k"
r=0
while [ $r -lt "$ROUNDS" ]; do
  "$BIN/lat_syscall" null --iters "$iters" --warmup-ms 5 --samples 10 2>/dev/null | json_med >> "$tmp/k"
  "$tmp/handloop" "$iters" 10 | med >> "$tmp/h"
  r=$((r + 1))
done
$PY - "$tmp/k" "$tmp/h" <<'PYEOF'
import statistics, sys
k = [float(x) for x in open(sys.argv[1])]
h = [float(x) for x in open(sys.argv[2])]
mk, mh = statistics.median(k), statistics.median(h)
print(f"  lat_syscall null: median {mk:.1f} ns (per-process medians {min(k):.1f}..{max(k):.1f})")
print(f"  hand loop:        median {mh:.1f} ns (per-process medians {min(h):.1f}..{max(h):.1f})")
print(f"  ratio harness/hand: {mk / mh:.3f}  ({100 * (mk / mh - 1):+.1f}%)")
PYEOF
