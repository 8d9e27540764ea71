# shellcheck shell=bash
# Sourced by the plot scripts (scripts/plot_*.sh): the checks each makes before it
# plots, one line naming the problem and exit 2, and the lines every gnuplot script
# of theirs starts with.

# plot_need_file PROGRAM FILE [HINT]: FILE must exist
plot_need_file() {
  [ -f "$2" ] || { echo "$1: $2 not found${3:+ ($3)}" >&2; exit 2; }
}

# plot_need_gnuplot PROGRAM
plot_need_gnuplot() {
  command -v gnuplot >/dev/null || { echo "$1: gnuplot is missing (apt-get install gnuplot-nox)" >&2; exit 2; }
}

# plot_columns CSV: how many columns the header of CSV names
plot_columns() {
  head -1 "$1" | tr ',' ' ' | wc -w
}

# plot_preamble WIDTH HEIGHT FONT_SIZE PNG: a PNG of that size from a CSV, as gnuplot lines
plot_preamble() {
  printf 'set terminal pngcairo size %s,%s noenhanced font ",%s"\nset output "%s"\nset datafile separator ","\n' \
    "$1" "$2" "$3" "$4"
}

# plot_step_curves DIR NAME HINT TITLE YLABEL Y: plots DIR/NAME.csv (a header, then step
# and one column per run) into DIR/NAME.png, one curve per run; Y is gnuplot's y of
# column i ("i", "(100*column(i))"). HINT: how to make the CSV. Every curve has its own
# colour, dash pattern and marker, so curves that coincide (ln and cbwc compute the same
# function) stay told apart, and the legend sits outside the plot, where no curve is.
plot_step_curves() {
  local dir=$1 name=$2 csv="$1/$2.csv" cols
  plot_need_file plot "$csv" "$3"
  plot_need_gnuplot plot
  cols=$(plot_columns "$csv")
  gnuplot <<GP
$(plot_preamble 1100 600 11 "$dir/$name.png")
set key autotitle columnhead outside right top vertical Left reverse
set title "$4"
set xlabel "step"
set ylabel "$5"
set grid
# ten colours (matplotlib's tab10), five dash patterns, thirteen markers: the markers
# cycle out of step with the colours, so no two of the first 130 curves are alike
colours = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
markers = "7 5 9 11 13 1 2 3 4 6 8 10 12"
n(i) = (i - 2) % 10 + 1
m(i) = (i - 2) % 13 + 1
plot for [i=2:$cols] "$csv" using 1:$6 with linespoints lw 2 lc rgb word(colours, n(i)) dt 1+(i-2)%5 \\
  pt int(word(markers, m(i))) ps 1.1 title columnhead(i)
GP
  echo "wrote $dir/$name.png"
}
