#!/usr/bin/env bash
# Runs the Catch2 test binary and ends with the plain line
# "N passed, N failed, N skipped" (test cases), exiting non-zero on any failure or crash.
# Tests that need what this machine or build may lack are not run without it, and are
# counted as skipped, never as passed, each kind on a line with the reason:
# - [cuda]: a GPU (a CPU build, or no GPU answered), asked with the hidden [cuda-probe];
# - [needs-fortunes], [needs-fashion-mnist], [needs-mpi], [needs-unshare],
#   [needs-address-limit]: a package, mpirun and the MPI build, a user namespace, programs
#   that start under ulimit -v (tests/needs.h), asked with the hidden
#   [needs-X-probe], which prints "missing: <why>" when it fails.
# Usage: scripts/run-tests.sh BINARY [FILTER] [TAGS]
#   FILTER: a substring of test names; TAGS: a Catch2 test spec such as "[threads],[ops]"
set -uo pipefail
bin=$1
filter=${2:-}
# A Catch2 test spec is a list of alternatives separated by commas (OR); the parts of one
# alternative, written one after another, must all hold (AND). So the name filter and
# every exclusion are added to each alternative of TAGS, the name last: a name pattern
# runs on (spaces included) until a '[' or a ','.
alternatives=()
IFS=',' read -ra alternatives <<<"${3:-}"
[ "${#alternatives[@]}" -eq 0 ] && alternatives=("")
name=""
[ -n "$filter" ] && name="*${filter}*"
excluded=""
spec() {  # spec [PART]: this run's test spec, PART added to every alternative
  local out="" a
  for a in "${alternatives[@]}"; do out+="${out:+,}${a}${excluded}${1:-}${name}"; done
  printf '%s' "$out"
}
skipped=0
# skip TAG REASON: leaves the tests tagged TAG out of the run (of those still in it) and
# counts them as skipped; a test with two missing needs is counted once.
skip() {
  local n
  n=$("$bin" --list-test-names-only "$(spec "$1")" 2>/dev/null | grep -c .)
  if [ "$n" -gt 0 ]; then
    echo "skipping $n $1 test cases: $2"
    skipped=$((skipped + n))
    excluded+="~$1"
  fi
}
if ! "$bin" "[cuda-probe]" >/dev/null 2>&1; then
  skip "[cuda]" "no GPU usable by this binary (build with make CUDA=1 on a GPU machine)"
fi
for need in fortunes fashion-mnist mpi unshare address-limit; do
  if ! probe=$("$bin" "[needs-$need-probe]" 2>&1); then
    why=$(sed -n 's/^missing: //p' <<<"$probe" | head -1)
    skip "[needs-$need]" "${why:-its probe [needs-$need-probe] failed}"
  fi
done
# with any test spec given, Catch2 also runs hidden tests that match it: keep them out
args=()
[ -n "$(spec)" ] && args+=("$(spec "~[.]")")
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
  passed=0; failed=0; rc=0  # the filter matched skipped tests only
else
  echo "test binary ended without a summary (exit code $rc): counted as one failure"
  passed=0; failed=1
fi
rm -f "$log"
[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
