// The comparison studies' records: what compare_norms (the demo and --tune), compare_vit,
// bhyt_gap and dyt_trains write into results.json and what reads it back (--reuse, the
// demo's --tuned-results, bhyt_gap's). Each record's visit_fields (comparison_records.cpp,
// train/io/json_fields.h) is the one place its keys are spelled, for both directions, so
// a renamed or missing field is an error naming the flag, the file and the field (one
// line, exit 2), never a NaN that a report prints as "-". A run's result.json is its own
// record, ResultRecord (train/loop/result_record.h); the figures a study reads of it are
// checked when the file is read (require_figures). tests/studies/test_comparison_records.cpp
// loads every committed file and re-renders its page byte for byte.
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/report/study.h"  // read_results_file
#include "train/io/json_fields.h"
#include "train/loop/result_record.h"

namespace nl {

// A log.csv column as the log writes it: (step, the value's text).
using CurveText = std::vector<std::pair<int64_t, std::string>>;

// The header of every comparison's results.json.
struct ComparisonHeader {
  std::string date;
  int64_t jobs = 0, threads = 1, cores = 1;  // runs at a time, threads per run, the machine's cores
  double load = NAN;                         // the 1-minute load average at the start (null: unreadable)
  double seconds = 0;                        // the whole study's wall time
  nlohmann::json recipe = nlohmann::json::object();  // the program's flags' values, by key
};

// One run of a comparison (an ordinary train_gpt / train_vit run in OUT/<label>/).
struct ComparedRun {
  std::string label;
  std::string flags;  // its own flags, as its spec gives them
  nlohmann::json config = nlohmann::json::object();  // the config.json its program records for it
  int exit_code = -1;
  std::optional<ResultRecord> result;  // its result.json (null in the file: it did not finish)
  CurveText curve;                     // the study's curve column (validation loss or accuracy)
  CurveText train_curve;               // the training loss (empty where a study keeps it in log.csv only)
  // dyt_trains: the final norm's saturation |alpha x| > 2 at the end (null: none, a
  // LayerNorm final norm); absent in the other studies' files
  std::optional<double> final_sat2;

  // exit 0 with a result that did not diverge
  bool finished() const { return exit_code == 0 && result && !result->diverged; }
  // result.json's figure `name` (NaN without a result; the study's from_json checked it is there)
  double figure(const std::string& name) const { return result ? result->figure(name) : NAN; }
};

// A comparison's results.json: the header and the runs (each study's record adds its own).
struct ComparisonResults {
  ComparisonHeader header;
  std::vector<ComparedRun> runs;
};

// compare_norms' (the demo's): the unigram loss of the training text each status is read against.
struct DemoResults : ComparisonResults {
  double unigram_loss = NAN;
};
// What the demo reads of a run's config.json.
struct DemoConfig {
  std::string block, norm;
  std::string recipe;  // "" for none (absent in a config written before recipes)
  int64_t layers = 0;
};
DemoConfig demo_config(const ComparedRun& run);

// compare_vit's: its layers (recipe.layers), for the residual RMS of the last block.
struct VitResults : ComparisonResults {
  int64_t layers = 0;
};

// What the seeded comparisons (bhyt_gap, dyt_trains) add: their command line, the
// seeds every arm was trained with, the unigram loss of the training text.
struct SeededResults : ComparisonResults {
  std::string command;
  std::vector<int64_t> seeds;
  double unigram_loss = NAN;
};

// dyt_trains': its layers (recipe.layers); every run has its final_sat2.
struct DytTrainsResults : SeededResults {
  int64_t layers = 0;
};

// bhyt_gap's: the controls' steps (recipe.steps), the long runs' steps and their tuned
// flags by arm, and the tuned comparisons those came from.
struct BhytGapResults : SeededResults {
  int64_t steps = 0, long_steps = 0;
  std::map<std::string, std::string> long_flags;
  std::vector<std::string> tuned_results;
};

// compare_norms --tune's (studies/compare/tuned_comparison.h): a cell of the grid.
struct TunedCell {
  std::string folder;
  int exit_code = -1;
  bool diverged = true;
  double val_loss = NAN, train_loss = NAN;  // result.json's (null: none or not finite)
  double tuning_loss = NAN;                 // on the tuning split (null: not finished or not evaluated)
};
// A setting of the grid tried on a run.
struct TunedTrial {
  std::string setting, flags;
  bool is_shared = false;  // the run's own flags: the shared cell
  TunedCell cell;
};
// A run of --arms: at the shared settings and at each setting of its grid.
struct TunedRun {
  std::string label, flags, norm, block, recipe;  // recipe "" for none
  TunedCell shared;
  std::vector<TunedTrial> trials;
};
// The grid: its axes (a DyT run's own), its size, the tuning split and what the cells trained on.
struct TuningGrid {
  std::string axes, dyt_axes;
  int64_t settings = 0, tune_bytes = 0, train_bytes = 0;
};
struct TunedResults {
  ComparisonHeader header;
  double unigram_loss = NAN;  // of the text the cells trained on
  std::string command;
  TuningGrid tuning;
  std::vector<TunedRun> runs;
};

void to_json(nlohmann::json& j, const ComparisonHeader& h);
void from_json(const nlohmann::json& j, ComparisonHeader& h);
void to_json(nlohmann::json& j, const ComparedRun& r);
void from_json(const nlohmann::json& j, ComparedRun& r);
void to_json(nlohmann::json& j, const ComparisonResults& r);
void from_json(const nlohmann::json& j, ComparisonResults& r);
void to_json(nlohmann::json& j, const DemoResults& r);
void from_json(const nlohmann::json& j, DemoResults& r);
void from_json(const nlohmann::json& j, DemoConfig& c);
void to_json(nlohmann::json& j, const VitResults& r);
void from_json(const nlohmann::json& j, VitResults& r);
void to_json(nlohmann::json& j, const SeededResults& r);
void from_json(const nlohmann::json& j, SeededResults& r);
void to_json(nlohmann::json& j, const DytTrainsResults& r);
void from_json(const nlohmann::json& j, DytTrainsResults& r);
void to_json(nlohmann::json& j, const BhytGapResults& r);
void from_json(const nlohmann::json& j, BhytGapResults& r);
void to_json(nlohmann::json& j, const TunedCell& c);
void from_json(const nlohmann::json& j, TunedCell& c);
void to_json(nlohmann::json& j, const TunedTrial& t);
void from_json(const nlohmann::json& j, TunedTrial& t);
void to_json(nlohmann::json& j, const TunedRun& r);
void from_json(const nlohmann::json& j, TunedRun& r);
void to_json(nlohmann::json& j, const TuningGrid& g);
void from_json(const nlohmann::json& j, TuningGrid& g);
void to_json(nlohmann::json& j, const TunedResults& r);
void from_json(const nlohmann::json& j, TunedResults& r);

// Each finished run's result holds each of `names` as a figure: a FieldError naming
// runs[i].result.NAME otherwise (for a reader that reads the plain ComparisonResults, whose
// own reader requires no figure: what_reproduces).
void require_run_figures(const ComparisonResults& r, const std::vector<std::string>& names);

// A comparison's results file named by `flag` (--reuse, --tuned-results; "" for one this
// run wrote): missing, not JSON, or lacking a field (or holding it with another type) is
// one nl::Error naming the flag, the file and the field ("--reuse: runs/demo/results.json:
// runs[3].result.val_loss is missing"). `missing_hint` is appended to a missing file's.
template <class T>
T read_comparison_results(const std::string& path, const std::string& flag, const std::string& missing_hint = "") {
  return read_record<T>(read_results_file(path, flag, missing_hint), flag, path);
}
// The same for a document already parsed (the tests).
template <class T>
T comparison_results_of(const nlohmann::json& doc, const std::string& flag, const std::string& file) {
  return read_record<T>(doc, flag, file);
}

// results.json (and --doc's copy) as the writer leaves it: the record's JSON, one space per level.
std::string results_text(const nlohmann::json& record);

}  // namespace nl
