#!/usr/bin/env bash
# Plots of the DyT regime study (regime_study writes the CSVs):
#   LOSS.png    validation loss at the end (mean over seeds) against the training-subset
#               size, one curve per arm; LOSS.csv: "bytes,<arm>,..." then one row per size
#   SCREEN.png  each DyT cell's saturation |alpha x| > 2 at step 500 against DyT's change
#               of the end loss against LN (percent), with the rule's threshold 0.43;
#               SCREEN.csv: "saturation,percent" then one row per cell; a grid with no
#               DyT cell (SCREEN.csv holds its header only) gets no SCREEN.png, since
#               gnuplot would leave an empty file that no report links
#   VIT.png     (optional) the ViT arms' best validation accuracy (%, mean over seeds)
#               against the number of training images; VIT.csv: "images,<arm>,..."; none
#               when VIT.csv has no row
# Every curve has its own colour, dash pattern and marker (the full grid has 20 and more).
# Usage: scripts/plot_regime.sh LOSS.png LOSS.csv SCREEN.png SCREEN.csv [VIT.png VIT.csv]
set -euo pipefail
# shellcheck source=scripts/plot_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/plot_common.sh"
[ $# -eq 4 ] || [ $# -eq 6 ] || { echo "usage: $0 LOSS.png LOSS.csv SCREEN.png SCREEN.csv [VIT.png VIT.csv]" >&2; exit 2; }
loss_png=$1 loss=$2 screen_png=$3 screen=$4 vit_png=${5:-} vit=${6:-}
plot_need_file plot_regime "$loss"
plot_need_file plot_regime "$screen"
[ -z "$vit" ] || plot_need_file plot_regime "$vit"
plot_need_gnuplot plot_regime
# size_curves PNG CSV XLABEL YLABEL: one curve per column of CSV against its first column
# (a size, on a log axis). Linetypes 1..40 cycle gnuplot's 8 colours, 5 dash patterns and 13
# markers at different periods, so no two of the first 40 curves look alike (a dash pattern
# in parentheses would be read as a custom pattern, hence the variables). The title names
# the figure's page, so a figure seen alone still says where it belongs.
size_curves() {
  gnuplot <<GP
$(plot_preamble 1000 600 10 "$1")
set title "$(basename "$1" .png)"
set grid
set logscale x
set key autotitle columnhead outside right font ",9"
set xlabel "$3"
set ylabel "$4"
do for [k=1:40] { d = (k-1)%5+1; p = (k-1)%13+1; set linetype k dashtype d pointtype p }
plot for [i=2:$(plot_columns "$2")] "$2" using 1:i with linespoints lw 2 lt (i-1) ps 0.8
GP
}
size_curves "$loss_png" "$loss" "training subset (bytes)" "validation loss at the end (nats/byte, mean over seeds)"
wrote="$loss_png"
if [ -n "$vit" ]; then
  if [ "$(wc -l < "$vit")" -le 1 ]; then
    rm -f "$vit_png"
  else
    size_curves "$vit_png" "$vit" "training images" "best validation accuracy (%, mean over seeds)"
    wrote="$wrote $vit_png"
  fi
fi
if [ "$(wc -l < "$screen")" -le 1 ]; then
  rm -f "$screen_png"  # an earlier run's plot would describe other cells
  echo "wrote $wrote (no DyT cell, so no $screen_png)"
  exit 0
fi
gnuplot <<GP
$(plot_preamble 900 560 10 "$screen_png")
set title "$(basename "$screen_png" .png)"
set grid
unset logscale x
set key outside right top  # inside, its marker would read as one more cell
set xlabel "saturation |alpha x| > 2 at step 500"
set ylabel "DyT against LN at the end (%)"
set xrange [0:1]  # a fraction: the rule's threshold stays inside the axes whatever the cells
set arrow from 0.43, graph 0 to 0.43, graph 1 nohead dt 2
set label "threshold 0.43" at 0.44, graph 0.95
set arrow from graph 0, first 0 to graph 1, first 0 nohead dt 3
plot "$screen" using 1:2 with points pt 7 ps 1.2 title "DyT cells"
GP
echo "wrote $wrote $screen_png"
