// One ViT training run on Fashion-MNIST, as train_vit drives it: the settings checked
// by the flags' own checks (train/flags/vit_flags.h), the task (train/vit/vit_task.h)
// and the training loop (train/loop/trainer.h). Files written to out_dir: config.json,
// log.csv, checkpoint.safetensors, and once the run is complete confusion.csv and
// result.json (the test set's loss and accuracy among the run's figures), plus whatever
// the observers write (act_stats.csv: studies/instruments/act_stats.h).
#pragma once
#include <array>

#include "train/loop/trainer.h"
#include "train/vit/vit_run_config.h"
#include "train/vit/vit_task.h"

namespace nl {

struct ViTRunResult : TrainResult {
  float val_loss = 0, val_accuracy = 0;    // the last evaluation
  bool tested = false;                      // the schedule is done and the test set was evaluated
  float test_loss = 0, test_accuracy = 0;
  std::array<std::array<int64_t, 10>, 10> confusion{};  // [true][predicted] on the test set
  double images_per_s = 0, images_per_cpu_s = 0;
  std::vector<float> residual_rms;          // per block input + output, last step
};

// Checks everything (the settings, the data, a resumed checkpoint) before writing any
// file; bad input, and a file write that fails, throw nl::Error naming the problem. A
// SIGINT/SIGTERM or a non-finite loss or gradient ends the run early (result.end).
using ViTObserverFactory = ObserverFactory<ViTTask>;
ViTRunResult run_vit(const ViTRunConfig& config, const std::vector<ViTObserverFactory>& observers = {});

}  // namespace nl
