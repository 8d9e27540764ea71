#!/usr/bin/env bash
# The investigation of point 0 of the DyT regime study (docs/results/dyt_start.md): why
# DyT sits at the unigram loss in the demo GPT, and which setting makes it learn. Trains
# the demo model (4 layers, width 128, batch 16, context 64) for STEPS steps (default 300)
# once per setting, one after the other, and prints one markdown row per setting: the
# validation loss at each evaluation, the RMS of the residual stream leaving the last
# block at the end, and the tanh saturation |u| > 2 averaged over the DyT sites at the end
# (act_stats.csv, one fixed held-out batch).
# Usage: scripts/dyt_start.sh [BUILD_DIR] [OUT_DIR]     (STEPS=N to change the length)
set -euo pipefail
build=${1:-build/release}
out=${2:-runs/dyt_start}
steps=${STEPS:-300}
mkdir -p "$out"
settings=(
  "ln|--norm ln"
  "dyt (plain, alpha0 0.5)|--norm dyt"
  "dyt alpha0 2|--norm dyt --dyt-alpha0 2"
  "dyt, embedding scale sqrt(d)|--norm dyt --emb-scale sqrt"
  "dyt, embedding scale sqrt(d), alpha0 2|--norm dyt --emb-scale sqrt --dyt-alpha0 2"
  "dyt, lr 3e-4|--norm dyt --lr 3e-4"
  "dyt, final norm ln|--norm dyt --final-norm ln"
  "dyt, final norm ln, alpha0 2|--norm dyt --final-norm ln --dyt-alpha0 2"
  "dyt, final norm ln, embedding scale sqrt(d), alpha0 2|--norm dyt --final-norm ln --emb-scale sqrt --dyt-alpha0 2"
)
echo "| setting | val loss at steps 100, 200, ... | resid RMS leaving block L | tanh saturation > 2 |"
echo "|---|---|---|---|"
i=0
for s in "${settings[@]}"; do
  label=${s%%|*} flags=${s#*|}
  dir="$out/$i"
  # shellcheck disable=SC2086
  "$build/train_gpt" $flags --steps "$steps" --eval-every 100 --eval-batches 5 --act-stats-every 100 --quiet \
    --out "$dir" > "$dir.txt" 2>&1 || { echo "| $label | failed: $(tail -1 "$dir.txt") | | |"; i=$((i + 1)); continue; }
  vals=$(awk -F, 'NR > 1 && $3 != "" { printf "%s%.3f", (n++ ? ", " : ""), $3 }' "$dir/log.csv")
  rms=$(tail -1 "$dir/log.csv" | awk -F, '{ printf "%.3g", $NF }')
  sat=$(awk -F, -v s="$steps" '$1 == s && $3 == "bounded_all" { printf "%.3f", $9 }' "$dir/act_stats.csv")
  echo "| $label | $vals | $rms | ${sat:--} |"
  i=$((i + 1))
done
