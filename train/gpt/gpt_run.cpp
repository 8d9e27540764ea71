#include "train/gpt/gpt_run.h"

#include "train/flags/families.h"
#include "train/flags/prepare_run.h"
#include "train/flags/gpt_flags.h"

namespace nl {

GPTRunResult run_gpt(const GPTRunConfig& config, const std::vector<GPTObserverFactory>& observers) {
  GPTRunConfig c = config;
  prepare_run(c, check_gpt_run, add_gpt_run_flags);
  GPTTask task(c);
  std::vector<std::unique_ptr<TrainObserver>> owned;
  std::vector<TrainObserver*> attached;
  for (const auto& make : observers) {
    owned.push_back(make(task));
    attached.push_back(owned.back().get());
  }
  GPTRunResult r;
  static_cast<TrainResult&>(r) = train(task, c, attached);
  if (!r.final_eval.empty()) r.final_val_loss = (float)r.final_eval[0];
  r.tokens_per_s = r.items_per_s;
  for (double v : r.measurements) r.residual_rms.push_back((float)v);
  return r;
}

}  // namespace nl
