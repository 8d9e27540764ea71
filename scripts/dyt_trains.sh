#!/usr/bin/env bash
# make dyt-trains: which DyT settings leave the unigram plateau on the demo GPT within its
# 500 steps, 3 seeds each (studies/compare/dyt_trains.h): 13 settings x 3 seeds = 39 runs of
# 500 steps, about 35 CPU minutes (20 min on 2 cores). The report goes to
# docs/results/dyt_trains.md.
#   TRAINS_FLAGS="..."   more dyt_trains flags ("--seeds 1337 --steps 300": shorter)
#   TRAINS_OUT=dir       the runs' folder (runs/dyt_trains)
set -euo pipefail
build=${1:-build/release}
args=(--out "${TRAINS_OUT:-runs/dyt_trains}" --doc docs/results/dyt_trains.md)
# TRAINS_FLAGS is a list of flags and values, split at spaces on purpose
# shellcheck disable=SC2206
if [ -n "${TRAINS_FLAGS:-}" ]; then args+=(${TRAINS_FLAGS}); fi
"$build/dyt_trains" "${args[@]}"
