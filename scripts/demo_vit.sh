#!/usr/bin/env bash
# make demo-vit: trains the demo ViT on Fashion-MNIST with each of the five norms
# (same data, seed and recipe), prints the comparison table and plots the validation
# accuracy curves. All five runs at once, one thread each (why: apps/compare_vit.cpp).
# EPOCHS=N shortens (or lengthens) every run; the default, 12, is the documented recipe.
set -euo pipefail
build=${1:-build/release}
out=${DEMO_OUT:-runs/demo-vit}
start=$(date +%s)
"$build/compare_vit" --out "$out" --epochs "${EPOCHS:-12}" --jobs "${JOBS:-0}" --threads "${THREADS:-1}"
bash "$(dirname "$0")/plot_val_acc.sh" "$out"
echo "demo-vit took $(( $(date +%s) - start )) s; per-run logs in $out/<norm>/log.csv, confusion matrices in $out/<norm>/confusion.csv"
