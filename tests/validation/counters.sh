#!/bin/sh
# counters.sh — issue 7's figures: perf software counters against getrusage,
# and the cost of counting (the same case with and without --counters).
# Run on a quiet machine; nothing else benchmarking.
set -eu
cd "$(dirname "$0")/../.."
BIN=${BIN:-build/bin}
ROUNDS=${ROUNDS:-5}
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

per_op() {  # FILE KEY... -> median over samples of sum(keys)/iters
  $PY - "$@" <<'PYEOF'
import json, statistics, sys
path, keys = sys.argv[1], sys.argv[2:]
vals = []
for line in open(path):
    s = json.loads(line)
    if any(s.get(k) is None for k in keys):
        continue
    vals.append(sum(s[k] for k in keys) / s["iters"])
print(f"{statistics.median(vals):.3f}" if vals else "n/a")
PYEOF
}

echo "== counters against getrusage (per operation, median over 10 samples)"
"$BIN/lat_pipe" rt --cpu 0 --partner-cpu 0 --counters=context_switches,task_clock_ns > "$tmp/pipe" 2>/dev/null
echo "  lat_pipe rt @same: perf context_switches $(per_op "$tmp/pipe" context_switches)," \
     "getrusage nvcsw+nivcsw $(per_op "$tmp/pipe" nvcsw nivcsw) (both sides)"
"$BIN/lat_ctx" ring --param procs=4 --param size_kb=0 --cpu 0 --partner-cpu 0 --counters=context_switches > "$tmp/ctx" 2>/dev/null
echo "  lat_ctx ring procs=4 @same: perf context_switches $(per_op "$tmp/ctx" context_switches) per hop," \
     "getrusage $(per_op "$tmp/ctx" nvcsw nivcsw)"
for v in anon file; do
  "$BIN/lat_pagefault" $v --counters=page_faults > "$tmp/pf" 2>/dev/null
  echo "  lat_pagefault $v: perf page_faults $(per_op "$tmp/pf" page_faults) per op, getrusage minflt $(per_op "$tmp/pf" minflt)"
done

echo "== the cost of counting: $ROUNDS processes each, alternating; median of per-process medians (ns/op)"
for c in "lat_syscall null" "lat_pipe rt --cpu 0 --partner-cpu 0" "lat_proc fork"; do
  : > "$tmp/off"; : > "$tmp/on"
  r=0
  while [ "$r" -lt "$ROUNDS" ]; do
    # shellcheck disable=SC2086
    "$BIN"/$c 2>/dev/null | $PY -c 'import sys,json,statistics; print(statistics.median(json.loads(l)["ns_per_op"] for l in sys.stdin))' >> "$tmp/off"
    # shellcheck disable=SC2086
    "$BIN"/$c --counters 2>/dev/null | $PY -c 'import sys,json,statistics; print(statistics.median(json.loads(l)["ns_per_op"] for l in sys.stdin))' >> "$tmp/on"
    r=$((r + 1))
  done
  $PY - "$c" "$tmp/off" "$tmp/on" <<'PYEOF'
import statistics, sys
off = [float(x) for x in open(sys.argv[2])]
on = [float(x) for x in open(sys.argv[3])]
a, b = statistics.median(off), statistics.median(on)
print(f"  {sys.argv[1]:38s} without {a:10.1f}  with {b:10.1f}  ({100 * (b / a - 1):+.1f}%)"
      f"  per-process without {min(off):.0f}..{max(off):.0f}, with {min(on):.0f}..{max(on):.0f}")
PYEOF
done
