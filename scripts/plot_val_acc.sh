#!/usr/bin/env bash
# Plots DIR/val_acc.csv (step, one column of validation accuracy per norm, as
# fractions) into DIR/val_acc.png with gnuplot, in percent.
set -euo pipefail
# shellcheck source=scripts/plot_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/plot_common.sh"
plot_step_curves "${1:-runs/demo-vit}" val_acc "run make demo-vit first" \
  "Validation accuracy of the demo ViT (Fashion-MNIST), one curve per norm" "validation accuracy (%)" \
  "(100*column(i))"
