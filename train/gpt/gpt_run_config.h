// The settings of one GPT training run: the loop's (train/loop/train_config.h), the
// model's (nn/gpt.h), and the text data's. The defaults are train_gpt's, the `tiny`
// configuration of ../shared/BENCHMARKS.md that `make demo` trains.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/gpt.h"
#include "train/loop/train_config.h"
#include "train/safety/limits.h"

namespace nl {

struct GPTRunConfig : TrainConfig {
  // the named recipe the flags started from (train/flags/recipes.h; empty: none); its
  // flags are already in the fields below, config.json records both
  std::string recipe;
  GPTConfig model;
  std::string data_dir = "/usr/share/games/fortunes";
  int64_t train_bytes = -1;  // keep only the first N training bytes (-1: all)
  int64_t eval_batches = 20, eval_batch_size = 32;  // the fixed validation batches
  int64_t sample_bytes = 300;  // length of sample.txt
  float temperature = 0.8f;
  int64_t top_k = 40;
  GPTRunConfig() { out_dir = "runs/gpt"; }
};

// What a run with these settings holds in memory (train/safety/limits.h): the model's
// state (parameters, gradients, moments), --batch (what the backward keeps), the fixed
// validation batches and their forward, the text read whole, and the files --resume and
// --init-from read whole.
std::vector<MemoryTerm> gpt_run_memory(const GPTRunConfig& c);

}  // namespace nl
