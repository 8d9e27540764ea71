#include "train/loop/run_checkpoints.h"

#include <map>

#include "train/io/checkpoint.h"

namespace nl {

RunCheckpoints::RunCheckpoints(const TrainConfig& c, TrainTask& task, const FlatParameters& flat, const AdamW& optim,
                               RunFiles& files, const std::vector<TrainObserver*>& observers, bool lead,
                               int64_t start_step)
    : c_(c), task_(task), flat_(flat), optim_(optim), files_(files), observers_(observers), lead_(lead),
      keeper_(c.out_dir, c.safety.checkpoints), last_step_(c.resume ? start_step : -1) {
  if (lead_) keeper_.prepare(c.resume, start_step);
}

void RunCheckpoints::save(int64_t step) {
  last_step_ = step;
  if (!lead_) return;
  files_.sync_log();
  for (TrainObserver* o : observers_) o->sync();
  std::map<std::string, std::string> metadata = task_.extra_state();
  metadata["model"] = task_.model_description();
  metadata["config"] = c_.config_json;
  if (const std::string data = task_.data_fingerprint(); !data.empty()) metadata["data"] = data;
  keeper_.save(step, [&](const std::string& path) {
    save_checkpoint(path, flat_, optim_, step, task_.batch_generator(), metadata);
  });
}

}  // namespace nl
