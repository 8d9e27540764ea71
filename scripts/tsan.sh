#!/usr/bin/env bash
# make test-tsan: the tests of the threaded kernels under ThreadSanitizer.
#
# Why clang and LLVM's OpenMP: TSan sees only synchronisation it can intercept
# (pthreads, atomics in instrumented code). GCC's libgomp synchronises its threads
# with its own futex-based barriers, so every OpenMP loop reads as a data race under
# TSan, a false positive. LLVM's libomp carries Archer, an OMPT tool that tells TSan
# about OpenMP's barriers, reductions and tasks; it loads itself when a program built
# with -fsanitize=thread -fopenmp starts. OpenBLAS is linked in its pthread build
# (its OpenMP build would drag libgomp in); its code is not instrumented and
# ignore_noninstrumented_modules=1 keeps TSan from reporting inside it. No suppression
# file: every report in our code counts.
#
# Before the tests, a two-line program with a real race must be reported, so a setup
# that silently detects nothing cannot pass. Runs the tests tagged [threads] (a
# training step at 4 threads, every kernel above its parallel grain), [ops], [norms],
# [grad], [optim] and [nn] with OMP_NUM_THREADS=4.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export TSAN_OPTIONS="halt_on_error=1 ignore_noninstrumented_modules=1"

probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
cat >"$probe_dir/race.cpp" <<'CPP'
int main() {
  double s = 0;
#pragma omp parallel for num_threads(4)
  for (int i = 0; i < 100000; ++i) s += i;  // unsynchronised: a race
  return s > 0 ? 0 : 1;
}
CPP
compile_probe() { clang++ -fopenmp -fsanitize=thread -g "$probe_dir/race.cpp" -o "$probe_dir/race" 2>"$probe_dir/cc.log"; }
if ! compile_probe; then  # only this target needs clang and LLVM's OpenMP
  cmd="apt-get install -y --no-install-recommends clang libomp-dev"
  if [ "$(id -u)" -ne 0 ]; then cat "$probe_dir/cc.log"; echo "make test-tsan needs clang and libomp. Run as root:  $cmd"; exit 1; fi
  DEBIAN_FRONTEND=noninteractive $cmd -qq || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive $cmd -qq; } || exit 1
  compile_probe || { cat "$probe_dir/cc.log"; echo "clang++ -fopenmp -fsanitize=thread still fails"; exit 1; }
fi
ARCHER_OPTIONS=verbose=1 "$probe_dir/race" >"$probe_dir/race.log" 2>&1
grep -q "Archer detected" "$probe_dir/race.log" || { cat "$probe_dir/race.log"; echo "tsan: Archer did not load"; exit 1; }
grep -q "WARNING: ThreadSanitizer: data race" "$probe_dir/race.log" ||
  { cat "$probe_dir/race.log"; echo "tsan: the known race was not reported: the setup detects nothing"; exit 1; }
echo "tsan: the probe's race is reported and Archer is loaded"

# Only the test files with one of these tags are compiled (and the probes run-tests.sh
# asks), and the library without studies/, which none of them reaches: a third of the
# tests and a quarter less library to build under TSan (CI's time, docs/reliability.md).
tags="[threads],[ops],[norms],[grad],[optim],[nn]"
tests=$(grep -lE "\[($(tr -d '[]' <<<"$tags" | tr ',' '|'))\]" tests/*/*.cpp | tr '\n' ' ')
tests+=" tests/train/test_needs_probes.cpp tests/cuda/test_cuda_probe.cpp"
nice -n 10 make --no-print-directory -j"$(nproc)" SANITIZE=thread CXX=clang++ LIB_OMIT='studies/%' \
  TEST_SRCS="$tests" build/tsan/run_tests >build/tsan.log 2>&1 ||
  { tail -30 build/tsan.log; echo "tsan build failed (build/tsan.log)"; exit 1; }
OMP_NUM_THREADS=4 bash scripts/run-tests.sh build/tsan/run_tests "" "$tags"
