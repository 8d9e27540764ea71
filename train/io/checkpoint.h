// A training checkpoint in safetensors: every parameter under its dotted name, the
// AdamW moments as "optim.m" / "optim.v" (flat, in the parameter buffer's order), and in
// the metadata the step, the run's config (JSON) and the batch generator's state.
// Loading checks that the file fits the model: same names, same shapes.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "nn/module.h"
#include "tensor/random.h"
#include "train/optim/optim.h"

namespace nl {

void save_checkpoint(const std::string& path, const FlatParameters& params, const AdamW& optim, int64_t step,
                     const Generator& batch_gen, const std::map<std::string, std::string>& extra_metadata);

struct CheckpointInfo {
  int64_t step = 0;
  std::map<std::string, std::string> metadata;
};

// Restores parameters, optimizer state and generator state in place. When
// expected_model is given, the checkpoint's "model" metadata must equal it (checked
// first, so a checkpoint of another model is named as such rather than by a tensor).
CheckpointInfo load_checkpoint(const std::string& path, FlatParameters& params, AdamW& optim, Generator& batch_gen,
                               const std::string& expected_model = "");

std::string encode_state(const std::vector<uint64_t>& words);  // "w0,w1,w2,w3"
std::vector<uint64_t> decode_state(const std::string& text, const std::string& what);

}  // namespace nl
