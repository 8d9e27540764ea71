// train_gpt's and train_vit's per-layer activation statistics
// (studies/instruments/act_stats.h) as an observer of the training loop:
// DIR/act_stats.csv gets one probed forward's rows on a fixed held-out batch at step 0,
// every `every` steps and at the schedule's end; a resumed run keeps the rows up to its
// checkpoint and continues the file exactly.
#pragma once
#include <vector>

#include "studies/instruments/act_stats.h"
#include "train/flags/probe_flags.h"
#include "train/gpt/gpt_run.h"
#include "train/vit/vit_run.h"

namespace nl {

// What the observer measured: the last statistics and the time they took.
struct ActStatsRecord {
  std::vector<ActStat> last;
  int64_t step = -1;
  double seconds = 0;
};

// The observer for run_gpt (nothing when settings.every is 0). `record`, when given,
// receives the last statistics and the time spent on them.
std::vector<GPTObserverFactory> act_stats_observer(const ActStatsSettings& settings, ActStatsRecord* record = nullptr);
// The same for run_vit, on the first settings.batch images of the validation split.
std::vector<ViTObserverFactory> vit_act_stats_observer(const ActStatsSettings& settings,
                                                       ActStatsRecord* record = nullptr);

}  // namespace nl
