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

# plot_step_curves DIR NAME HINT KEY TITLE YLABEL Y: plots DIR/NAME.csv (a header, then
# step and one column per norm) into DIR/NAME.png, one curve per norm with the key at
# KEY; Y is gnuplot's y of column i ("i", "(100*column(i))"). HINT: how to make the CSV.
plot_step_curves() {
  local dir=$1 name=$2 csv="$1/$2.csv" cols
  plot_need_file plot "$csv" "$3"
  plot_need_gnuplot plot
  cols=$(plot_columns "$csv")
  gnuplot <<GP
$(plot_preamble 900 560 11 "$dir/$name.png")
set key autotitle columnhead $4
set title "$5"
set xlabel "step"
set ylabel "$6"
set grid
plot for [i=2:$cols] "$csv" using 1:$7 with linespoints lw 2 pt 7 ps 0.8 title columnhead(i)
GP
  echo "wrote $dir/$name.png"
}
