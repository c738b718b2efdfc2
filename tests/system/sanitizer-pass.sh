#!/bin/sh
# sanitizer-pass.sh — run the tests against a sanitizer build (make test-asan,
# make test-tsan call it after building).
#
#   sanitizer-pass.sh asan BUILD      unit tests, the fuzz corpus replayed,
#                                     the pytest tests that run something of
#                                     BUILD (pytest --build-tests-only: not
#                                     tests/scripts, not the tests of the
#                                     Makefile, the README or scripts/vm-run,
#                                     which run no C++, nor those under
#                                     strace) and a quick driver run
#                                     (one case per binary)
#   sanitizer-pass.sh tsan BUILD B..  every --list case of the binaries B once
#   sanitizer-pass.sh binaries BUILD  the unit tests, the fuzz corpus (when
#                                     BUILD has its replays) and the quick
#                                     driver run alone: a part of the asan
#                                     pass, and make test's check of the
#                                     plain build
#
# The asan parts run at once (tests/parallel.py: most of a pytest session
# waits on the driver), each reported as it ends: the binaries (unit tests,
# corpus, quick run) and pytest in parts (tests/parallel.py, PYTEST_PARTS).
#
# Every process writes its ASan, LeakSanitizer and TSan reports to
# BUILD/san-logs/ (log_path), not to stderr, so that a report in a partner, a
# forked child or a process whose exit code nobody checks is still seen. Any
# file there fails the pass; the reports are printed. GCC's UBSan runtime
# ignores log_path when linked with ASan (clang's honours it): its reports go
# to stderr and the process exits 23, which no test accepts as a benchmark's
# 0, 1, 2 or 77. Leak detection is on everywhere. The tests that run binaries
# under strace (their names contain "strace": runs_under_strace in
# tests/conftest.py, which --build-tests-only leaves out) are the plain pass's only:
# LeakSanitizer cannot run under ptrace, they run cases that the other tests
# run here, and what they check (the calls the kernel sees) is no
# sanitizer's business.
set -u
mode=${1:?usage: sanitizer-pass.sh asan|tsan|binaries BUILD [BINARIES]}
build=${2:?usage: sanitizer-pass.sh asan|tsan|binaries BUILD [BINARIES]}
shift 2
PYTHON=${PYTHON:-/usr/bin/python3}
root=$(pwd)
logs=$root/$build/san-logs
if [ "$mode" != binaries ]; then  # a part of a pass: set up by the pass
  rm -rf "$logs"
  mkdir -p "$logs"
  chmod 1777 "$logs"  # the unprivileged tests (uid 65534) report here too
  # exitcode=23: a sanitizer's exit is not mistaken for a benchmark's 1 or 77.
  asan_options="abort_on_error=0:halt_on_error=1:exitcode=23:log_path=$logs/asan"
  export ASAN_OPTIONS="detect_leaks=1:$asan_options"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=23:log_path=$logs/ubsan"
  export TSAN_OPTIONS="halt_on_error=1:exitcode=23:log_path=$logs/tsan"
fi
status=0
step() { printf '== %s: %s\n' "$mode" "$*" >&2; }
fail() { printf '== %s: FAILED: %s\n' "$mode" "$*" >&2; status=1; }

if [ "$mode" = binaries ]; then
  # One part of the asan pass (its environment set by it), or of make test's
  # plain pass (BUILD: the plain build).
  step "unit tests"
  "$build/tests/unit_tests" || fail "unit tests"

  for replay in "$build"/tests/replay_*; do
    [ -x "$replay" ] || continue
    target=${replay##*/replay_}
    step "fuzz corpus tests/fuzz/corpus/$target"
    "$replay" "tests/fuzz/corpus/$target" || fail "replay of tests/fuzz/corpus/$target"
  done

  # One case of every binary, both quick reps: the driver's whole path
  # (discovery, spawning, judging, resume bookkeeping, the end table).
  step "quick driver run, one case per binary"
  out=$(mktemp -d "${TMPDIR:-/tmp}/kbench-asan-run-XXXXXX")
  only=$("$build/bin/kbench-run" --list 2>/dev/null | awk '!/^#/ && !seen[$1]++' |
         sed 's/[][\.*^$+?(){}|]/\\&/g' | paste -sd'|' -)
  if [ -z "$only" ]; then
    fail "kbench-run --list found no case"
  elif ! "$build/bin/kbench-run" --quick --out "$out" --only "^($only)\$" >"$out/stdout" 2>"$out/stderr"; then
    cat "$out/stderr" >&2
    fail "quick driver run (results kept in $out)"
  else
    tail -n 1 "$out/stderr" >&2
    rm -rf "$out"
  fi
  exit $status
elif [ "$mode" = asan ]; then
  # The parts read these (tests/parallel.py runs them with this environment).
  export KBENCH_BUILD="$build" PYTHON
  pytest='"$PYTHON" -m pytest -q -rs -p no:cacheprovider --build-tests-only'
  "$PYTHON" tests/parallel.py \
    --job "the binaries: unit tests, fuzz corpus, quick driver run" "tests/system/sanitizer-pass.sh binaries $build" \
    --pytest "$pytest" \
    || fail "a part of the pass"
elif [ "$mode" = tsan ]; then
  [ $# -gt 0 ] || step "no binary uses threads: nothing to run"
  for b in "$@"; do
    step "every case of $b"
    "$PYTHON" - "$build/bin/$b" <<'EOF' || fail "$b under ThreadSanitizer"
import json, subprocess, sys
binary = sys.argv[1]
cases = [json.loads(l) for l in subprocess.run([binary, "--list"], capture_output=True, text=True,
                                                check=True).stdout.splitlines()]
bad = 0
for c in cases:
    args = [binary] + c["args"] + ["--iters", "200", "--samples", "3", "--warmup-ms", "0"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    ok = p.returncode == 0 or (p.returncode == 77 and "skipped:" in p.stderr)
    print(f"  {c['case']}: exit {p.returncode}", file=sys.stderr)
    if not ok:
        bad += 1
        print(p.stderr, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
  done
else
  echo "sanitizer-pass.sh: unknown mode '$mode'" >&2
  exit 2
fi

if [ -n "$(ls -A "$logs")" ]; then
  for f in "$logs"/*; do
    printf '== %s: sanitizer report %s\n' "$mode" "$f" >&2
    cat "$f" >&2
  done
  fail "sanitizer reports above (kept in $logs)"
fi
[ $status -eq 0 ] && step "passed"
exit $status
