#!/bin/bash
# soak.sh — run the quick suite N times in a row and check that the machine
# is left as it was (issue 8).
#
#   tests/soak.sh [N] [extra kbench-run options...]     N defaults to 20
#
#   KBENCH_BUILD=build/asan tests/soak.sh 3    the same on another build
#   tests/soak.sh 2 --only '^lat_(pipe|fs) '   a shorter check of the script
#
# Each iteration is `kbench-run --quick --no-table --out OUT` (OUT kept
# outside /tmp, removed at the end unless SOAK_KEEP=1). Checked, with the
# differences printed:
#   - processes: no process of a benchmark binary, of the driver or of the
#     exec helper is left (by name), and none is a zombie; other new
#     processes on this shared machine are listed, not failed;
#   - the driver's descriptors: /proc/<pid>/fd is sampled through every run;
#     the largest count may not exceed the first run's by more than the 2
#     pipe ends open while a child is being spawned, nor exceed 32;
#   - temporary files: no new kbench-* entry in /tmp or $TMPDIR; the total
#     number of entries in /tmp is reported (others use it too);
#   - sockets: no new listening TCP socket (IPv4/IPv6), no new bound UDP
#     socket, no new listening Unix socket;
#   - every driver run exits 0 (1 would mean a case failed: listed).
# Exit status 0 only if every check passed in every iteration.
set -u
n=${1:-20}
shift $(( $# > 0 ? 1 : 0 ))
case $n in ''|*[!0-9]*) echo "usage: tests/soak.sh [N] [kbench-run options...]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.." || exit 2
build=${KBENCH_BUILD:-build}
driver=$build/bin/kbench-run
[ -x "$driver" ] || { echo "soak: $driver missing: run make first" >&2; exit 2; }
out=$(mktemp -d "${SOAK_OUT_BASE:-/var/tmp}/kbench-soak-XXXXXX") || exit 2
tmpdirs=/tmp
[ -n "${TMPDIR:-}" ] && [ "$TMPDIR" != /tmp ] && tmpdirs="/tmp $TMPDIR"

names="kbench-run kbench-exec-hel"
for b in "$build"/bin/*; do names="$names $(basename "$b" | cut -c1-15)"; done

mypgrp=$(ps -o pgid= -p $$ | tr -d ' ')
procs() {  # pid comm state, every process but this script and its subshells
  local d pid comm rest state ppid pgrp
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [ "$pid" = $$ ] && continue
    { read -r rest < "$d/stat"; } 2>/dev/null || continue  # gone since the glob
    comm=${rest#*(}; comm=${comm%)*}
    rest=${rest##*) }; state=${rest%% *}; rest=${rest#* }; ppid=${rest%% *}
    rest=${rest#* }; pgrp=${rest%% *}
    [ "$ppid" = $$ ] && continue
    [ "$pgrp" = "$mypgrp" ] && [ "$comm" = "${0##*/}" ] && continue
    echo "$pid $comm $state"
  done | sort
}
ours() {  # the processes of ours by name, from a procs() listing on stdin
  local pid comm state
  while read -r pid comm state; do
    case " $names " in *" $comm "*) echo "$pid $comm $state" ;; esac
  done
}
temp_entries() { local d; for d in $tmpdirs; do ls -1d "$d"/kbench-* 2>/dev/null; done | grep -v "^$out\$" | sort; }
tmp_count() { ls -1A /tmp | wc -l; }
sockets() {  # listening TCP, bound UDP, listening Unix sockets (local address)
  local f
  for f in /proc/net/tcp /proc/net/tcp6; do
    [ -r "$f" ] && awk -v t="${f##*/}" 'NR > 1 && $4 == "0A" { print t, $2 }' "$f"
  done
  for f in /proc/net/udp /proc/net/udp6; do
    [ -r "$f" ] && awk -v t="${f##*/}" 'NR > 1 { print t, $2 }' "$f"
  done
  [ -r /proc/net/unix ] && awk 'NR > 1 && $4 == "00010000" && $8 != "" { print "unix", $8 }' /proc/net/unix
  return 0
}

status=0
problem() { echo "soak: PROBLEM: $*" >&2; status=1; }

procs > "$out/procs.before"
temp_entries > "$out/temp.before"
sockets | sort -u > "$out/sockets.before"
tmp_before=$(tmp_count)
first_max=
echo "soak: $n runs of $driver --quick $*; results in $out" >&2

for i in $(seq 1 "$n"); do
  start=$(date +%s)
  "$driver" --quick --no-table --out "$out/results" "$@" > "$out/run$i.stdout" 2> "$out/run$i.stderr" &
  dpid=$!
  max=0 maxlist=
  while kill -0 "$dpid" 2>/dev/null; do
    fds=$(ls -1 "/proc/$dpid/fd" 2>/dev/null | wc -l)
    if [ "$fds" -gt "$max" ]; then
      max=$fds
      maxlist=$(ls -l "/proc/$dpid/fd" 2>/dev/null | awk 'NR > 1 { print $NF }' | sort | uniq -c | tr '\n' ';')
    fi
    sleep 0.2
  done
  wait "$dpid"
  rc=$?
  secs=$(( $(date +%s) - start ))
  summary=$(grep -E '^kbench-run: [0-9]+ cases?:' "$out/run$i.stderr" | tail -n 1)
  echo "soak: run $i/$n: exit $rc in ${secs}s, driver peak $max fds; ${summary#kbench-run: }" >&2
  if [ "$rc" -ne 0 ]; then
    problem "run $i: kbench-run exited $rc"
    grep -E '^kbench-run: (failed|crashed|timeout):' "$out/run$i.stderr" | sed 's/^/    /' >&2
    [ "$rc" -ne 1 ] && tail -n 5 "$out/run$i.stderr" | sed 's/^/    /' >&2
  fi
  [ -z "$first_max" ] && first_max=$max
  # Sampling every 0.2 s sometimes lands in the instant a child is being
  # spawned, when the write ends of its stdout and stderr pipes are still
  # open in the driver: 2 more than its steady count. A leak grows by at
  # least one per invocation (hundreds per run), far beyond that.
  if [ "$max" -gt 32 ] || [ "$max" -gt $((first_max + 2)) ]; then
    problem "run $i: the driver had $max descriptors open (first run: $first_max): $maxlist"
  fi

  sleep 0.5  # killed process groups are reaped by init a moment later
  left=$(procs | ours | awk '{ print $1, $2 }' | grep -vxF -f <(ours < "$out/procs.before" | awk '{ print $1, $2 }'))
  [ -n "$left" ] && problem "run $i: processes left: $(echo "$left" | tr '\n' ';')"
  new_temp=$(temp_entries | comm -13 "$out/temp.before" -)
  [ -n "$new_temp" ] && problem "run $i: temporary entries left: $(echo "$new_temp" | tr '\n' ' ')"
  new_sock=$(sockets | sort -u | comm -13 "$out/sockets.before" -)
  [ -n "$new_sock" ] && problem "run $i: sockets left: $(echo "$new_sock" | tr '\n' ';')"
done

procs > "$out/procs.after"
other=$(comm -13 <(awk '{ print $1, $2 }' "$out/procs.before") <(awk '{ print $1, $2 }' "$out/procs.after"))
[ -n "$other" ] && echo "soak: note: other processes started meanwhile (not ours by name): $(echo "$other" | tr '\n' ';')" >&2
zombies=$(awk '$3 == "Z"' "$out/procs.after" | grep -vxF -f <(awk '$3 == "Z"' "$out/procs.before"))
[ -n "$zombies" ] && problem "zombies: $(echo "$zombies" | tr '\n' ';')"
echo "soak: /tmp entries: $tmp_before before, $(tmp_count) after (shared machine: for information)" >&2

if [ "$status" -eq 0 ]; then
  echo "soak: passed: $n runs, nothing left behind" >&2
else
  echo "soak: FAILED (details above)" >&2
fi
if [ "${SOAK_KEEP:-0}" = 1 ]; then
  echo "soak: kept $out" >&2
else
  rm -rf "$out"
fi
exit $status
