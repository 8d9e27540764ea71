#!/usr/bin/env bash
# Runs the Catch2 test binary and ends with the plain line "N passed, N failed"
# (test cases), exiting non-zero on any failure or crash.
# Usage: scripts/run-tests.sh BINARY [FILTER] [TAGS]
#   FILTER: a substring of test names; TAGS: a Catch2 test spec such as "[threads],[ops]"
set -uo pipefail
bin=$1
filter=${2:-}
args=()
[ -n "$filter" ] && args+=("*${filter}*")
[ -n "${3:-}" ] && args+=("$3")
log=$(mktemp)
"$bin" "${args[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# Catch2 v2 ends with "All tests passed (A assertions in N test cases)" or
# "test cases: N | P passed | F failed".
if line=$(grep -E '^All tests passed' "$log" | tail -1) && [ -n "$line" ]; then
  passed=$(sed -E 's/.* in ([0-9]+) test case.*/\1/' <<<"$line"); failed=0
elif line=$(grep -E '^test cases:' "$log" | tail -1) && [ -n "$line" ]; then
  passed=$(sed -E 's/.*\| *([0-9]+) passed.*/\1/' <<<"$line")
  grep -q 'passed' <<<"$line" || passed=0
  failed=$(sed -E 's/.*\| *([0-9]+) failed.*/\1/' <<<"$line")
  grep -q 'failed' <<<"$line" || failed=0
else
  echo "test binary ended without a summary (exit code $rc): counted as one failure"
  passed=0; failed=1
fi
rm -f "$log"
[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
