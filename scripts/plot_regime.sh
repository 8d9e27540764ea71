#!/usr/bin/env bash
# Plots of the DyT regime study (regime_study writes the CSVs):
#   LOSS.png    validation loss at the end (mean over seeds) against the training-subset
#               size, one curve per arm; LOSS.csv: "bytes,<arm>,..." then one row per size
#   SCREEN.png  each DyT cell's saturation |alpha x| > 2 at step 500 against DyT's change
#               of the end loss against LN (percent), with the rule's threshold 0.43;
#               SCREEN.csv: "saturation,percent" then one row per cell; a grid with no
#               DyT cell (SCREEN.csv holds its header only) gets no SCREEN.png, since
#               gnuplot would leave an empty file that no report links
# Usage: scripts/plot_regime.sh LOSS.png LOSS.csv SCREEN.png SCREEN.csv
set -euo pipefail
# shellcheck source=scripts/plot_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/plot_common.sh"
[ $# -eq 4 ] || { echo "usage: $0 LOSS.png LOSS.csv SCREEN.png SCREEN.csv" >&2; exit 2; }
loss_png=$1 loss=$2 screen_png=$3 screen=$4
plot_need_file plot_regime "$loss"
plot_need_file plot_regime "$screen"
plot_need_gnuplot plot_regime
cols=$(plot_columns "$loss")
gnuplot <<GP
$(plot_preamble 900 560 10 "$loss_png")
set grid
set logscale x
set key autotitle columnhead outside right font ",9"
set xlabel "training subset (bytes)"
set ylabel "validation loss at the end (nats/byte, mean over seeds)"
plot for [i=2:$cols] "$loss" using 1:i with linespoints lw 2 pt 7 ps 0.7
GP
if [ "$(wc -l < "$screen")" -le 1 ]; then
  rm -f "$screen_png"  # an earlier run's plot would describe other cells
  echo "wrote $loss_png (no DyT cell, so no $screen_png)"
  exit 0
fi
gnuplot <<GP
$(plot_preamble 900 560 10 "$screen_png")
set grid
unset logscale x
set key outside right top  # inside, its marker would read as one more cell
set xlabel "saturation |alpha x| > 2 at step 500"
set ylabel "DyT against LN at the end (%)"
set arrow from 0.43, graph 0 to 0.43, graph 1 nohead dt 2
set arrow from graph 0, first 0 to graph 1, first 0 nohead dt 3
plot "$screen" using 1:2 with points pt 7 ps 1.2 title "DyT cells"
GP
echo "wrote $loss_png $screen_png"
