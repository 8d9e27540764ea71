#!/usr/bin/env bash
# Trains the demo GPT with ln and with cbwc from the same initialisation, batches and
# dropout masks for STEPS steps (default 200) and prints the largest difference of the
# training loss at any step, and at the end of each 100 steps. NORMS.md explains why,
# without dropout, they follow one trajectory up to float rounding. With DROPOUT > 0
# (on the attention and MLP outputs, same masks in both runs) the cbwc stream is no
# longer zero-mean, so RMSNorm + beta is no longer LayerNorm and the runs drift apart.
# Usage: scripts/cbwc_equivalence.sh [STEPS] [BUILD_DIR] [DROPOUT]
set -euo pipefail
steps=${1:-200}
build=${2:-build/release}
dropout=${3:-0}
out=${OUT:-runs/cbwc_equivalence}
[ "$dropout" != 0 ] && out="$out-dropout$dropout"
for norm in ln cbwc; do
  "$build/train_gpt" --norm "$norm" --steps "$steps" --dropout "$dropout" --eval-every "$steps" --quiet \
    --out "$out/$norm" >/dev/null
done
paste -d, <(cut -d, -f2,3 "$out/ln/log.csv") <(cut -d, -f2,3 "$out/cbwc/log.csv") | tail -n +2 |
  awk -F, -v dropout="$dropout" '
  { d = $1 - $3; if (d < 0) d = -d; if (d > max) { max = d; at = NR }
    if (NR % 100 == 0) per = per sprintf("  step %d: |diff| %.3g (largest so far %.3g)\n", NR, d, max)
    if ($2 != "") { vl = $2; vc = $4 } }
  END { printf "ln vs cbwc over %d steps, dropout %s: largest |train loss difference| %.3g (at step %d)\n%s", NR, dropout, max, at, per
        printf "  final val loss: ln %s, cbwc %s\n", vl, vc }'
