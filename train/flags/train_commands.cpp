#include "train/flags/train_commands.h"

#include <algorithm>

#include "tensor/error.h"
#include "train/safety/limits.h"
#include "train/flags/gpt_flags.h"
#include "train/flags/vit_flags.h"

namespace nl {

void add_train_gpt_flags(FlagParser& p, TrainGptCommand& c) {
  add_gpt_run_flags(p, c.run);
  add_act_stats_flags(p, c.stats);
  add_measure_flags(p, c.measure);
  p.toggle("--screen-dyt", c.screen,
           "stop at step --screen-steps with the verdict of DyT's screening rule (saturation > 0.43 predicts that "
           "DyT helps; see screen_dyt --help)",
           FlagRole::Control);
  add_screen_flags(p, c.screening);
  p.real("--dist-timeout", c.dist_timeout, 0, 1e6,
         "with several MPI ranks: seconds one rank may wait for the others in one collective before it gives up "
         "(0: forever)",
         FlagRole::Setting);
  p.text("--eval-only", c.eval_only,
         "train nothing: print the validation loss and perplexity of this checkpoint (a run's folder or a "
         ".safetensors file), with the flags its run recorded (flags given override them)",
         FlagRole::Control);
  p.text("--eval-file", c.eval_file, "with --eval-only: every byte of this file instead of the validation split",
         FlagRole::Control);
  p.check([&c] {
    NL_CHECK(c.eval_file.empty() || !c.eval_only.empty(), "--eval-file needs --eval-only (the checkpoint to evaluate)");
    NL_CHECK(c.eval_only.empty() || (!c.run.resume && !c.run.overwrite && !c.screen),
             "--eval-only trains nothing: it takes no --resume, --overwrite or --screen-dyt");
    if (c.screen) check_screened(c.run.model.norm.name);
  });
  // the run's estimate again, with what the probes add: their held-out batches and the
  // forward over each (the activation statistics, the screening, the measurements)
  p.check([&c] { check_memory_estimate(train_gpt_memory(c)); });
}

std::vector<MemoryTerm> train_gpt_memory(const TrainGptCommand& c) {
  std::vector<MemoryTerm> terms = gpt_run_memory(c.run);
  const GPTConfig& m = c.run.model;
  const double T = (double)m.context;
  if (c.stats.every > 0)
    terms.push_back({"--act-stats-batch " + std::to_string(c.stats.batch) + " (the activation statistics' probe)",
                     4.0 * (double)c.stats.batch * T * (1.0 + (double)m.dim) +
                         gpt_forward_bytes(m, c.stats.batch, false)});
  if (c.screen)
    terms.push_back({"--screen-batches " + std::to_string(c.screening.batches) + " (the screening's held-out batches)",
                     8.0 * 32.0 * (double)c.screening.batches * T + gpt_forward_bytes(m, 32, false)});
  // each record: the held-out batches, a forward over 32 of their rows, and the
  // double-precision copies an SVD of the widest matrix (dim x 4 dim) works on
  if (!c.measure.steps.empty())
    terms.push_back({"--measure-batches " + std::to_string(c.measure.batches) + " (the measurements' held-out batches)",
                     8.0 * 32.0 * (double)c.measure.batches * T + gpt_forward_bytes(m, 32, false) +
                         3.0 * 8.0 * 4.0 * (double)m.dim * (double)m.dim});
  return terms;
}

void add_train_vit_flags(FlagParser& p, TrainVitCommand& c) {
  add_vit_run_flags(p, c.run);
  add_act_stats_flags(p, c.stats);
}

nlohmann::ordered_json check_command(const std::string& program, const std::vector<std::string>& args) {
  FlagParser p(program, "");
  TrainGptCommand gpt;
  TrainVitCommand vit;
  if (program == "train_gpt") add_train_gpt_flags(p, gpt);
  else if (program == "train_vit") add_train_vit_flags(p, vit);
  else fail("grid: no flags known for the program '", program, "'");
  p.parse(args);
  return p.values();
}

std::vector<std::string> implied_keys(const std::string& program, const std::vector<std::string>& args) {
  const nlohmann::ordered_json plain = check_command(program, {}), with = check_command(program, args);
  std::vector<std::string> named;
  for (const std::string& a : args)
    if (a.rfind("--", 0) == 0) named.push_back(flag_key(a));
  std::vector<std::string> implied;
  for (const auto& [key, value] : with.items())
    if (plain.contains(key) && plain[key] != value && std::find(named.begin(), named.end(), key) == named.end())
      implied.push_back(key);
  return implied;
}

}  // namespace nl
