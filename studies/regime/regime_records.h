// The regime study's records: what regime_study writes into results.json (a RegimeRun
// per cell, a RegimeResults for the file) and what reads it back (the report, --reuse,
// --cells-from, what_reproduces). Each record's visit_fields (regime_records.cpp,
// train/io/json_fields.h) is the one place its keys are spelled, for both directions,
// so a renamed or missing field is an error naming it and the file (one line, exit 2),
// never a NaN that the report prints as "-". A field that committed results files
// written before it existed lack is optional, with the default its comment gives
// (tests/studies/test_regime_records.cpp loads every docs/results/regime*.json).
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/regime/regime_analysis.h"  // Curve
#include "studies/report/study.h"            // StudyHeader

namespace nl {

// One cell's summary: its place in the grid, how its run ended, and what the report
// reads of its files (log.csv's curves, measurements.json's instruments).
struct RegimeRun {
  std::string model;  // "gpt" or "vit"
  std::string arm;    // the arm's label
  int64_t size = -1;  // training bytes (gpt) or images (vit); -1: all
  int64_t width = 0;  // gpt only (0 for vit)
  int64_t seed = 0;
  bool llama = false;  // one of the Llama collapse arms; optional, default false
  int exit_code = -1;  // the run's (0: finished)
  bool kept = false;   // finished before this invocation; optional, default false
  std::string norm;    // the run's --norm
  std::string bounded; // its norm kind's bounded function ("" for none)
  double val_end = NAN;  // result.json's validation loss (NaN, null in the file: not finished)
  double seconds = NAN;  // result.json's loop seconds (NaN: not finished)
  Curve curve;           // log.csv's validation loss per evaluation
  // vit only: log.csv's validation accuracy per evaluation
  std::optional<Curve> acc_curve;
  // gpt only: the mean training loss of the last steps (regime_analysis.h: kTrainEndSteps;
  // absent in files written before the Llama arms: NaN)
  std::optional<double> train_end;
  // gpt only (required there): the share |alpha x| > 2 at the screen step (NaN: not
  // measured) and, like every instrument of the end below, required in a finished GPT
  // cell's record and optional in a failed one's (absent: NaN)
  std::optional<double> sat_screen, sat_end;
  // gpt only: the end's effective rank, logit variance, DyT's mean alpha, and the noise
  // stability by its eps ("0.01", "0.1")
  std::optional<double> erank_end, logit_variance_end, alpha_end;
  std::optional<std::map<std::string, double>> noise_end;

  bool failed() const { return exit_code != 0; }
  bool finished() const { return exit_code == 0 && !std::isnan(val_end); }
};

// An arm as the results list it: its label and its train_gpt / train_vit flags.
struct RegimeArm {
  std::string label, flags;
};

// A cell of the grid that --kept-only found in no results file.
struct NotRunCell {
  std::string cell;  // cell_kind's text; optional, default ""
  int64_t seed = 0;  // optional, default 0
};

// The whole results file.
struct RegimeResults {
  StudyHeader header;  // date, command, out, jobs, threads, cores, loads, recipe
  // the recipe's flags the report computes with, read from header.recipe by from_json
  // (required there; to_json writes the recipe alone)
  int64_t steps = 0, batch = 0, seq = 0, dim = 0;
  std::string grid;            // --grid
  bool grid_replaced = false;  // a flag replaced part of the named grid; optional, default false
  std::string reference;       // the arm every other is compared with
  std::vector<int64_t> seeds;
  int64_t screen_step = 0, vit_steps = 0;
  int64_t train_bytes_all = 0;  // the training text's bytes (a size of -1)
  // the unigram loss of the validation split; absent in files written before it was
  // recorded (--reuse computes it from the data)
  std::optional<double> unigram_loss;
  int64_t cells_run = 0, cells_kept = 0;
  double seconds = NAN;          // this invocation's wall time
  std::string estimate_minutes;  // --dry-run's estimate, as text
  std::string llama_note;        // why the Llama arms were left out; optional, default ""
  std::optional<std::vector<NotRunCell>> not_run;  // --kept-only's; absent in files before it
  std::vector<RegimeArm> arms, vit_arms;
  std::vector<RegimeArm> llama_arms;  // optional, default none
  std::string plot_script;
  std::vector<RegimeRun> runs;
};

void to_json(nlohmann::json& j, const CurvePoint& p);  // [step, value]
void from_json(const nlohmann::json& j, CurvePoint& p);
void to_json(nlohmann::json& j, const RegimeRun& r);
void from_json(const nlohmann::json& j, RegimeRun& r);
void to_json(nlohmann::json& j, const RegimeArm& a);
void from_json(const nlohmann::json& j, RegimeArm& a);
void to_json(nlohmann::json& j, const NotRunCell& c);
void from_json(const nlohmann::json& j, NotRunCell& c);
void to_json(nlohmann::json& j, const RegimeResults& r);
void from_json(const nlohmann::json& j, RegimeResults& r);

// A regime study's results file named by `flag` (--reuse, --cells-from, --pages): missing,
// not JSON, or lacking a field (or holding it with another type) is one nl::Error naming
// the flag, the file and the field ("--reuse: runs/x/results.json: runs[3].val_end is
// missing").
RegimeResults read_regime_results(const std::string& path, const std::string& flag,
                                  const std::string& missing_hint = "");
// The same for a document already parsed (what_reproduces, the tests).
RegimeResults regime_results_of(const nlohmann::json& doc, const std::string& flag, const std::string& file);

}  // namespace nl
