#!/usr/bin/env bash
# Runs the Catch2 test binary and ends with the plain line
# "N passed, N failed, N skipped" (test cases), exiting non-zero on any failure or crash.
# The [cuda] tests need a GPU: when the binary cannot use one (a CPU build, or no GPU
# answered) they are not run, and are counted as skipped, never as passed.
# Usage: scripts/run-tests.sh BINARY [FILTER] [TAGS]
#   FILTER: a substring of test names; TAGS: a Catch2 test spec such as "[threads],[ops]"
set -uo pipefail
bin=$1
filter=${2:-}
args=()
[ -n "$filter" ] && args+=("*${filter}*")
[ -n "${3:-}" ] && args+=("$3")
skipped=0
if ! "$bin" "[cuda-probe]" >/dev/null 2>&1; then
  # separate test specs combine with AND in Catch2
  skipped=$("$bin" --list-test-names-only "${args[@]}" "[cuda]" 2>/dev/null | grep -c .)
  if [ "$skipped" -gt 0 ]; then
    echo "skipping $skipped [cuda] test cases: no GPU usable by this binary (build with make CUDA=1 on a GPU machine)"
    args+=("~[cuda]")
  fi
fi
# with any test spec given, Catch2 also runs hidden tests that match it: keep them out
[ "${#args[@]}" -gt 0 ] && args+=("~[.]")
log=$(mktemp)
"$bin" "${args[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# Catch2 v2 ends with "All tests passed (A assertions in N test cases)" or
# "test cases: N | P passed | F failed".
if line=$(grep -aE '^All tests passed' "$log" | tail -1) && [ -n "$line" ]; then
  passed=$(sed -E 's/.* in ([0-9]+) test case.*/\1/' <<<"$line"); failed=0
elif line=$(grep -aE '^test cases:' "$log" | tail -1) && [ -n "$line" ]; then
  passed=$(sed -E 's/.*\| *([0-9]+) passed.*/\1/' <<<"$line")
  grep -q 'passed' <<<"$line" || passed=0
  failed=$(sed -E 's/.*\| *([0-9]+) failed.*/\1/' <<<"$line")
  grep -q 'failed' <<<"$line" || failed=0
elif grep -aq '^No test cases matched' "$log" && [ "$skipped" -gt 0 ]; then
  passed=0; failed=0; rc=0  # the filter matched [cuda] tests only, all skipped
else
  echo "test binary ended without a summary (exit code $rc): counted as one failure"
  passed=0; failed=1
fi
rm -f "$log"
[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
