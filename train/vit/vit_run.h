// One ViT training run on Fashion-MNIST, as train_vit and compare_vit drive it: data
// (train/data/fashion_mnist.h), model (nn/vit.h), AdamW with warmup + cosine, clipping,
// evaluation on the whole validation split, the log, the checkpoint (exact resume), and
// at the end the test loss, accuracy and confusion matrix. Files written to out_dir:
//   config.json, log.csv, checkpoint.safetensors, and once the run is complete
//   confusion.csv (rows = true class, columns = predicted) and result.json
#pragma once
#include <array>
#include <string>
#include <vector>

#include "nn/vit.h"
#include "train/data/fashion_mnist.h"
#include "train/safety/run_safety.h"

namespace nl {

struct ViTRunConfig {
  ViTConfig model;
  // the schedule's length: `steps` when > 0, else ceil(epochs * training images / batch)
  int64_t batch = 128, steps = 0, warmup = 100;
  double epochs = 12;
  float lr = 3e-3f, min_lr = 1e-5f, wd = 0.1f, clip = 1.0f;
  float beta1 = 0.9f, beta2 = 0.99f;
  uint64_t seed = 1337;       // initialisation, shuffling and augmentation
  uint64_t split_seed = 1;    // which training images form the validation split
  int64_t val_size = 5000;
  AugmentConfig augment;
  int64_t eval_every = 500, eval_batch = 500;
  int threads = 2;
  std::string device = "cpu";  // cpu | cuda: where the model trains (data stays on the host)
  std::string data_dir = kFashionMnistDir;
  std::string out_dir = "runs/vit";
  bool resume = false;
  int64_t stop_after = -1;    // stop (and checkpoint) after this many steps; -1: run all
  bool quiet = false;         // no progress lines
  RunSafety safety;           // periodic checkpoints, keep-last-K, what a NaN/inf does
  std::string to_json() const;
  void validate() const;      // throws nl::Error naming the bad flag (data-dependent checks come later)
};

struct ViTRunResult {
  int64_t steps = 0, steps_done = 0;   // the schedule's length, and how far this run got
  float final_train_loss = 0, val_loss = 0, val_accuracy = 0;
  float test_loss = 0, test_accuracy = 0;  // set when the run is complete (steps_done == steps)
  bool tested = false;
  std::array<std::array<int64_t, 10>, 10> confusion{};  // [true][predicted] on the test set
  double images_per_s = 0;             // median over the timed steps (wall clock)
  double images_per_cpu_s = 0;         // the same per second of this process's CPU time
  double seconds = 0;                  // wall time of the training loop (validation included)
  double cpu_seconds = 0;              // CPU time of the same, all threads
  std::vector<float> residual_rms;     // per block input + output, last step
  bool diverged = false;               // a loss or gradient became NaN or inf
  RunEnd end;                          // why the run stopped early (signal, fault), if it did
};

// Validates everything (config, data, a resumed checkpoint) before writing any file;
// bad input, and a file write that fails, throw nl::Error naming the problem. A
// SIGINT/SIGTERM (train/safety/stop_signals.h) or a non-finite loss or gradient ends the run
// early and is reported in result.end.
ViTRunResult run_vit(const ViTRunConfig& config);

// Mean loss and accuracy of `model` on a whole image set, batch by batch, without
// recording a graph and in eval mode; adds each image's (true, predicted) to confusion
// when given.
struct EvalResult {
  float loss = 0, accuracy = 0;
};
EvalResult evaluate_vit(ViT& model, const ImageSet& set, float mean, float std, int64_t batch,
                        std::array<std::array<int64_t, 10>, 10>* confusion = nullptr);

}  // namespace nl
