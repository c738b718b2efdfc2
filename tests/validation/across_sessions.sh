#!/bin/sh
# across_sessions.sh — a kernel's runs of one session against its runs of
# another: A/A, B/B and A/B across the sessions, and A/B within the later one.
#
#   tests/validation/across_sessions.sh OLD NEW OUT
#
# OLD and NEW: two directories of first_comparison.sh made at least an hour
# apart (two sessions), each with runs labelled base1, base2, ... (A: getppid
# through seccomp at no cost) and one1, one2, ... (B: getppid alone slower),
# e.g. RUNS="base1 one1 one2 base2 base3 one3" NONE=1 CAL=0 for each.  The
# runs are copied into one kernel directory per side under OUT/sets (their
# meta.json as made: the sessions come from the runs' start times) and
# compared by scripts/compare with --no-history (a history where named);
# every comparison's text, CSV and stderr go to OUT, and one line each is
# printed: flags besides getppid, getppid's change and verdict, the median mde.
# shellcheck disable=SC2046,SC2086  # (lists of run directories, one word each, split on purpose)
set -eu
[ $# -eq 3 ] || { echo "usage: $0 OLD NEW OUT" >&2; exit 2; }
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
OLD=$(abs "$1") NEW=$(abs "$2") OUT=$(abs "$3")
# (the runs' paths in the *.dir files are as first_comparison.sh wrote them: from the repository)
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

. "$ROOT/tests/validation/sides.sh"
OA=$(runs "$OLD" base) OB=$(runs "$OLD" one) NA=$(runs "$NEW" base) NB=$(runs "$NEW" one)
for v in "$OA" "$OB" "$NA" "$NB"; do
  [ "$(echo "$v" | grep -c .)" -ge 3 ] || {
    echo "across_sessions: OLD and NEW each need 3 runs labelled base* and 3 labelled one* (the *.dir" \
      "files first_comparison.sh writes)" >&2; exit 2; }
done
mkdir -p "$OUT/sets"
oA=$(pick "$OA" 1,3) oB=$(pick "$OB" 1,3) nA=$(pick "$NA" 1,3) nB=$(pick "$NB" 1,3)
{
  cmp aa_k1 "$(set_of oA1 $(pick "$OA" 3))" "$(set_of nA1 $(pick "$NA" 1))"
  cmp aa_k2 "$(set_of oA2 $(pick "$OA" 2,3))" "$(set_of nA2 $(pick "$NA" 1,2))"
  cmp aa_k3 "$(set_of oA $oA)" "$(set_of nA $nA)"
  cmp aa_k3_histB "$(set_of oA $oA)" "$(set_of nA $nA)" --history "$(hist hB $oB $nB)"
  cmp bb_k3 "$(set_of oB $oB)" "$(set_of nB $nB)"
  cmp bb_k3_histA "$(set_of oB $oB)" "$(set_of nB $nB)" --history "$(hist hA $oA $nA)"
  cmp ab_across_k1 "$(set_of oA1 $(pick "$OA" 3))" "$(set_of nB1 $(pick "$NB" 1))"
  cmp ab_across_k3 "$(set_of oA $oA)" "$(set_of nB $nB)"
  cmp ba_across_k3 "$(set_of oB $oB)" "$(set_of nA $nA)"
  cmp ab_new_k3 "$(set_of nA $nA)" "$(set_of nB $nB)"
  cmp ab_new_k3_histA "$(set_of nA $nA)" "$(set_of nB $nB)" --history "$(hist hoA $oA)"
  for i in 1 2 3; do
    cmp ab_new_k1_$i "$(set_of nA1_$i $(pick "$NA" $i))" "$(set_of nB1_$i $(pick "$NB" $i))"
  done
}
