// gpt_run_memory (train/gpt/gpt_run_config.h): a GPT run's terms of the memory check, in
// the model's layer rather than in train/safety/, which knows no model's run config.
#include <string>

#include "train/gpt/gpt_run_config.h"

namespace nl {

std::vector<MemoryTerm> gpt_run_memory(const GPTRunConfig& c) {
  const GPTConfig& m = c.model;
  const double T = (double)m.context;
  std::vector<MemoryTerm> terms = {
      {model_memory_what(m.layers, m.dim, m.heads, " --seq " + std::to_string(m.context)),
       kStateBytesPerParameter * gpt_parameters(m)},
      {"--batch " + std::to_string(c.batch) + " (what the backward pass keeps)",
       gpt_forward_bytes(m, shard_rows(c.batch), true) + 8.0 * (double)c.batch * T},
      // each batch two int32 tensors, and their bookkeeping
      {"--eval-batches " + std::to_string(c.eval_batches) + " (the fixed validation batches of " +
           std::to_string(c.eval_batch_size) + " sequences, and their forward)",
       (double)c.eval_batches * (8.0 * (double)c.eval_batch_size * T + 512.0) +
           gpt_forward_bytes(m, c.eval_batch_size, false)},
      // the text, its train and validation split, the batcher's copy of the training text
      {"--data " + c.data_dir + " (the text, read whole)", 3.0 * folder_bytes(c.data_dir)},
  };
  add_start_files(terms, c.resume, c.out_dir, c.init_from);
  return terms;
}

}  // namespace nl
