#include "train/io/checkpoint.h"

#include <cmath>
#include <cstdlib>

#include "train/io/safetensors.h"

#include <nlohmann/json.hpp>

namespace nl {
namespace {

// '"dim": 64 in the checkpoint, 32 in this run' for the first field where two model
// descriptions differ (the whole texts when they are not both JSON objects).
std::string first_difference(const std::string& saved, const std::string& wanted) {
  const auto a = nlohmann::json::parse(saved, nullptr, false), b = nlohmann::json::parse(wanted, nullptr, false);
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : b.items())
      if (!a.contains(key) || a[key] != value)
        return "\"" + key + "\": " + (a.contains(key) ? a[key].dump() : std::string("(none)")) +
               " in the checkpoint, " + value.dump() + " in this run";
    for (const auto& [key, value] : a.items())
      if (!b.contains(key)) return "\"" + key + "\": " + value.dump() + " in the checkpoint, (none) in this run";
  }
  return saved + " in the checkpoint, " + wanted + " in this run";
}

}  // namespace

std::string encode_state(const std::vector<uint64_t>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) s += (i ? "," : "") + std::to_string(words[i]);
  return s;
}

std::vector<uint64_t> decode_state(const std::string& text, const std::string& what) {
  std::vector<uint64_t> words;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(start, end - start);
    char* stop = nullptr;
    unsigned long long v = std::strtoull(part.c_str(), &stop, 10);
    NL_CHECK(!part.empty() && *stop == '\0', "checkpoint: malformed ", what, " '", text, "'");
    words.push_back(v);
    start = end + 1;
  }
  return words;
}

void save_checkpoint(const std::string& path, const FlatParameters& params, const AdamW& optim, int64_t step,
                     const Generator& batch_gen, const std::map<std::string, std::string>& extra) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, p] : params.params) tensors[name] = p.value();
  tensors["optim.m"] = optim.m;
  tensors["optim.v"] = optim.v;
  std::map<std::string, std::string> meta = extra;
  meta["format"] = "normlab-checkpoint-1";
  meta["step"] = std::to_string(step);
  meta["optim.steps"] = std::to_string(optim.steps());
  meta["batch_generator"] = encode_state(batch_gen.state());  // extra holds "model", the model's description
  save_safetensors(path, tensors, meta);
}

CheckpointInfo load_checkpoint(const std::string& path, FlatParameters& params, AdamW& optim, Generator& batch_gen,
                               const std::string& expected_model) {
  SafetensorsFile f = load_safetensors(path);
  auto meta = [&](const std::string& key) -> const std::string& {
    auto it = f.metadata.find(key);
    NL_CHECK(it != f.metadata.end(), "checkpoint ", path, ": metadata has no '", key, "' (not a normlab checkpoint?)");
    return it->second;
  };
  NL_CHECK(meta("format") == "normlab-checkpoint-1", "checkpoint ", path, ": unknown format '", meta("format"), "'");
  if (!expected_model.empty() && meta("model") != expected_model)
    fail("checkpoint ", path, " was written for the model of another run: ",
         first_difference(meta("model"), expected_model),
         " (the checkpoint's model: ", meta("model"), ")");
  // check everything before changing anything, so a bad file leaves the model intact
  auto expect = [&](const std::string& name, const Shape& shape) -> const Tensor& {
    auto it = f.tensors.find(name);
    NL_CHECK(it != f.tensors.end(), "checkpoint ", path, ": missing tensor '", name, "' (a different model?)");
    NL_CHECK(it->second.shape() == shape && it->second.dtype() == DType::F32, "checkpoint ", path, ": tensor '",
             name, "' is ", describe(it->second), ", the model expects ", to_string(shape));
    // a NaN or inf would only surface as a non-finite loss at the first step
    for (float v : it->second.to_vector())
      NL_CHECK(std::isfinite(v), "checkpoint ", path, ": tensor '", name,
               "' holds NaN or infinite values (a corrupt or diverged checkpoint)");
    return it->second;
  };
  for (const auto& [name, p] : params.params) expect(name, p.value().shape());
  expect("optim.m", optim.m.shape());
  expect("optim.v", optim.v.shape());
  NL_CHECK(f.tensors.size() == params.params.size() + 2, "checkpoint ", path, ": holds ", f.tensors.size(),
           " tensors, the model has ", params.params.size(), " parameters (+2 optimizer moments)");
  CheckpointInfo info;
  char* end = nullptr;
  info.step = std::strtoll(meta("step").c_str(), &end, 10);
  NL_CHECK(*end == '\0' && info.step >= 0, "checkpoint ", path, ": bad step '", meta("step"), "'");
  int64_t optim_steps = std::strtoll(meta("optim.steps").c_str(), &end, 10);
  NL_CHECK(*end == '\0' && optim_steps >= 0, "checkpoint ", path, ": bad optim.steps");
  std::vector<uint64_t> gen_state = decode_state(meta("batch_generator"), "batch_generator");
  Generator probe;
  probe.set_state(gen_state);  // validates before anything is modified

  for (auto& [name, p] : params.params) p.value().copy_from(f.tensors.at(name));
  optim.m.copy_from(f.tensors.at("optim.m"));
  optim.v.copy_from(f.tensors.at("optim.v"));
  optim.set_steps(optim_steps);
  batch_gen.set_state(gen_state);
  info.metadata = f.metadata;
  return info;
}

}  // namespace nl
