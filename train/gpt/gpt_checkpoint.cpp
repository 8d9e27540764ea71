#include "train/gpt/gpt_checkpoint.h"

#include <nlohmann/json.hpp>

#include "nn/model_json.h"
#include "nn/norm_state.h"
#include "tensor/error.h"
#include "train/flags/flag_parser.h"
#include "train/io/checkpoint.h"
#include "train/io/safetensors.h"
#include "train/safety/limits.h"

namespace nl {

std::string encode_norm_state(const GPT& model) { return encode_norm_state(model.blocks); }

void restore_norm_state(GPT& model, const std::map<std::string, std::string>& metadata) {
  restore_norm_state(model.blocks, model.config.norm.name, metadata);
}

std::map<std::string, std::string> load_gpt_weights(GPT& model, const std::string& path, const std::string& what) {
  FlatParameters flat = flatten_parameters(model);
  std::map<std::string, std::string> metadata = load_weights(path, flat, describe_gpt(model.config), what);
  restore_norm_state(model, metadata);
  return metadata;
}

LoadedGPT load_gpt(const std::string& path, const std::string& what) {
  LoadedGPT out;
  out.file = checkpoint_in(path);
  const SafetensorsFile f = load_safetensors(out.file);
  auto description = f.metadata.find("model");
  NL_CHECK(description != f.metadata.end(), what, " ", out.file,
           ": records no model (its \"model\" metadata): not a checkpoint that normlab wrote");
  NL_CHECK(model_arch(description->second) == "gpt", what, " ", out.file, " holds a ",
           model_arch(description->second), ", not a GPT");
  const GPTConfig config = gpt_config_from_json(description->second);
  // a file holds every parameter in float (a checkpoint also two moments): one under 4 bytes
  // a parameter cannot be of the model its metadata claims. gpt_parameters is an estimate
  // (13 d of biases and norms a block, which --bias off lacks), and a file of weights alone
  // (convert_nanogpt's) has no moments to make up for it: half of it is the floor.
  const double parameters = gpt_parameters(config);
  NL_CHECK(file_bytes(out.file) >= 2.0 * parameters, what, " ", out.file, ": its metadata describes a model of ",
           config.layers, " layers of width ", config.dim, " (", gib(4.0 * parameters),
           " of weights), more than the file holds: its metadata is corrupt");
  check_memory_estimate({{what + " " + out.file + ": the model it describes", 4.0 * parameters},
                         {what + " " + out.file + " (read whole, twice)", 2.0 * file_bytes(out.file)},
                         {"one forward over the context", gpt_forward_bytes(config, 1, false)}});
  Generator unused(0);
  out.model = std::make_unique<GPT>(config, unused);
  out.metadata = load_gpt_weights(*out.model, out.file, what);
  return out;
}

std::vector<std::string> recorded_flags(const std::map<std::string, std::string>& metadata, const std::string& file,
                                        const std::string& program, const std::string& what) {
  auto config = metadata.find("config");
  NL_CHECK(config != metadata.end(), what, " ", file, ": records no config (its \"config\" metadata)");
  const auto values = nlohmann::ordered_json::parse(config->second, nullptr, /*allow_exceptions=*/false);
  NL_CHECK(values.is_object(), what, " ", file, ": its recorded config is not a JSON object");
  NL_CHECK(!values.contains("program") || values["program"] == program, what, " ", file, " was written by ",
           values.value("program", std::string("?")), ", not ", program);
  return flags_from_values(values);
}

}  // namespace nl
