#include "train/gpt/gpt_checkpoint.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nn/model_json.h"
#include "tensor/error.h"
#include "train/flags/flag_parser.h"
#include "train/io/checkpoint.h"
#include "train/io/safetensors.h"
#include "train/safety/limits.h"

namespace nl {

std::string encode_c_attn_caches(const GPT& model) {
  std::string out;
  char buf[64];
  for (const auto& b : model.blocks) {
    std::snprintf(buf, sizeof buf, "%s%.9g:%lld", out.empty() ? "" : ",", (double)b->cached_frobenius2(),
                  (long long)b->training_forwards());
    out += buf;
  }
  return out;
}

void restore_c_attn_caches(GPT& model, const std::string& text) {
  std::stringstream ss(text);
  std::string item;
  size_t i = 0;
  while (std::getline(ss, item, ',')) {
    NL_CHECK(i < model.blocks.size(), "checkpoint: bhyt_c_attn holds more entries than the model has blocks");
    const size_t colon = item.find(':');
    NL_CHECK(colon != std::string::npos, "checkpoint: malformed bhyt_c_attn entry '", item, "'");
    model.blocks[i++]->restore_c_attn_cache(std::strtof(item.substr(0, colon).c_str(), nullptr),
                                            std::atoll(item.c_str() + colon + 1));
  }
  NL_CHECK(i == model.blocks.size(), "checkpoint: bhyt_c_attn holds ", i, " entries for ", model.blocks.size(),
           " blocks");
}

std::map<std::string, std::string> load_gpt_weights(GPT& model, const std::string& path, const std::string& what) {
  FlatParameters flat = flatten_parameters(model);
  std::map<std::string, std::string> metadata = load_weights(path, flat, describe_gpt(model.config), what);
  auto caches = metadata.find("bhyt_c_attn");
  if (caches != metadata.end()) restore_c_attn_caches(model, caches->second);
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
