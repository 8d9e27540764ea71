#!/usr/bin/env bash
# make demo: trains the demo GPT with each of the five norms (same data, seed and
# budget), prints the comparison table and plots the validation curves.
#   NORMS=ln,dyt,mynorm   the norms to compare instead (compare_norms --norms)
#   DEMO_FLAGS="..."      more compare_norms flags, e.g. a shorter recipe "--steps 60"
#   DEMO_OUT=dir          the output folder (default runs/demo)
set -euo pipefail
build=${1:-build/release}
out=${DEMO_OUT:-runs/demo}
start=$(date +%s)
args=(--out "$out" --threads "${THREADS:-2}")
if [ -n "${NORMS:-}" ]; then args+=(--norms "$NORMS"); fi
# DEMO_FLAGS is a list of flags and values, split at spaces on purpose
# shellcheck disable=SC2206
if [ -n "${DEMO_FLAGS:-}" ]; then args+=(${DEMO_FLAGS}); fi
"$build/compare_norms" "${args[@]}"
bash "$(dirname "$0")/plot_val_loss.sh" "$out"
echo "demo took $(( $(date +%s) - start )) s; per-run logs in $out/<norm>/log.csv"
