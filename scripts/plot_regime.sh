#!/usr/bin/env bash
# Plots the DyT regime study's phase diagram (regime_study writes the CSV): the relative
# difference of DyT's validation loss against LayerNorm's, in percent, against the size
# of the training subset (log scale), one curve per DyT variant, with the range over
# seeds as error bars. Below zero DyT is better.
# The CSV: a header "bytes,<variant>,<variant>_lo,<variant>_hi,..." then one row per size.
# Usage: scripts/plot_regime.sh OUT.png REL.csv
set -euo pipefail
# shellcheck source=scripts/plot_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/plot_common.sh"
[ $# -eq 2 ] || { echo "usage: $0 OUT.png REL.csv" >&2; exit 2; }
png=$1 csv=$2
plot_need_file plot_regime "$csv"
plot_need_gnuplot plot_regime
variants=$(( ($(plot_columns "$csv") - 1) / 3 ))
gnuplot <<GP
$(plot_preamble 900 560 10 "$png")
set datafile missing "nan"
set logscale x
set format x "%.0s%cB"
set grid
set key autotitle columnhead top left
set xlabel "training subset (bytes; the same number of steps for every size)"
set ylabel "(val loss DyT - val loss LN) / LN, %"
set title "DyT against LayerNorm by training-set size (below 0: DyT better)"
set xzeroaxis lw 2
set yrange [*<0:0<*]   # always show the zero line
plot for [i=0:$variants-1] "$csv" using 1:(column(2+3*i)):(column(3+3*i)):(column(4+3*i)) \
       with yerrorlines lw 2 pt 7 ps 0.8 title columnhead(2+3*i)
GP
echo "wrote $png"
