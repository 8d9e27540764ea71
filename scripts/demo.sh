#!/usr/bin/env bash
# make demo: trains the demo GPT once per run (the five norms on the plain recipe, the
# papers' recipes, ln and rms on the Llama block: compare_norms --help), side by side,
# one thread each, prints the comparison table and plots the validation curves.
#   RUNS="a=--norm ln,b"  the runs instead (compare_norms --arms: LABEL=FLAGS, a norm or a recipe)
#   NORMS=ln,dyt,mynorm   the same with bare norm names: each norm on the plain recipe
#   DEMO_FLAGS="..."      more compare_norms flags for every run, e.g. a shorter recipe "--steps 60"
#   DEMO_OUT=dir          the output folder (default runs/demo)
#   THREADS=N             threads per run (default 1: one run per core does the most work)
set -euo pipefail
build=${1:-build/release}
out=${DEMO_OUT:-runs/demo}
start=$(date +%s)
args=(--out "$out" --threads "${THREADS:-1}")
if [ -n "${RUNS:-}" ] && [ -n "${NORMS:-}" ]; then echo "demo: give RUNS or NORMS, not both" >&2; exit 2; fi
if [ -n "${RUNS:-}${NORMS:-}" ]; then args+=(--arms "${RUNS:-}${NORMS:-}"); fi
# DEMO_FLAGS is a list of flags and values, split at spaces on purpose
# shellcheck disable=SC2206
if [ -n "${DEMO_FLAGS:-}" ]; then args+=(${DEMO_FLAGS}); fi
"$build/compare_norms" "${args[@]}"
bash "$(dirname "$0")/plot_val_loss.sh" "$out"
echo "demo took $(( $(date +%s) - start )) s; per-run logs in $out/<run>/log.csv"
