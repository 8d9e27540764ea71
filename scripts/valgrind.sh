#!/usr/bin/env bash
# make valgrind: one short train_gpt run (4 steps, a periodic checkpoint, activation
# statistics, the sample) and its resume under valgrind memcheck; any memory error or
# definite leak fails it. Its own build is used (SANITIZE=memcheck, build/memcheck): -O0
# with line tables, without -march=native, since valgrind 3.19 does not decode AVX-512.
# For the same reason OpenBLAS is told to use its Haswell (AVX2) kernels, and
# OMP_WAIT_POLICY is set so the program does not re-execute itself (tensor/threads.h),
# which would leave valgrind behind.
# Usage: scripts/valgrind.sh [install]   (install: only install valgrind if missing)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
if ! command -v valgrind >/dev/null; then
  cmd="apt-get install -y --no-install-recommends valgrind"
  if [ "$(id -u)" -ne 0 ]; then echo "make valgrind needs valgrind. Run as root:  $cmd"; exit 1; fi
  DEBIAN_FRONTEND=noninteractive $cmd -qq || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive $cmd -qq; } || exit 1
fi
[ "${1:-}" = install ] && exit 0
# train_gpt links no object of the other programs' studies, the ViT or folding (its link
# map, 2026-12-02: 71 of the library's 107 objects): those are not compiled here. This build
# compiles the rest in groups of one folder (Makefile, LIB_GROUP), and train_gpt links a whole
# group once it needs one file of it, so the left-out files must be all that those groups
# reach. Should it ever need one, this build fails to link, naming the symbol.
omit='studies/compare/% studies/depth/% studies/regime/% studies/report/% studies/fold/% studies/reproduces/% train/vit/vit_run% train/vit/vit_task% nn/fold%'
nice -n 10 make --no-print-directory -j"$(nproc)" SANITIZE=memcheck LIB_OMIT="$omit" build/memcheck/train_gpt >build/valgrind-build.log 2>&1 ||
  { tail -30 build/valgrind-build.log; echo "memcheck build failed (build/valgrind-build.log)"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMP_WAIT_POLICY=passive OPENBLAS_CORETYPE=Haswell OMP_NUM_THREADS=1
run="build/memcheck/train_gpt --layers 1 --dim 16 --heads 2 --seq 8 --batch 2 --steps 4 --eval-every 2 --eval-batches 1
     --act-stats-every 2 --checkpoint-every 2 --keep-checkpoints 2 --threads 1 --quiet --out $out"
status=0
for extra in "--stop-after 2" "--resume"; do
  echo "== valgrind train_gpt ... $extra"
  if valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
      $run $extra >"$out/valgrind.log" 2>&1; then
    grep -E "ERROR SUMMARY|definitely lost|All heap blocks" "$out/valgrind.log"
  else
    cat "$out/valgrind.log" | tail -60; status=1
  fi
done
[ "$status" -eq 0 ] && echo "valgrind: memcheck clean (2 runs)"
exit $status
