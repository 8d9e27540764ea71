// One GPT training run, as train_gpt and the demo drive it: data, model, AdamW with
// warmup + cosine, clipping, evaluation on fixed validation batches, the log, the
// checkpoint (exact resume) and a text sample at the end. Files written to out_dir:
//   config.json, log.csv, checkpoint.safetensors, sample.txt, and act_stats.csv
//   (studies/instruments/act_stats.h: per-layer activation statistics on one fixed validation batch,
//   at step 0 and every act_stats_every steps and at the end; 0: no file)
#pragma once
#include <functional>
#include <string>

#include "nn/gpt.h"
#include "studies/instruments/act_stats.h"
#include "train/safety/run_safety.h"

namespace nl {

struct GPTRunConfig {
  GPTConfig model;
  int64_t batch = 16, steps = 500, warmup = 50;
  float lr = 1e-3f, min_lr = 1e-4f, wd = 0.1f, clip = 1.0f;
  float beta1 = 0.9f, beta2 = 0.99f;
  uint64_t seed = 1337;
  int64_t eval_every = 100, eval_batches = 20, eval_batch_size = 32;
  int64_t train_bytes = -1;
  int threads = 2;
  std::string device = "cpu";  // cpu | cuda: where the model trains (data stays on the host)
  std::string data_dir = "/usr/share/games/fortunes";
  std::string out_dir = "runs/gpt";
  bool resume = false;
  int64_t stop_after = -1;    // stop (and checkpoint) after this many steps; -1: run all
  int64_t sample_bytes = 300; // length of sample.txt
  float temperature = 0.8f;
  int64_t top_k = 40;
  bool quiet = false;         // no progress lines (the summary is still returned)
  int64_t act_stats_every = 100;  // steps between activation statistics (0: none)
  int64_t act_stats_batch = 16;   // sequences of the fixed held-out batch they are taken on
  RunSafety safety;               // periodic checkpoints, keep-last-K, what a NaN/inf does
  // Called after every training step with the model and the number of steps done; the
  // studies take their measurements here (a hook must leave the model's mode as it found
  // it). Unset: nothing. Not part of the run's description.
  std::function<void(GPT& model, int64_t steps_done)> after_step;
  std::string to_json() const;
};

struct GPTRunResult {
  float final_train_loss = 0, final_val_loss = 0;
  double tokens_per_s = 0;               // median over the timed steps
  std::vector<float> residual_rms;       // per block input + output, last step
  bool diverged = false;                 // a loss or gradient became NaN or inf
  RunEnd end;                            // why the run stopped early (signal, fault), if it did
  int64_t steps_done = 0;
  std::vector<ActStat> act_stats;        // the last activation statistics taken (empty: none)
  double wall_s = 0;                     // the whole run, setup to sample
  double act_stats_s = 0;                // of which taking activation statistics
  double allreduce_s = 0;                // of which averaging gradients over ranks (train/safety/distributed.h)
};

// Validates everything (config, data, a resumed checkpoint) before writing any file;
// bad input, and a file write that fails, throw nl::Error naming the problem. A
// SIGINT/SIGTERM (train/safety/stop_signals.h) or a non-finite loss or gradient ends the run
// early and is reported in result.end.
GPTRunResult run_gpt(const GPTRunConfig& config);

}  // namespace nl
