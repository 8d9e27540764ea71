#!/usr/bin/env bash
# The GPU check, one command for a machine with an NVIDIA GPU and the CUDA toolkit:
# builds with CUDA=1, runs the [cuda] parity tests, the GPU benchmark (bench_gpu) and,
# when ../shared/tools/torch_gpt_bench.py (or shared/tools/...) and PyTorch are there,
# PyTorch eager fp32 on the same gpt2-124M configuration, then prints a summary.
# Meant to finish in under 5 minutes.
#
# Such a machine may have no OpenBLAS, no Catch2 and no package registry: then the .deb
# files of third_party/debs/ (downloaded beforehand by scripts/fetch-gpu-debs.sh) are
# unpacked with dpkg -x into build/gpu-deps/ and the build points at them (OPENBLAS_DIR).
# Logs go to $OUT when it is set (the device runner collects it), else build/gpu-check/.
# Usage: scripts/gpu-check.sh [--all-tests]   (--all-tests: the CPU tests too)
#        scripts/gpu-check.sh --deps-only     (set up the dependencies, print the make flags, stop)
#        NL_FORCE_DEBS=1 scripts/gpu-check.sh   (use the .deb files even where the system has OpenBLAS)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
t_start=$(date +%s)
logs=${OUT:-build/gpu-check}
mkdir -p "$logs"
all_tests=0 deps_only=0
[ "${1:-}" = "--all-tests" ] && all_tests=1
[ "${1:-}" = "--deps-only" ] && deps_only=1
jobs=$(nproc 2>/dev/null || echo 4)
ok=1
say() { echo "== $*"; }
elapsed() { echo $(( $(date +%s) - t_start ))s; }

# ---- 1. dependencies: the system's, else the unpacked .deb files
make_flags=(CUDA=1)
probe='#include <cblas.h>
#include <lapacke.h>
#include <catch2/catch.hpp>
#include <zlib.h>
int main() { return 0; }'
# NL_FORCE_DEBS=1 takes the .deb path even where the system has them (to test it)
if [ "${NL_FORCE_DEBS:-0}" != 1 ] && printf '%s\n' "$probe" | g++ -x c++ - -llapacke -lopenblas -lz -o /dev/null 2>/dev/null; then
  say "OpenBLAS, LAPACKE, Catch2 and zlib: from the system"
else
  debs=(third_party/debs/*.deb)
  if [ ! -e "${debs[0]}" ]; then
    echo "no OpenBLAS/LAPACKE/Catch2/zlib here and no third_party/debs/*.deb (run scripts/fetch-gpu-debs.sh where apt works)"
    exit 1
  fi
  deps=$PWD/build/gpu-deps
  rm -rf "$deps" && mkdir -p "$deps"
  for f in "${debs[@]}"; do
    if command -v dpkg >/dev/null 2>&1; then
      dpkg -x "$f" "$deps" || { echo "dpkg -x $f failed"; exit 1; }
    else  # no dpkg: a .deb is an ar archive holding data.tar.*
      tmp=$(mktemp -d)
      (cd "$tmp" && ar x "$OLDPWD/$f") && tar -xf "$tmp"/data.tar.* -C "$deps" || { echo "unpacking $f failed"; exit 1; }
      rm -rf "$tmp"
    fi
  done
  # zlib1g-dev's libz.so is an absolute link to /lib/...: point it at the unpacked copy
  multiarch=$(g++ -print-multiarch)
  if [ -e "$deps/lib/$multiarch/libz.so.1" ]; then
    ln -sf "$deps/lib/$multiarch/libz.so.1" "$deps/usr/lib/$multiarch/libz.so"
  fi
  make_flags+=(OPENBLAS_DIR="$deps")
  # the binaries carry an rpath to these folders; this also covers programs run otherwise
  export LD_LIBRARY_PATH="$deps/usr/lib/$multiarch/openblas-pthread:$deps/usr/lib/$multiarch:$deps/lib/$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  say "OpenBLAS, LAPACKE, Catch2 and zlib: unpacked from ${#debs[@]} .deb files into $deps"
fi

if [ "$deps_only" = 1 ]; then
  echo "make flags: ${make_flags[*]}"
  exit 0
fi

# ---- 2. build (library, tests, GPU benchmark, CLIs)
build=build/release-cuda
say "building with ${make_flags[*]} ($(elapsed))"
if ! timeout 240 make -j"$jobs" "${make_flags[@]}" info "$build/run_tests" "$build/bench_gpu" "$build/train_gpt" \
    >"$logs/build.log" 2>&1; then
  tail -30 "$logs/build.log"
  echo "build failed (log: $logs/build.log)"
  exit 1
fi
head -1 "$logs/build.log"
nvidia-smi -L 2>/dev/null || true

# ---- 3. the [cuda] parity tests (all tests with --all-tests)
filter="cuda:"
[ "$all_tests" = 1 ] && filter=""
say "tests ($(elapsed))"
timeout 240 bash scripts/run-tests.sh "$build/run_tests" "$filter" >"$logs/tests.log" 2>&1
tests_rc=$?
grep -E -A12 'FAILED|skipping' "$logs/tests.log" | head -60
tests_line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$logs/tests.log" | tail -1)
echo "${tests_line:-no test summary (exit $tests_rc)}"
skipped=$(sed -E 's/.*, ([0-9]+) skipped.*/\1/' <<<"${tests_line:-x, 1 skipped}")
if [ "$tests_rc" -ne 0 ] || [ "$skipped" != 0 ]; then ok=0; fi

# ---- 4. the GPU benchmark
say "bench_gpu ($(elapsed))"
timeout 180 "$build/bench_gpu" --steps 10 >"$logs/bench_gpu.log" 2>&1 || ok=0
cat "$logs/bench_gpu.log"

# ---- 5. PyTorch eager fp32 on the same configuration, same GPU
torch_script=""
for p in ../shared/tools/torch_gpt_bench.py shared/tools/torch_gpt_bench.py; do
  [ -f "$p" ] && torch_script=$p && break
done
torch_line=""
if [ -n "$torch_script" ]; then
  say "PyTorch: $torch_script gpt2-124M 1 10 cuda ($(elapsed))"
  timeout 150 python3 "$torch_script" gpt2-124M 1 10 cuda >"$logs/torch.log" 2>&1
  torch_line=$(grep -E '^torch ' "$logs/torch.log" | tail -1)
  [ -n "$torch_line" ] || tail -5 "$logs/torch.log"
  echo "${torch_line:-PyTorch run gave no result}"
else
  echo "no torch_gpt_bench.py found: PyTorch comparison skipped"
fi

# ---- summary
ours_ms=$(grep -E '^gpt2-124M' "$logs/bench_gpu.log" | sed -E 's/.* ([0-9.]+) ms\/step.*/\1/' | head -1)
torch_ms=$(sed -E 's/.*ms\/step=([0-9.]+).*/\1/' <<<"$torch_line")
echo
echo "==== gpu-check summary ($(elapsed) in total)"
echo "device:   $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1)"
echo "tests:    ${tests_line:-none}"
grep -E '^bench_gpu on|^small|^gpt2-124M|^matmul' "$logs/bench_gpu.log" | sed 's/^/bench:    /'
echo "pytorch:  ${torch_line:-not run}"
if [ -n "$ours_ms" ] && [ -n "$torch_line" ] && [ -n "$torch_ms" ]; then
  awk -v a="$ours_ms" -v b="$torch_ms" 'BEGIN { printf "gpt2-124M: normlab %.1f ms/step, PyTorch eager fp32 %.1f ms/step: ratio %.2f (target <= 1.5)\n", a, b, a / b }'
fi
echo "result:   $([ "$ok" = 1 ] && echo PASS || echo FAIL)"
[ "$ok" = 1 ]
