#!/usr/bin/env bash
# make demo-tuned: each norm at its best (compare_norms --tune: studies/compare/tuned_comparison.h).
# The five norms on the plain recipe, bhyt-released, dyt-llm and dyt-verma (each stuck or far
# behind in make demo), and the ln runs of those three recipes, each trained over the same number of settings (TUNE; a DyT run TUNE_DYT), its best
# chosen on a tuning split held out of the training text; the report goes to
# docs/results/demo_tuned.md with the command that regenerates it, its numbers to
# docs/results/demo_tuned.json (which make demo's report then reads). About 30 minutes on 2 cores.
#   TUNE='lr=3e-4,1e-3;warmup=50,500'    the grid (compare_norms --tune: NAME=V1,V2;NAME=...)
#   TUNE_DYT='lr=3e-4,1e-3;alpha0=0.1,1' a DyT run's grid, as many settings as TUNE's
#   RUNS="a=--norm ln,b"                 the runs instead (compare_norms --arms)
#   DEMO_FLAGS="..."                     more compare_norms flags: "--dry-run" prices it and stops
#   DEMO_OUT=dir, DOC=file               the runs' folder (runs/demo_tuned) and the report
#   THREADS=N                            threads per run (default 1: one run per core)
set -euo pipefail
build=${1:-build/release}
out=${DEMO_OUT:-runs/demo_tuned}
doc=${DOC:-docs/results/demo_tuned.md}
# the five norms, the two recipes and the ln run of each recipe (what its row is read against)
default_runs="ln,rms,cbwc,dyt,bhyt,bhyt-released,dyt-llm,dyt-verma"
default_runs+=",ln-released=--recipe bhyt-released --norm ln,ln-dyt-llm=--recipe dyt-llm --norm ln"
default_runs+=",ln-verma=--recipe dyt-verma --norm ln"
runs=${RUNS:-$default_runs}
start=$(date +%s)
args=(--out "$out" --threads "${THREADS:-1}" --arms "$runs" --doc "$doc"
      --tune "${TUNE:-lr=3e-4,1e-3,3e-3;warmup=50,500}" --tune-dyt "${TUNE_DYT:-lr=3e-4,1e-3,3e-3;alpha0=0.1,1}")
# DEMO_FLAGS is a list of flags and values, split at spaces on purpose
# shellcheck disable=SC2206
if [ -n "${DEMO_FLAGS:-}" ]; then args+=(${DEMO_FLAGS}); fi
"$build/compare_norms" "${args[@]}"
if [[ " ${DEMO_FLAGS:-} " == *" --dry-run "* ]]; then exit 0; fi
echo "demo-tuned took $(( $(date +%s) - start )) s; the sweep in $out/sweep.csv, each cell in $out/<run>/<setting>/"
