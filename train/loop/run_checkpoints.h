// When a training run writes its checkpoint and what goes into it: parameters, AdamW's
// moments, the batch generator, the task's extra state, and as metadata the model's
// description, the run's config and its data's fingerprint (what --resume checks).
// The files' names and how many are kept: train/io/checkpoint_keeper.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "train/io/checkpoint_keeper.h"
#include "train/loop/observer.h"
#include "train/loop/run_files.h"
#include "train/loop/task.h"
#include "train/loop/train_config.h"
#include "train/optim/optim.h"

namespace nl {

class RunCheckpoints {
 public:
  // Once the run may write files: the lead rank removes what a killed save left, and
  // the history checkpoints that are not this run's (keeper.prepare). start_step: the
  // resumed checkpoint's step (it counts as written), 0 for a fresh run.
  RunCheckpoints(const TrainConfig& c, TrainTask& task, const FlatParameters& flat, const AdamW& optim, RunFiles& files,
                 const std::vector<TrainObserver*>& observers, bool lead, int64_t start_step);

  bool due(int64_t step) const { return keeper_.due(step); }
  // Step's checkpoint, on the lead rank. The logs reach the disk first, so that a run
  // resumed from it finds every row up to its step.
  void save(int64_t step);
  int64_t last_step() const { return last_step_; }  // every rank's view; -1: none yet
  std::string latest_path() const { return keeper_.latest_path(); }

 private:
  const TrainConfig& c_;
  TrainTask& task_;
  const FlatParameters& flat_;
  const AdamW& optim_;
  RunFiles& files_;
  const std::vector<TrainObserver*>& observers_;
  bool lead_;
  CheckpointKeeper keeper_;
  int64_t last_step_;
};

}  // namespace nl
