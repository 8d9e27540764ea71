#!/usr/bin/env bash
# Plots the residual-stream variance per layer of the depth study (depth_study writes the
# CSVs): two panels, at initialisation and at the end of training, one curve per variant,
# log-scale variance. Each CSV: a header "layer,<variant>,..." then one row per layer
# (0 = the embedding output entering block 1, l = the stream leaving block l).
# Usage: scripts/plot_depth.sh OUT.png "TITLE" INIT.csv END.csv
set -euo pipefail
# shellcheck source=scripts/plot_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/plot_common.sh"
[ $# -eq 4 ] || { echo "usage: $0 OUT.png TITLE INIT.csv END.csv" >&2; exit 2; }
png=$1 title=$2 init=$3 end=$4
for f in "$init" "$end"; do plot_need_file plot_depth "$f"; done
plot_need_gnuplot plot_depth
cols=$(plot_columns "$init")
gnuplot <<GP
$(plot_preamble 1200 520 10 "$png")
set logscale y
set format y "%.0e"
set grid
set key autotitle columnhead top left font ",9"
set xlabel "layer (0: embedding output; l: leaving block l)"
set ylabel "variance of the residual stream"
set multiplot layout 1,2 title "$title"
set title "at initialisation"
plot for [i=2:$cols] "$init" using 1:i with linespoints lw 2 pt 7 ps 0.6
set title "at the end of training"
plot for [i=2:$cols] "$end" using 1:i with linespoints lw 2 pt 7 ps 0.6
unset multiplot
GP
echo "wrote $png"
