#!/usr/bin/env bash
# make demo: trains the demo GPT with each of the five norms (same data, seed and
# budget), prints the comparison table and plots the validation curves.
set -euo pipefail
build=${1:-build/release}
out=${DEMO_OUT:-runs/demo}
start=$(date +%s)
"$build/compare_norms" --out "$out" --threads "${THREADS:-2}"
bash "$(dirname "$0")/plot_val_loss.sh" "$out"
echo "demo took $(( $(date +%s) - start )) s; per-run logs in $out/<norm>/log.csv"
