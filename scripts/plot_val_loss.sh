#!/usr/bin/env bash
# Plots the demo's validation curves into DIR/val_loss.png with gnuplot: one panel per
# LayerNorm baseline (DIR/val_loss_panels.tsv: each panel's CSV, step and one column per
# run, and the runs it holds): the plain recipe's norms in one, each paper recipe beside
# its own ln in another, so that no panel holds more than a handful of curves. Without the
# panel list (a comparison from before it), all of DIR/val_loss.csv in one plot
# (scripts/plot_common.sh: a style and marker per curve, the legend outside the plot).
set -euo pipefail
# shellcheck source=scripts/plot_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/plot_common.sh"
dir=${1:-runs/demo}
panels=$dir/val_loss_panels.tsv
if [ ! -f "$panels" ]; then
  plot_step_curves "$dir" val_loss "run make demo first" \
    "Validation loss of the demo GPT (fortunes, byte level), one curve per run" "validation loss (nats/byte)" i
  exit 0
fi
plot_need_gnuplot plot
n=$(wc -l < "$panels")
cols=2
rows=$(( (n + cols - 1) / cols ))
{
  plot_preamble 1400 $(( 420 * rows )) 10 "$dir/val_loss.png"
  echo "set multiplot layout $rows,$cols title 'Validation loss of the demo GPT (fortunes, byte level): each panel one ln run and the runs read against it'"
  echo 'set key autotitle columnhead outside right top vertical Left reverse font ",9"'
  echo 'set xlabel "step"; set ylabel "validation loss (nats/byte)"; set grid'
  echo 'colours = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"'
  while IFS=$'\t' read -r csv names; do
    plot_need_file plot "$dir/$csv" "run make demo first"
    c=$(plot_columns "$dir/$csv")
    echo "set title \"$names\""
    echo "plot for [i=2:$c] \"$dir/$csv\" using 1:i with linespoints lw 2 lc rgb word(colours, (i-2)%10+1) dt 1+(i-2)%5 pt 6+(i-2)%7 ps 1.1 title columnhead(i)"
  done < "$panels"
  echo "unset multiplot"
} | gnuplot
echo "wrote $dir/val_loss.png ($n panels)"
