#!/usr/bin/env bash
# Plots DIR/val_acc.csv (step, one column of validation accuracy per norm, as
# fractions) into DIR/val_acc.png with gnuplot, in percent.
set -euo pipefail
dir=${1:-runs/demo-vit}
csv=$dir/val_acc.csv
[ -f "$csv" ] || { echo "plot: $csv not found (run make demo-vit first)" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "plot: gnuplot is missing (apt-get install gnuplot-nox)" >&2; exit 2; }
cols=$(head -1 "$csv" | tr ',' ' ' | wc -w)
gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced font ",11"
set output "$dir/val_acc.png"
set datafile separator ","
set key autotitle columnhead bottom right
set title "Validation accuracy of the demo ViT (Fashion-MNIST), one curve per norm"
set xlabel "step"
set ylabel "validation accuracy (%)"
set grid
plot for [i=2:$cols] "$csv" using 1:(100*column(i)) with linespoints lw 2 pt 7 ps 0.8 title columnhead(i)
GP
echo "wrote $dir/val_acc.png"
