#!/usr/bin/env bash
# The NCCL check, for a machine with NVIDIA GPUs, OpenMPI and NCCL: builds
# `make CUDA=1` and `make CUDA=1 MPI=1`, then trains the same small GPT for 30 steps
#   a) in one plain CUDA process, batch 8
#   b) in one MPI rank that still sends its gradients through ncclAllReduce
#      (NL_DIST_ALWAYS=1 mpirun -np 1): one GPU is enough
#   c) with 2 GPUs or more: 2 ranks, one GPU each, 4 rows each
# and passes when (b) and (c) log a's train losses to 1e-5 at every step.
# Usage: scripts/nccl-check.sh            (DEVICE=cpu runs the same through MPI on the CPU,
#                                          to check the script where there is no GPU)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
device=${DEVICE:-cuda}
jobs=$(nproc 2>/dev/null || echo 2)
root=$([ "$(id -u)" -eq 0 ] && echo --allow-run-as-root)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
command -v mpirun >/dev/null || { echo "nccl-check: mpirun is missing (apt-get install openmpi-bin libopenmpi-dev)"; exit 1; }
if [ "$device" = cuda ]; then
  plain=build/release-cuda/train_gpt mpi=build/release-cuda-mpi/train_gpt
  make -j"$jobs" CUDA=1 "$plain" >"$out/build.log" 2>&1 && make -j"$jobs" CUDA=1 MPI=1 "$mpi" >>"$out/build.log" 2>&1 ||
    { tail -20 "$out/build.log"; echo "nccl-check: build failed"; exit 1; }
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
else
  plain=build/release/train_gpt mpi=build/release-mpi/train_gpt
  make -j"$jobs" "$plain" >"$out/build.log" 2>&1 && make -j"$jobs" MPI=1 "$mpi" >>"$out/build.log" 2>&1 ||
    { tail -20 "$out/build.log"; echo "nccl-check: build failed"; exit 1; }
  gpus=2  # two CPU ranks stand in for two GPUs
fi
flags="--device $device --layers 2 --dim 64 --heads 4 --seq 32 --batch 8 --steps 30 --eval-every 30 --eval-batches 1 --act-stats-every 0 --threads 1 --quiet"
ok=1
# the largest |train-loss difference| between two logs, over every step
compare() {
  paste -d, <(cut -d, -f1,2 "$1") <(cut -d, -f2 "$2") |
    awk -F, -v name="$3" 'NR > 1 { d = $2 - $3; if (d < 0) d = -d; if (d > m) m = d; n++ }
      END { printf "%s: %d steps, largest train-loss difference %.2g: %s\n", name, n, m, (n == 30 && m <= 1e-5) ? "ok" : "FAIL";
            exit !(n == 30 && m <= 1e-5) }'
}
"$plain" $flags --out "$out/a" || { echo "nccl-check: the plain run failed"; exit 1; }
NL_DIST_ALWAYS=1 mpirun -np 1 $root "$mpi" $flags --out "$out/b" || ok=0
compare "$out/a/log.csv" "$out/b/log.csv" "1 rank through the all-reduce" || ok=0
if [ "$gpus" -ge 2 ]; then
  mpirun -np 2 --oversubscribe $root "$mpi" $flags --out "$out/c" || ok=0
  compare "$out/a/log.csv" "$out/c/log.csv" "2 ranks" || ok=0
else
  echo "2 ranks: skipped, one GPU"
fi
echo "nccl-check: $([ "$ok" = 1 ] && echo PASS || echo FAIL)"
[ "$ok" = 1 ]
