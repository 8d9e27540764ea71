#!/usr/bin/env bash
# 1 vs 2 ranks of the default train_gpt model (L4 C128 T64, global batch 16), 60 steps,
# twice each: docs/distributed.md's "1 vs 2 ranks" table. Needs make and make MPI=1.
set -u
cd "$(dirname "$0")/.." || exit 1
root=$([ "$(id -u)" -eq 0 ] && echo --allow-run-as-root)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
F="--steps 60 --eval-every 1000 --eval-batches 1 --act-stats-every 0 --quiet"
for rep in 1 2; do
echo "== rep $rep"
echo "-- 1 process, 1 thread"; build/release/train_gpt $F --threads 1 --out $out/a | tail -1
echo "-- 1 process, 2 threads"; build/release/train_gpt $F --threads 2 --out $out/b | tail -1
echo "-- 2 ranks x 1 thread"; mpirun -np 2 --oversubscribe $root build/release-mpi/train_gpt $F --threads 1 --out $out/c | tail -2
done
