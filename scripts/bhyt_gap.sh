#!/usr/bin/env bash
# make bhyt-gap: why bhyt-released trails ln-released (studies/compare/bhyt_gap.h). Ten
# controls of the bhyt-released recipe at make demo's 500 steps and the long runs
# (ln-released, bhyt-released, rms-released for 5000 steps at their tuned settings), 3 seeds
# each: 39 runs, about 100 CPU minutes (an hour on 2 cores). rms-released's tuned setting is
# tuned first when docs/results/bhyt_gap_tuned.json is missing (6 runs of 500 steps).
# The report goes to docs/results/bhyt_gap.md.
#   GAP_FLAGS="..."   more bhyt_gap flags ("--seeds 1337 --long-steps 1000": shorter)
#   GAP_OUT=dir       the runs' folder (runs/bhyt_gap)
set -euo pipefail
build=${1:-build/release}
out=${GAP_OUT:-runs/bhyt_gap}
tuned=docs/results/bhyt_gap_tuned.md
if [ ! -f "${tuned%.md}.json" ]; then
  "$build/compare_norms" --out runs/bhyt_gap_tuning --arms 'rms-released=--recipe bhyt-released --norm rms' \
    --tune 'lr=3e-4,1e-3,3e-3;warmup=50,500' --doc "$tuned"
fi
args=(--out "$out" --doc docs/results/bhyt_gap.md)
# GAP_FLAGS is a list of flags and values, split at spaces on purpose
# shellcheck disable=SC2206
if [ -n "${GAP_FLAGS:-}" ]; then args+=(${GAP_FLAGS}); fi
"$build/bhyt_gap" "${args[@]}"
