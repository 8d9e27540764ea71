#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets of fuzz/ with clang (ASan + UBSan), replays
# the kept crash inputs of fuzz/regressions/<target>/, then fuzzes each target for
# SECONDS on its seeds (fuzz/corpus/<target>/, committed) plus what earlier runs found
# (build/fuzz/corpus/<target>/). A crash stops with its input in build/fuzz/crashes/:
# fix the bug, then copy the input to fuzz/regressions/<target>/ so that both this
# script and `make test` (tests/train/test_fuzz_regressions.cpp) replay it forever.
# Usage: scripts/fuzz.sh [SECONDS]   (install: only install clang's libFuzzer if missing)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
seconds=${1:-60}
targets=(safetensors idx args)

# libFuzzer ships in compiler-rt (Debian: libclang-rt-14-dev); only this target needs it
probe() { echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
  clang++ -fsanitize=fuzzer -x c++ - -o /dev/null 2>/dev/null; }
if ! command -v clang++ >/dev/null || ! probe; then
  cmd="apt-get install -y --no-install-recommends clang libclang-rt-14-dev libomp-dev"
  if [ "$(id -u)" -ne 0 ]; then echo "make fuzz needs clang with libFuzzer. Run as root:  $cmd"; exit 1; fi
  echo "installing clang's libFuzzer: $cmd"
  DEBIAN_FRONTEND=noninteractive $cmd -qq || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive $cmd -qq; } || exit 1
  probe || { echo "clang++ -fsanitize=fuzzer still fails"; exit 1; }
fi
[ "$seconds" = install ] && exit 0

bins=()
for t in "${targets[@]}"; do bins+=("build/fuzz/fuzz_$t"); done
nice -n 10 make --no-print-directory -j"$(nproc)" SANITIZE=fuzz CXX=clang++ "${bins[@]}" >build/fuzz.log 2>&1 ||
  { tail -30 build/fuzz.log; echo "fuzz build failed (build/fuzz.log)"; exit 1; }

export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
# fuzz_target T: replays T's kept regressions, then fuzzes it; its report goes to
# build/fuzz/T.report and its exit status says whether it found a crash
fuzz_target() {
  local t=$1 bin=build/fuzz/fuzz_$1 report=build/fuzz/$1.report
  mkdir -p "build/fuzz/corpus/$t" build/fuzz/crashes
  local regressions=(fuzz/regressions/"$t"/*)
  if [ -e "${regressions[0]}" ] && ! "$bin" "${regressions[@]}" >"build/fuzz/$t.replay.log" 2>&1; then
    { tail -20 "build/fuzz/$t.replay.log"; echo "fuzz $t: a kept regression input fails again"; } >"$report"
    return 1
  fi
  echo "== fuzz $t for ${seconds}s" >"$report"
  if nice -n 10 "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="build/fuzz/crashes/$t-" "build/fuzz/corpus/$t" "fuzz/corpus/$t" >"build/fuzz/$t.log" 2>&1; then
    grep -E '^#[0-9]+.*(DONE|pulse)' "build/fuzz/$t.log" | tail -1 >>"$report"
  else
    { tail -40 "build/fuzz/$t.log"
      echo "fuzz $t: found a crash; its input is in build/fuzz/crashes/ (see scripts/fuzz.sh)"; } >>"$report"
    return 1
  fi
}
# The targets run side by side, one per core (each fuzzer is one process on one core):
# the same seconds of fuzzing each, three targets in two turns on CI's two cores.
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
pids=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$cores" ]; do wait -n; done
  fuzz_target "$t" &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" || status=1
  cat "build/fuzz/${targets[$i]}.report"
done
[ "$status" -eq 0 ] && echo "fuzz: no crash in ${#targets[@]} targets x ${seconds}s"
exit $status
