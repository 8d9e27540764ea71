#!/usr/bin/env bash
# Plots DIR/val_loss.csv (step, one column per run) into DIR/val_loss.png with gnuplot
# (scripts/plot_common.sh: a style and marker per curve, the legend outside the plot).
set -euo pipefail
# shellcheck source=scripts/plot_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/plot_common.sh"
plot_step_curves "${1:-runs/demo}" val_loss "run make demo first" \
  "Validation loss of the demo GPT (fortunes, byte level), one curve per run" "validation loss (nats/byte)" i
