// A trained GPT read back from its checkpoint alone, for the programs that use a model
// rather than train one (sample_gpt, train_gpt --eval-only): the model its "model"
// metadata describes, its parameters (train/io/checkpoint.h: load_weights, checksums and
// shapes checked), and the state a block's site pair keeps beside its parameters
// (nn/norms/site_pair.h), which evaluation forwards use as it stands.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nn/gpt.h"

namespace nl {

// nn/norm_state.h's encode_norm_state and restore_norm_state for a GPT's blocks.
std::string encode_norm_state(const GPT& model);
void restore_norm_state(GPT& model, const std::map<std::string, std::string>& metadata);

// Loads the checkpoint at `path` (a run's folder or a .safetensors file) into `model`,
// whose description must be the one the checkpoint records, and restores the blocks'
// caches. Returns the file's metadata. `what` names the path in messages ("--in").
std::map<std::string, std::string> load_gpt_weights(GPT& model, const std::string& path, const std::string& what);

struct LoadedGPT {
  std::unique_ptr<GPT> model;
  std::string file;  // the checkpoint read
  std::map<std::string, std::string> metadata;
};

// A GPT built from the checkpoint's "model" metadata and loaded from it. Refuses, naming
// `what` and the file, a checkpoint of a ViT, one without a description, and one whose
// description claims a model the file (or this machine's memory) cannot hold.
LoadedGPT load_gpt(const std::string& path, const std::string& what);

// The flags the run that wrote the checkpoint recorded (its "config" metadata, as
// flags_from_values gives them), for a program that rebuilds that run's settings;
// refuses a checkpoint of another program than `program`.
std::vector<std::string> recorded_flags(const std::map<std::string, std::string>& metadata, const std::string& file,
                                        const std::string& program, const std::string& what);

}  // namespace nl
