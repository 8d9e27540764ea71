// regime_study's command line as one value (parse_regime_flags): the grid it plans
// (RegimePlan), the recipe every GPT run gets, and the study's own switches. What the
// later stages need of the parser (which flags the command line named, the recipe's
// keys) is read off it here, so that plan, run and report take only this value.
#pragma once
#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "studies/instruments/screening.h"
#include "studies/regime/regime_study.h"
#include "train/gpt/gpt_run_config.h"

namespace nl {

struct RegimeFlags {
  GPTRunConfig base;  // the recipe's run settings: steps, out_dir (OUT), data_dir, threads
  RegimePlan plan;
  std::string grid = "small", reference = "ln";
  int64_t screen_step = kScreenSteps;  // --screen-step
  int jobs = 0;
  bool reuse = false, dry_run = false, kept_only = false;
  double gpt_step_ms = 75, vit_step_ms = 42;
  std::string doc = "docs/results/regime.md", plot_script = "scripts/plot_regime.sh";
  std::string cells_from;             // FILE,FILE,... as given
  std::string llama_note;             // why --grid full left the Llama arms out, or empty
  nlohmann::ordered_json recipe;      // every flag's value, as FlagParser::values() keys them
  std::vector<std::string> own;       // keys the study sets itself: never a run's recipe
  std::vector<std::string> compared;  // the recipe's keys --cells-from compares
  std::vector<std::string> named;     // the keys of the flags this command line gave
  bool grid_replaced = false;         // a list flag replaced a part of the named grid
  std::string command;                // the invocation, as the report's Regenerate line gives it

  // the step of the first measurement: the screen's, or the end of a shorter run
  int64_t measure_first() const { return std::min(screen_step, base.steps); }
  bool given(const std::string& key) const { return std::count(named.begin(), named.end(), key) > 0; }
};

// Parses args (after the program's name) into f; false when nothing is to run (--help).
// Bad flags throw naming the flag.
bool parse_regime_flags(const std::vector<std::string>& args, RegimeFlags& f);

}  // namespace nl
