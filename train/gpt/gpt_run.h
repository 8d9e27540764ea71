// One GPT training run, as train_gpt drives it: the run's settings checked by the
// flags' own checks (train/flags/gpt_flags.h), the task (train/gpt/gpt_task.h), the
// training loop (train/loop/trainer.h) with any observers a caller attaches, and the
// text sample at the end. Files written to out_dir: config.json, log.csv,
// checkpoint.safetensors, sample.txt and result.json (the loop's), plus whatever the
// observers write (act_stats.csv: studies/instruments/act_stats.h).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "train/gpt/gpt_run_config.h"
#include "train/gpt/gpt_task.h"
#include "train/loop/trainer.h"

namespace nl {

struct GPTRunResult : TrainResult {
  float final_val_loss = 0;
  double tokens_per_s = 0;           // median over the timed steps
  std::vector<float> residual_rms;   // per block input + output, last step
};

// act_stats_observer, the DyT screen, the measurements (train/loop/observer.h)
using GPTObserverFactory = ObserverFactory<GPTTask>;

// Checks everything (the settings, the data, a resumed checkpoint) before writing any
// file; bad input, and a file write that fails, throw nl::Error naming the problem. A
// SIGINT/SIGTERM (train/safety/stop_signals.h) or a non-finite loss or gradient ends the
// run early and is reported in result.end. config.config_json, when empty, is what
// train_gpt would record for these settings.
GPTRunResult run_gpt(const GPTRunConfig& config, const std::vector<GPTObserverFactory>& observers = {});

}  // namespace nl
