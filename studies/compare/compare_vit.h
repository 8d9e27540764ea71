// compare_vit, the study behind `make demo-vit`: the same ViT recipe on Fashion-MNIST
// trained once per norm, each run an ordinary train_vit run in OUT/<norm>/, all side by
// side, one thread each (on two cores five one-thread runs do about 1.8x the work of one
// two-thread run at a time, and they do not collapse when another program takes a
// core: docs/performance.md). It prints one table and writes
//   OUT/results.json   every number, machine-readable (--reuse renders from it)
//   OUT/summary.csv    norm, test_acc, test_loss, val_acc, train_loss, img_per_cpu_s,
//                      img_per_s, cpu_seconds, seconds, rms_last_over_first, status
//   OUT/val_acc.csv    step, one column per norm (scripts/plot_val_acc.sh plots it)
//   OUT/report.md      studies/compare/vit.md.in filled in (docs/results/vit.md is a copy)
// Table speeds are per second of each run's own CPU time: its speed on one core, which
// wall-clock speeds of time-shared runs do not show.
#pragma once
#include <string>
#include <vector>

#include "studies/compare/comparison_records.h"

namespace nl {

int compare_vit_main(const std::vector<std::string>& args);

// The report for a results.json (exposed for the tests).
std::string render_vit_report(const VitResults& results);

// "FAILED (see stderr)", "DIVERGED (NaN/inf)", "near chance" (test accuracy below 50 %:
// ten classes), or "ok".
std::string vit_status(int exit_code, bool diverged, double test_accuracy);

}  // namespace nl
