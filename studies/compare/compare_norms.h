// compare_norms, the study behind `make demo`: the same GPT recipe trained once per
// norm (same data, seed and budget), each run an ordinary train_gpt run in OUT/<norm>/,
// run side by side by the grid (studies/grid/grid.h). It prints one table and writes
//   OUT/results.json   every number below, machine-readable (--reuse renders from it)
//   OUT/summary.csv    norm, train_loss, val_loss, tok_per_s, rms_last_over_first, status
//   OUT/val_loss.csv   step, one column per norm (scripts/plot_val_loss.sh plots it)
//   OUT/report.md      studies/compare/demo.md.in filled in (docs/results/demo.md is a copy)
// A norm whose loss stays at the unigram level or becomes NaN is shown as such, never
// dropped.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nl {

// Runs the study for the command line (the flags after the program's name); returns
// the exit code. Throws nl::Error for bad input, before any run starts.
int compare_norms_main(const std::vector<std::string>& args);

// The report for a results.json (exposed for the tests).
std::string render_demo_report(const nlohmann::json& results);

}  // namespace nl
