#!/usr/bin/env bash
# Plots DIR/val_loss.csv (step, one column per run) into DIR/val_loss.png with gnuplot.
# Every curve has its own colour, dash pattern and marker, so curves that coincide (ln
# and cbwc compute the same function) stay told apart; the legend sits outside the plot.
set -euo pipefail
dir=${1:-runs/demo}
csv=$dir/val_loss.csv
[ -f "$csv" ] || { echo "plot: $csv not found (run make demo first)" >&2; exit 2; }
cols=$(head -1 "$csv" | tr ',' ' ' | wc -w)
gnuplot <<GP
set terminal pngcairo size 1100,600 noenhanced font ",11"
set output "$dir/val_loss.png"
set datafile separator ","
set key autotitle columnhead outside right top vertical Left reverse
set title "Validation loss of the demo GPT (fortunes, byte level), one curve per run"
set xlabel "step"
set ylabel "validation loss (nats/byte)"
set grid
# ten colours (matplotlib's tab10), five dash patterns, ten markers: no two curves alike
colours = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
markers = "7 5 9 11 13 1 2 3 4 6"
n(i) = (i - 2) % 10 + 1
plot for [i=2:$cols] "$csv" using 1:i with linespoints lw 2 lc rgb word(colours, n(i)) dt 1+(i-2)%5 \\
  pt int(word(markers, n(i))) ps 1.1
GP
echo "wrote $dir/val_loss.png"
