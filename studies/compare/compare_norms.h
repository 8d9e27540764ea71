// compare_norms, the study behind `make demo`: train_gpt runs side by side (same data,
// seed and budget), one per run spec of --arms (studies/grid/run_spec.h: LABEL=FLAGS, a
// bare norm, or a bare recipe), each an ordinary train_gpt run in OUT/<label>/, run by
// the grid (studies/grid/grid.h). The flags given to compare_norms come first in every
// run's command line, so a run's own flags override them (and a run's recipe is
// overridden by them, as flags given always override a recipe). It prints one table and
// writes
//   OUT/results.json   every number below, machine-readable (--reuse renders from it)
//   OUT/summary.csv    run, recipe, block, norm, train_loss, val_loss, val_vs_ln_percent,
//                      tok_per_s, rms_last_over_first, status
//   OUT/val_loss.csv   step, one column per run (scripts/plot_val_loss.sh plots it)
//   OUT/report.md      studies/compare/demo.md.in filled in (docs/results/demo.md is a copy);
//                      with --tuned-results FILE present (docs/results/demo_tuned.json), each
//                      row that is stuck or behind its ln says what tuning found for it
// and with --doc FILE the report also in FILE, results.json beside it as FILE's name with .json.
// With --tune it runs the tuned comparison instead (studies/compare/tuned_comparison.h).
// Each row's status is read against its LayerNorm run (the ln run of --arms with the same
// block and recipe, else the first ln run on its block) and the unigram loss of the training text
// (status_against_ln, studies/report/verdicts.h). A run whose loss stays at the unigram
// level or becomes NaN is shown as such, never dropped.
#pragma once
#include <string>
#include <vector>

#include "studies/compare/comparison_records.h"

namespace nl {

// The runs of `make demo`: the five norms on the plain recipe, each paper's recipe,
// ln and rms on the Llama block, and ln on each paper's recipe (each recipe's own baseline).
const std::vector<std::string>& default_demo_runs();

// Runs the study for the command line (the flags after the program's name); returns
// the exit code. Throws nl::Error for bad input, before any run starts.
int compare_norms_main(const std::vector<std::string>& args);

// One row of the table, from results.json.
struct DemoRow {
  std::string label, flags, recipe, block, norm, status;
  std::string
      ln_label;  // the ln run it is read against: same block and recipe, else the first ln on its block; "" without one
  double train_loss, val_loss, tok_s, rms_ratio;
  double vs_ln;  // 100 (val - ln's val) / ln's val for its ln run; NaN without one
  bool diverged;  // it did not finish with finite losses
  int exit_code;  // train_gpt's: 1 a NaN/inf stop (DIVERGED), another non-zero FAILED
};
std::vector<DemoRow> demo_rows(const DemoResults& results);

// The report for a results.json (exposed for the tests). With a tuned comparison's
// results (compare_norms --tune, studies/compare/tuned_comparison.h; nullptr: none), each
// row that is not ok says what its tuned runs found, linking `tuned_doc`.
std::string render_demo_report(const DemoResults& results, const TunedResults* tuned = nullptr,
                               const std::string& tuned_doc = "");

}  // namespace nl
