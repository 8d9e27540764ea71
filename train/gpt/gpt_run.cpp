#include "train/gpt/gpt_run.h"

#include <cstdio>

#include "train/flags/families.h"
#include "train/flags/prepare_run.h"
#include "train/flags/gpt_flags.h"
#include "train/flags/option_warnings.h"
#include "train/safety/distributed.h"

namespace nl {

GPTRunResult run_gpt(const GPTRunConfig& config, const std::vector<GPTObserverFactory>& observers) {
  GPTRunConfig c = config;
  prepare_run(c, check_gpt_run, add_gpt_run_flags);
  GPTTask task(c);
  if (!c.quiet && dist::is_lead()) std::printf("run: %s\n", gpt_run_summary(c, task.model().num_parameters()).c_str());
  std::vector<std::unique_ptr<TrainObserver>> owned;
  GPTRunResult r;
  static_cast<TrainResult&>(r) = train(task, c, make_observers(task, observers, owned));
  if (!r.final_eval.empty()) r.final_val_loss = (float)r.final_eval[0];
  r.tokens_per_s = r.items_per_s;
  for (double v : r.measurements) r.residual_rms.push_back((float)v);
  return r;
}

}  // namespace nl
