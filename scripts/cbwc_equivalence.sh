#!/usr/bin/env bash
# Trains the demo GPT with ln and with cbwc from the same initialisation and batches
# for STEPS steps (default 200) and prints the largest difference of the training loss
# at any step. NORMS.md explains why they follow one trajectory up to float rounding.
# Usage: scripts/cbwc_equivalence.sh [STEPS] [BUILD_DIR]
set -euo pipefail
steps=${1:-200}
build=${2:-build/release}
out=${OUT:-runs/cbwc_equivalence}
for norm in ln cbwc; do
  "$build/train_gpt" --norm "$norm" --steps "$steps" --eval-every "$steps" --quiet --out "$out/$norm" >/dev/null
done
paste -d, <(cut -d, -f2 "$out/ln/log.csv") <(cut -d, -f2 "$out/cbwc/log.csv") | tail -n +2 | awk -F, '
  { d = $1 - $2; if (d < 0) d = -d; if (d > max) { max = d; at = NR } }
  END { printf "ln vs cbwc over %d steps: largest |train loss difference| %.3g (at step %d)\n", NR, max, at }'
