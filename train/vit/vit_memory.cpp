// vit_run_memory (train/vit/vit_run_config.h): a ViT run's terms of the memory check, in
// the model's layer rather than in train/safety/, which knows no model's run config.
#include <string>

#include "train/vit/vit_run_config.h"

namespace nl {

std::vector<MemoryTerm> vit_run_memory(const ViTRunConfig& c) {
  const ViTConfig& m = c.model;
  const double image = (double)(m.channels * m.image * m.image);
  // the 70 000 images as read, and the splits cut from them
  const double data = 2.0 * 70000.0 * (image + 1.0);
  std::vector<MemoryTerm> terms = {
      {model_memory_what(m.layers, m.dim, m.heads, " --patch " + std::to_string(m.patch)),
       kStateBytesPerParameter * vit_parameters(m)},
      {"--batch " + std::to_string(c.batch) + " (what the backward pass keeps)",
       vit_forward_bytes(m, shard_rows(c.batch), true) + 4.0 * (double)c.batch * (image + 1.0)},
      {"--eval-batch " + std::to_string(c.eval_batch) + " (the evaluation's forward)",
       vit_forward_bytes(m, c.eval_batch, false)},
      {"--data " + c.data_dir + " (Fashion-MNIST, read whole)", data},
  };
  add_start_files(terms, c.resume, c.out_dir, c.init_from);
  return terms;
}

}  // namespace nl
