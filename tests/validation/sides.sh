# sides.sh — sourced by across_sessions.sh and within_session.sh: the runs
# of a first_comparison.sh directory, a side made of copies of some of them,
# and one comparison by scripts/compare, summed up in one line.
# Needs ROOT (the repository) and OUT (where the sides and comparisons go).
# shellcheck shell=sh disable=SC2046,SC2086
runs() {  # runs DIR PREFIX: the run directories of base* or one* labels, in label order
  printf '%s\n' "$1"/"$2"*.dir | sort -V | while read -r f; do [ ! -f "$f" ] || cat "$f"; done
}
pick() { echo "$1" | sed -n "$2p"; }   # pick LIST N..M
set_of() {  # set_of NAME RUN...: a kernel directory of copies of the runs
  name=$1; shift
  first=$1
  d="$OUT/sets/$name/$(basename "$(dirname "$(dirname "$first")")")/$(basename "$(dirname "$first")")"
  if [ ! -d "$d" ]; then mkdir -p "$d"; for r in "$@"; do cp -r "$r" "$d/"; done; fi
  echo "$d"
}
hist() { dirname "$(dirname "$(set_of "$@")")"; }
cmp() {  # cmp LABEL BASE OTHER [compare options]
  l=$1 b=$2 o=$3; shift 3
  rc=0
  /usr/bin/python3 "$ROOT/scripts/compare" "$b" "$o" --no-history --csv "$OUT/$l.csv" "$@" \
    > "$OUT/$l.txt" 2> "$OUT/$l.err" || rc=$?
  [ $rc -le 1 ] || { echo "${0##*/}: compare failed on $l (see $OUT/$l.err)" >&2; exit 1; }
  /usr/bin/python3 - "$OUT/$l.csv" "$l" <<'EOF'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if not r["case"].startswith("ctl_")]
flags = [f"{r['case']} {r['change']}" for r in rows if r["verdict"].startswith("significantly")
         and r["case"] != "lat_syscall null"]
null = [r for r in rows if r["case"] == "lat_syscall null"]
mde = [float(r["mde_pct"]) for r in rows if r["mde_pct"] not in ("", "nan")]
g = f"{null[0]['change']}, {null[0]['verdict']}, mde {float(null[0]['mde_pct']):.1f}%" if null else "-"
print(f"{sys.argv[2]}: flags {flags or 'none'}; getppid {g}; median mde {statistics.median(mde):.1f}%")
EOF
}
