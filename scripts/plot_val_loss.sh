#!/usr/bin/env bash
# Plots DIR/val_loss.csv (step, one column per norm) into DIR/val_loss.png with gnuplot.
set -euo pipefail
dir=${1:-runs/demo}
csv=$dir/val_loss.csv
[ -f "$csv" ] || { echo "plot: $csv not found (run make demo first)" >&2; exit 2; }
cols=$(head -1 "$csv" | tr ',' ' ' | wc -w)
gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced font ",11"
set output "$dir/val_loss.png"
set datafile separator ","
set key autotitle columnhead top right
set title "Validation loss of the demo GPT (fortunes, byte level), one curve per norm"
set xlabel "step"
set ylabel "validation loss (nats/byte)"
set grid
plot for [i=2:$cols] "$csv" using 1:i with linespoints lw 2 pt 7 ps 0.8
GP
echo "wrote $dir/val_loss.png"
