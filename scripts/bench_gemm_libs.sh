#!/usr/bin/env bash
# The tiny GPT step's 21 matrix-product shapes timed with OpenBLAS, BLIS, libxsmm, oneDNN
# and normlab's own tiled dispatch, in one run at each thread count, as a markdown table
# (median microseconds per step for each shape's products; the last row sums a step).
# Each library gets its own binary of bench/gemm_libs/bench_gemm_lib.cpp, since OpenBLAS
# and BLIS export the same BLAS symbols. Run it on an idle machine: the load average and
# the CPU are printed above the table.
#   usage: scripts/bench_gemm_libs.sh [BUILD_DIR] [THREADS] [REPS]    (build/release 1,2 30)
#   needs: scripts/install-deps.sh gemm-libs  (libblis-dev libxsmm-dev libdnnl-dev)
set -euo pipefail
build=${1:-build/release} threads=${2:-1,2} reps=${3:-30}
threads=${threads// /,}  # "1 2" or "1,2"
out=$build/gemm_libs
mkdir -p "$out"
[ -f "$build/libnormlab.a" ] || { echo "bench_gemm_libs: $build/libnormlab.a is missing (run make first)" >&2; exit 2; }
openblas="-L/usr/lib/x86_64-linux-gnu/openblas-openmp -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-openmp -lopenblas"
declare -A link=(
  [OPENBLAS]="$openblas"
  [NORMLAB]="$build/libnormlab.a $openblas"
  [BLIS]="-I/usr/include/x86_64-linux-gnu/blis-openmp -L/usr/lib/x86_64-linux-gnu/blis-openmp -Wl,-rpath,/usr/lib/x86_64-linux-gnu/blis-openmp -lblis"
  [XSMM]="-lxsmmext -lxsmm $openblas -ldl -lpthread"
  [DNNL]="-ldnnl"
)
header=(/usr/include/x86_64-linux-gnu/openblas-openmp/cblas.h /usr/include/x86_64-linux-gnu/blis-openmp/blis.h
        /usr/include/libxsmm.h /usr/include/dnnl.h)
for h in "${header[@]}"; do
  [ -f "$h" ] || { echo "bench_gemm_libs: $h is missing (scripts/install-deps.sh gemm-libs)" >&2; exit 2; }
done
libs=(OPENBLAS NORMLAB BLIS XSMM DNNL)
for lib in "${libs[@]}"; do
  bin=$out/bench_gemm_$lib
  if [ ! -x "$bin" ] || [ bench/gemm_libs/bench_gemm_lib.cpp -nt "$bin" ] || [ "$build/libnormlab.a" -nt "$bin" ]; then
    # shellcheck disable=SC2086  # the link flags are words
    g++ -std=c++17 -O3 -march=native -fopenmp -I. -DNL_LIB_$lib bench/gemm_libs/bench_gemm_lib.cpp ${link[$lib]} -o "$bin"
  fi
done
tsv=$out/results.tsv
: > "$tsv"
echo "# $(date -u +%F) on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
     "load average before: $(cut -d' ' -f1 /proc/loadavg)"
for lib in "${libs[@]}"; do "$out/bench_gemm_$lib" "$threads" "$reps" >> "$tsv"; done
echo "# load average after: $(cut -d' ' -f1 /proc/loadavg)"
# one row per product, one column per library and thread count
awk -F'\t' '
  { key = $1 " t" $2; if (!(key in seen)) { seen[key] = 1; cols[++nc] = key }
    if (!($3 in rowseen)) { rowseen[$3] = 1; rows[++nr] = $3; shape[$3] = ($4 == "-" ? "" : $4 " x " $5 "x" $6 "x" $7) }
    us[$3, key] = $8 }
  END {
    printf "| product | count x m x n x k |"; for (c = 1; c <= nc; ++c) printf " %s |", cols[c]; printf "\n|---|---|"
    for (c = 1; c <= nc; ++c) printf "---|"; printf "\n"
    for (r = 1; r <= nr; ++r) { printf "| %s | %s |", rows[r], shape[rows[r]]
      for (c = 1; c <= nc; ++c) printf " %s |", us[rows[r], cols[c]]; printf "\n" }
  }' "$tsv"
echo "(median microseconds per step for each row's products; $reps timed batches; TSV with GFLOP/s: $tsv)"
