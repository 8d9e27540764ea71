// train_gpt --eval-only: the mean next-byte loss of a trained checkpoint, and its
// perplexity exp(loss), trained nothing and written nothing. On the validation split
// the batches are the run's own fixed ones (GPTTask: --eval-batches of 32 sequences
// drawn from --seed), so the loss is the val_loss the run logged at the checkpoint's
// step; on a file, every byte that has a next one is predicted once (windows of the
// context, consecutive_batches).
#pragma once
#include <cstdint>
#include <string>

#include "train/gpt/gpt_run_config.h"

namespace nl {

struct GPTEvaluation {
  double loss = 0;         // nats per byte
  int64_t bytes = 0;       // bytes predicted
  int64_t step = 0;        // the checkpoint's
  std::string checkpoint;  // the file read
  std::string source;      // what was evaluated, in words
};

// c: the run's settings (train_gpt's flags over the checkpoint's recorded ones, checked);
// path: a run's folder or a checkpoint file; text_file: "" for the validation split.
GPTEvaluation evaluate_gpt(const GPTRunConfig& c, const std::string& path, const std::string& text_file);

}  // namespace nl
