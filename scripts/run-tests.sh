#!/usr/bin/env bash
# Runs the Catch2 test binary and ends with the plain line
# "N passed, N failed, N skipped" (test cases), exiting non-zero on any failure or crash.
# Tests that need what this machine or build may lack are not run without it, and are
# counted as skipped, never as passed, each kind on a line with the reason:
# - [cuda]: a GPU (a CPU build, or no GPU answered), asked with the hidden [cuda-probe];
# - [needs-fortunes], [needs-fashion-mnist], [needs-mpi], [needs-gnuplot], [needs-unshare],
#   [needs-address-limit]: a package, mpirun and the MPI build, gnuplot, a user namespace, programs
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
for need in fortunes fashion-mnist mpi gnuplot unshare address-limit; do
  if ! probe=$("$bin" "[needs-$need-probe]" 2>&1); then
    why=$(sed -n 's/^missing: //p' <<<"$probe" | head -1)
    skip "[needs-$need]" "${why:-its probe [needs-$need-probe] failed}"
  fi
done
# The tests are dealt out to TEST_JOBS processes (default: one per core) in chunks, each
# worker taking the next chunk when it is done, so that the long tests (a scratch build,
# whole training runs) overlap the rest: the test binary runs one test at a time, and the
# sanitizer builds' runs took minutes of CI's time on one core with the other idle.
# Each chunk's output is kept and printed once all have ended, in the tests' order.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# (the cores online: nproc answers OMP_NUM_THREADS where it is set, as make test-tsan does)
jobs=${TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
# one exact name a line (the hidden tests, [.], left out), its characters that Catch2's test
# specs read (, [ ] " ~ \) escaped; the tests that run the programs ([cli]: trainings of
# seconds, a scratch build) first, so that the long ones overlap the many short ones instead
# of ending the run on one core
names_of() { "$bin" --list-test-names-only "$(spec "~[.]$1")" 2>/dev/null | grep . | sed -e 's/[][\\,"~]/\\&/g'; }
{ names_of "[cli]"; names_of "~[cli]"; } >"$work/names"
total=$(wc -l <"$work/names")
passed=0; failed=0; rc=0
if [ "$total" -eq 0 ]; then
  if [ "$skipped" -eq 0 ]; then echo "no test matches '${filter}${3:+ $3}'"; failed=1; fi
else
  per_chunk=$(( (total + jobs * 16 - 1) / (jobs * 16) ))
  split -l "$per_chunk" -d -a 4 "$work/names" "$work/chunk."
  ls "$work"/chunk.???? | xargs -P "$jobs" -I{} sh -c '"$1" -f "$2" >"$2.log" 2>&1; echo $? >"$2.rc"' _ "$bin" {}
  for chunk in "$work"/chunk.????; do
    log=$chunk.log
    c_rc=$(cat "$chunk.rc" 2>/dev/null || echo 1)
    # Catch2 v2 ends with "All tests passed (A assertions in N test cases)" or
    # "test cases: N | P passed | F failed".
    if line=$(grep -aE '^All tests passed' "$log" | tail -1) && [ -n "$line" ]; then
      p=$(sed -E 's/.* in ([0-9]+) test case.*/\1/' <<<"$line"); f=0
      # a passing chunk prints only what is not Catch2's frame (warnings, notes)
      grep -avE '^(=+|All tests passed.*|Filters: .*|)$' "$log" || true
    elif line=$(grep -aE '^test cases:' "$log" | tail -1) && [ -n "$line" ]; then
      p=$(sed -E 's/.*\| *([0-9]+) passed.*/\1/' <<<"$line")
      grep -q 'passed' <<<"$line" || p=0
      f=$(sed -E 's/.*\| *([0-9]+) failed.*/\1/' <<<"$line")
      grep -q 'failed' <<<"$line" || f=0
      cat "$log"
    else
      cat "$log"
      echo "the tests of $(head -1 "$chunk")... ended without a summary (exit code $c_rc): counted as one failure"
      p=0; f=1
    fi
    [ "$c_rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
    [ "$c_rc" -ne 0 ] && rc=$c_rc
    passed=$((passed + p)); failed=$((failed + f))
  done
  # every listed test ran once: a name -f could not match would silently shrink the run
  if [ "$failed" -eq 0 ] && [ "$passed" -ne "$total" ]; then
    echo "$total tests were listed but $passed ran: counted as one failure"; failed=1
  fi
  echo "($total test cases in $(ls "$work"/chunk.???? | wc -l) chunks over $jobs processes)"
fi
[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
