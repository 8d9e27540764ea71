// compare_norms --tune: each run of --arms trained over the same grid of settings (the
// axes of studies/compare/tuning.h; a DyT run's from --tune-dyt, of the same size), each
// setting an ordinary train_gpt cell in OUT/<run>/<setting>/, and once more at the shared
// settings (its own flags alone) in OUT/<run>/shared/ unless a setting of the grid is that
// same run. Every cell trains on the training text less its last --tune-bytes, the tuning
// split (written to OUT/tuning.txt); a run's best setting is the one with the lowest loss
// on that split (select_tuned), never on the validation batches the report prints. It writes
//   OUT/results.json  every cell's numbers (--reuse renders from it; --doc FILE copies it
//                     beside the report, as FILE's name with .json)
//   OUT/sweep.csv     run, setting, flags, tuning_loss, val_loss, train_loss, exit_code, best
//   OUT/report.md     studies/compare/demo_tuned.md.in filled in (and --doc FILE)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "studies/compare/comparison.h"
#include "train/gpt/gpt_run_config.h"

namespace nl {

struct TuneOptions {
  std::string axes;       // --tune: "" for the plain comparison
  std::string dyt_axes;   // --tune-dyt: a DyT run's axes ("": --tune's)
  int64_t tune_bytes = 65536;
  bool dry_run = false;
  double step_ms = 87;    // --dry-run's price of one step (one thread, two runs at a time)
  std::string doc;        // --doc: the report's copy ("": OUT/report.md only), either mode
};

// Declares --tune, --tune-dyt, --tune-bytes, --step-ms, --dry-run, --doc (all Control
// flags: not given to the runs) and checks the axes' sizes agree.
void add_tune_flags(FlagParser& p, TuneOptions& t);

// Runs the tuned comparison (or with --dry-run prints its cells and price); `common`: the
// flags every run takes first; `args`: compare_norms' command line, for the report.
int run_tuned_comparison(const FlagParser& p, const ComparisonFlags& f, const GPTRunConfig& base,
                         const std::vector<std::string>& common, const std::vector<RunSpec>& runs,
                         const TuneOptions& t, const std::vector<std::string>& args);

// One run of the tuned comparison, from results.json.
struct TunedRow {
  std::string label, flags, norm, block, recipe;
  size_t settings = 0;              // settings tried
  double shared_val = 0;            // at the shared settings (NaN when that cell did not finish)
  std::string shared_status;        // against its ln run's shared settings
  int best = -1;                    // the chosen trial (select_tuned), -1: none finished
  std::string best_setting, best_flags;
  double best_val = 0, best_tuning = 0;
  std::string best_status;          // against its ln run at that run's best
  std::string ln_label;             // its ln run ("" without one)
  double best_vs_ln = 0;            // percent above its ln's best (NaN without)
};
std::vector<TunedRow> tuned_rows(const TunedResults& results);

// The report for a tuned results.json (exposed for the tests).
std::string render_tuned_report(const TunedResults& results);

}  // namespace nl
