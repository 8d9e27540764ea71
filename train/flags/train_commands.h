// The whole command line of the training programs, declared once: train_gpt and
// train_vit parse theirs with it (apps/), and the study grids (studies/grid/grid.h) check
// their cells with it before they start any, so a cell is refused exactly as the program
// would refuse it. The probes' flags (probe_flags.h) are declared here with the run's; the
// probes themselves, studies/instruments/, are attached by the programs.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/flags/flag_parser.h"
#include "train/flags/probe_flags.h"
#include "train/gpt/gpt_run_config.h"
#include "train/safety/limits.h"
#include "train/vit/vit_run_config.h"

namespace nl {

struct TrainGptCommand {
  GPTRunConfig run;
  ActStatsSettings stats;
  MeasureAtSettings measure;
  bool screen = false;      // --screen-dyt: stop at the screening step with the rule's verdict
  ScreenSettings screening;
  double dist_timeout = 300;
  std::string eval_only;  // --eval-only PATH: evaluate that checkpoint, train nothing (train/gpt/gpt_eval.h)
  std::string eval_file;  // --eval-file FILE: ... on this file instead of the validation split
};
void add_train_gpt_flags(FlagParser& p, TrainGptCommand& c);
// The memory estimate of a train_gpt command (train/safety/limits.h): the run's terms and
// those of its probes.
std::vector<MemoryTerm> train_gpt_memory(const TrainGptCommand& c);

struct TrainVitCommand {
  ViTRunConfig run;
  ActStatsSettings stats;
};
void add_train_vit_flags(FlagParser& p, TrainVitCommand& c);

// Declares a training program's flags (add_train_gpt_flags, add_train_vit_flags) on p and
// parses argv into `command`; false when nothing is to run (--help, --list-recipes). The
// run records the flags the parser read (its config.json).
template <class Command>
bool parse_training_command(FlagParser& p, Command& command, void (*add)(FlagParser&, Command&), int argc,
                            char** argv) {
  add(p, command);
  if (!p.parse(argc, argv)) return false;
  command.run.config_json = p.config_json();
  return true;
}

// Checks args (the flags after the program's name) as `program` would and returns what
// it would record in config.json; throws naming the flag.
nlohmann::ordered_json check_command(const std::string& program, const std::vector<std::string>& args);

// The recorded flags (values() keys, "mlp") that `args` change without naming them: those
// another flag of args implies (--block llama sets --mlp swiglu --bias off --tied-head off
// unless they are given). A study that passes its whole recipe to every run must leave
// these out of an arm's command, else the recipe's explicit defaults override the
// implication (a Llama arm would train a GELU MLP with biases and a tied head). Throws
// as check_command.
std::vector<std::string> implied_keys(const std::string& program, const std::vector<std::string>& args);

}  // namespace nl
