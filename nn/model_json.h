// Model descriptions, as checkpoints store them (their "model" metadata): one flat JSON
// object holding every field of the model's config, {"arch": "gpt", "vocab": 256,
// "layers": 4, ..., "norm": "ln", ...}. A resumed run must build the same description;
// the tools that rebuild a model from a checkpoint alone (fold_ln) read it back. JSON
// through nlohmann-json (Debian's nlohmann-json3-dev), the project's one JSON library.
#pragma once
#include <string>

#include "nn/gpt.h"
#include "nn/vit.h"
#include "tensor/decimal.h"  // how descriptions write floats

namespace nl {

std::string describe_gpt(const GPTConfig& config);
std::string describe_vit(const ViTConfig& config);

// "gpt" or "vit": the model a description is for (descriptions written before "arch"
// existed are GPTs). Throws when the text is not a JSON object.
std::string model_arch(const std::string& description);

// Back to a config, checked (GPTConfig::validate / ViTConfig::validate). Fields the
// description lacks keep their defaults, except the sizes, which must be there; a
// field of the wrong type, or a description of the other model, throws naming it.
GPTConfig gpt_config_from_json(const std::string& description);
ViTConfig vit_config_from_json(const std::string& description);

}  // namespace nl
