#!/bin/sh
# headline_reps.sh — what --headline-reps buys and costs: default runs (as
# `make run`: kbench-run --budget BUDGET --scaling) alternating two values
# of --headline-reps in the order A B B A A B B A ..., each run under the
# machine-wide lock /tmp/kbench-quiet.lock, so that both plans meet the
# same moments of the machine.  Every run's directory goes to OUT/LABEL.dir
# (LABEL: reps<N>-<i>); `run_level.py --data OUT/data` then judges each
# plan's runs as a series of its own (OUT/data/index.txt, written here).
#
#   OUT=DIR [A=20] [B=40] [PAIRS=3] [BUDGET=300] [BUDGET_B=BUDGET] tests/validation/headline_reps.sh
#
# BUDGET_B: the budget of B's runs (what B's reps would cost the other
# cases with the time they took from them given back).
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-results-validation/headline-$(date -u +%Y%m%dT%H%M%SZ)}
A=${A:-20}
B=${B:-40}
PAIRS=${PAIRS:-3}
BUDGET=${BUDGET:-300}
BUDGET_B=${BUDGET_B:-$BUDGET}
LOCK=/tmp/kbench-quiet.lock

make -s all
mkdir -p "$OUT/data"
index="$OUT/data/index.txt"
echo "# role run-id: headline_reps.sh, --headline-reps $A (--budget $BUDGET) against $B (--budget $BUDGET_B), A B B A ..., each plan a series of its own" > "$index"
i=0
n=0
while [ "$i" -lt "$PAIRS" ]; do
  i=$((i + 1))
  for v in $A $B $B $A; do
    n=$((n + 1))
    label="reps$v-$n"
    budget=$BUDGET
    [ "$v" = "$B" ] && budget=$BUDGET_B
    echo "headline_reps: $(date -u +%H:%M:%S) run $label (--headline-reps $v --budget $budget)" >&2
    dir=$(flock "$LOCK" build/bin/kbench-run --no-table --budget "$budget" --scaling --headline-reps "$v" \
          --out "$OUT/$label")
    echo "$dir" > "$OUT/$label.dir"
    ln -sfn "$(cd "$dir" && pwd)" "$OUT/data/$(basename "$dir")"
    echo "reps$v-aa $(basename "$dir")" >> "$index"
    sleep 2   # lets a waiting holder of the lock in between runs
  done
done
echo "headline_reps: $(date -u +%H:%M:%S) done: $OUT" >&2
