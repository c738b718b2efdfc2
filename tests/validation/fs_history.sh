#!/bin/sh
# fs_history.sh — how lat_fs's cost follows what the file system did in the
# last minutes (tests/validation/README.md, "File-system history and the
# cache control").
#
#   tests/validation/fs_history.sh [ROUNDS] [DIR]
#
# After a 20 s pause (the file system settles), ROUNDS rounds (default 50),
# each: lat_fs create size_kb=10, delete size_kb=10 and create size_kb=0,
# fresh mode, 3 samples, in DIR (default $TMPDIR, else /tmp), then 0.5 s of
# sleep. Prints, per case, the median ns per op of each 10 s of the loop:
# on ext4 without a journal, creates grow as the inodes the loop freed in
# the last half minute accumulate (allocation passes over them). About a
# minute with the defaults. Run it alone on the machine.
set -eu
ROUNDS=${1:-50}
DIR=${2:-default}
BIN=${BIN:-build/bin}
PY=${PYTHON:-/usr/bin/python3}
[ -x "$BIN/lat_fs" ] || { echo "fs_history.sh: $BIN/lat_fs not built (make all)" >&2; exit 2; }
out=$(mktemp "${TMPDIR:-/tmp}/fs_history.XXXXXX")
trap 'rm -f "$out"' EXIT INT TERM
sync
sleep 20
i=0
while [ "$i" -lt "$ROUNDS" ]; do
  for c in "create size_kb=10" "delete size_kb=10" "create size_kb=0"; do
    set -- $c
    "$BIN/lat_fs" "$1" --param "$2" --param mode=fresh --param "dir=$DIR" --samples 3 2>/dev/null >>"$out"
  done
  sleep 0.5
  i=$((i + 1))
done
"$PY" - "$out" <<'PYEOF'
import collections, json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
t0 = min(r["t_start_ns"] for r in rows)
info = rows[0]
print(f"file system {info.get('fs_type')}, journal {info.get('fs_journal', 'n/a')}, options {info.get('mount_options')}")
for key in sorted({(r["variant"], r["params"]) for r in rows}):
    bins = collections.defaultdict(list)
    for r in rows:
        if (r["variant"], r["params"]) == key:
            bins[int((r["t_start_ns"] - t0) / 1e9 // 10)].append(r["ns_per_op"])
    size = key[1].split("size_kb=")[1]
    cells = " ".join(f"{b * 10:3d}s:{sorted(v)[len(v) // 2] / 1000:7.1f}" for b, v in sorted(bins.items()))
    print(f"{key[0]:6s} {size:>2s} KB  us/op per 10 s: {cells}")
PYEOF
