#!/bin/sh
# within_session.sh — the comparisons of one campaign of A and B runs made
# in one session: A/B at one to four runs a side, and A/A and B/B.
#
#   tests/validation/within_session.sh DIR OUT
#
# DIR: a directory of first_comparison.sh with four runs labelled base1-4
# (A: getppid through seccomp at no cost) and four labelled one1-4 (B:
# getppid alone slower), made in the order A B B A A B B A:
#   RUNS="base1 one1 one2 base2 base3 one3 one4 base4" NONE=1 CAL=0 \
#     tests/validation/first_comparison.sh
# A side's runs are copied into one kernel directory under OUT/sets and
# compared by scripts/compare with --no-history (sides.sh); every
# comparison's text, CSV and stderr go to OUT, and one line each is printed:
# flags besides getppid, getppid's change and verdict, the median mde.
# shellcheck disable=SC2046,SC2086  # (lists of run directories, one word each, split on purpose)
set -eu
[ $# -eq 2 ] || { echo "usage: $0 DIR OUT" >&2; exit 2; }
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
DIR=$(abs "$1") OUT=$(abs "$2")
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

. "$ROOT/tests/validation/sides.sh"
A=$(runs "$DIR" base) B=$(runs "$DIR" one)
for v in "$A" "$B"; do
  [ "$(echo "$v" | grep -c .)" -ge 4 ] || {
    echo "within_session: DIR needs 4 runs labelled base* and 4 labelled one* (the *.dir files" \
      "first_comparison.sh writes)" >&2; exit 2; }
done
mkdir -p "$OUT/sets"
side() {  # side NAME LIST N...: a side of the runs N... of LIST (A or B)
  name=$1 list=$2; shift 2
  set_of "$name" $(for i in "$@"; do pick "$list" "$i"; done)
}
{
  cmp ab_k4 "$(side A1234 "$A" 1 2 3 4)" "$(side B1234 "$B" 1 2 3 4)"
  cmp ab_k3_123 "$(side A123 "$A" 1 2 3)" "$(side B123 "$B" 1 2 3)"
  cmp ab_k3_234 "$(side A234 "$A" 2 3 4)" "$(side B234 "$B" 2 3 4)"
  cmp ab_k2_12 "$(side A12 "$A" 1 2)" "$(side B12 "$B" 1 2)"
  cmp ab_k2_34 "$(side A34 "$A" 3 4)" "$(side B34 "$B" 3 4)"
  for i in 1 2 3 4; do
    cmp ab_k1_$i "$(side A$i "$A" $i)" "$(side B$i "$B" $i)"
  done
  cmp aa_k2 "$(side A12 "$A" 1 2)" "$(side A34 "$A" 3 4)"
  cmp bb_k2 "$(side B12 "$B" 1 2)" "$(side B34 "$B" 3 4)"
  for p in "1 2" "2 3" "3 4" "1 4"; do
    set -- $p
    cmp aa_k1_$1$2 "$(side A$1 "$A" $1)" "$(side A$2 "$A" $2)"
    cmp bb_k1_$1$2 "$(side B$1 "$B" $1)" "$(side B$2 "$B" $2)"
  done
} | tee "$OUT/summary.txt"
