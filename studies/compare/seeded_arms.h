// What the seeded comparisons (bhyt_gap, dyt_trains) share: arms, each a set of train_gpt
// flags trained once per seed as an ordinary run in OUT/<prefix><arm>-s<seed>/, and read
// back from the comparison's results.json (studies/compare/comparison.h) seed by seed
// against a reference arm of the same seed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "studies/compare/comparison.h"

namespace nl {

// One arm: its label, its train_gpt flags, the arm it is read against ("": none, it is a
// reference) and what it tests (a line of the report).
struct SeededArm {
  std::string label, flags, reference, tests;
};

// "<prefix><arm>-s<seed>": the run's label and folder.
std::string seeded_label(const std::string& prefix, const std::string& arm, int64_t seed);

// The run of that label in results.runs (nullptr when there is none).
const ComparedRun* find_seeded_run(const ComparisonResults& results, const std::string& label);

// The arm's runs over results.seeds at `step` of its validation curve (0: its final
// validation loss), each against the reference's run of the same seed. A seed whose run
// did not train (diverged, failed, or stuck near the unigram loss: status_against_ln,
// studies/report/verdicts.h) is counted in did_not_train and left out of val and gap.
struct ArmSeeds {
  std::vector<double> val;  // the trained seeds' losses
  std::vector<double> gap;  // 100 (loss - reference's) / reference's, where both have one
  std::vector<int64_t> trained_seeds;
  int did_not_train = 0;
};
ArmSeeds arm_seeds(const SeededResults& results, const std::string& prefix, const std::string& arm,
                   const std::string& reference, int64_t step = 0);

// "mean (smallest-largest)" of a sample over seeds (range_text), "-" for none.
std::string seeds_text(const std::vector<double>& v, const char* format);

// The flags a seeded study adds to the run flags: --jobs, --reuse, --seeds (every `what`
// is trained once per seed; 1337, 1338, 1339 by default) and --doc.
struct SeededStudyFlags {
  ComparisonFlags comparison;
  std::vector<int64_t> seeds = {1337, 1338, 1339};
  std::string doc;
  bool dry_run = false;  // --dry-run, priced at --step-ms
  double step_ms = 87;
};
void add_seeded_study_flags(FlagParser& p, SeededStudyFlags& f, const std::string& what);
// After parsing, before any run: at least one seed, and a --doc folder that can be written.
void check_seeded_study_flags(const SeededStudyFlags& f);

// --dry-run: every run's flags checked as the grid checks them (a bad one stops here too),
// then how many runs there are, how many OUT already holds finished (kept), and the
// minutes the others take at f.step_ms a step, f.comparison.jobs at a time.
void print_seeded_plan(const std::string& study, const std::vector<std::string>& common,
                       const std::vector<RunSpec>& runs, const std::string& out, const SeededStudyFlags& f);

// What every seeded study's results.json holds beside the comparison's header and runs:
// the command line, the seeds, the unigram loss of the training text (`data_dir`, its
// first `train_bytes`; missing data stops the study here, before any run).
void put_seeded_study_fields(SeededResults& results, const std::string& program, const std::vector<std::string>& args,
                             const std::vector<int64_t>& seeds, const std::string& data_dir, int64_t train_bytes);

// The results a seeded study keeps (OUT/results.json, and the --doc copy beside the
// report): every run's validation curve, but not its training loss at every step, which
// stays in its log.csv (a 5000-step run's would make the committed file megabytes).
void drop_train_curves(ComparisonResults& results);

// A seeded study's runs, as Results: with --reuse read back from OUT/results.json; else
// `runs` trained (train_gpt, validation loss curves, `threads` each), `per_run` given each
// finished comparison to add what the study keeps of a run's folder (nothing by default),
// the training curves dropped, and the record written to OUT/results.json and read back,
// so that a fresh run's report is rendered from what --reuse would read.
template <class Results>
Results train_or_reuse_seeded(const FlagParser& p, const SeededStudyFlags& f, const std::vector<std::string>& common,
                              const std::vector<RunSpec>& runs, const std::string& out, int threads, Results fields,
                              void (*per_run)(const std::string& out, ComparedRun& run) = nullptr) {
  if (f.comparison.reuse) return reuse_comparison_results<Results>(out);
  static_cast<ComparisonResults&>(fields) =
      train_comparison(p, f.comparison, "train_gpt", common, runs, out, threads, kValLoss, false);
  if (per_run)
    for (ComparedRun& run : fields.runs) per_run(out, run);
  drop_train_curves(fields);
  return write_comparison_results(out, fields);
}

// Writes OUT/report.md and the --doc copy (with `written`, the results, beside it) and
// prints the report; returns 1 when a run failed (an exit other than 0 or a NaN/inf
// stop), else 0.
int finish_seeded_study(const std::string& out, const std::string& doc, const std::string& report,
                        const ComparisonResults& results, const nlohmann::json& written);

}  // namespace nl
