// depth_study's command line, parsed into one value: the grid's axes (depths, seeds,
// arms), the recipe every run shares, and what the program is to do (train and report,
// --dry-run, --reuse, --speed). The stages (depth_plan.h, depth_run.h, depth_report.h)
// take it; tests build it from made-up command lines without running anything.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/grid/run_spec.h"
#include "train/gpt/gpt_run_config.h"

namespace nl {

struct DepthFlags {
  GPTRunConfig base;  // the recipe every run shares; base.out_dir is the grid's folder (--out)
  std::vector<int64_t> depths, seeds;
  std::vector<RunSpec> arms;
  int jobs = 0, speed_reps = 0;
  bool speed_only = false, reuse = false, dry_run = false;
  double step_ms = 0;
  std::string doc, plot_script;
  nlohmann::ordered_json recipe;       // every flag's value, as results.json records it
  std::vector<std::string> run_flags;  // the recipe as flags, less the study's own: each run takes them first
  std::string command;                 // the command line the report quotes
};

// The flags each cell sets itself (depth_plan.h: its --layers and --seed, and the flags
// every default arm sets, --block and --norm): depth_study takes none of them, so none
// reaches a run twice.
std::vector<std::string> depth_set_per_cell();

// Parses depth_study's arguments into `flags`. False when it printed --help (or the like)
// and the program should stop; throws naming the flag on bad input.
bool parse_depth_flags(const std::vector<std::string>& args, DepthFlags& flags);

}  // namespace nl
