#include "train/io/checkpoint.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "train/io/checksum.h"
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

const char* kTensorCrcKey = "tensor_crc32";
const char* kMetadataCrcKey = "metadata_crc32";

uint32_t metadata_crc(const std::map<std::string, std::string>& meta) {
  uint32_t crc = 0;
  for (const auto& [key, value] : meta) {
    if (key == kTensorCrcKey || key == kMetadataCrcKey) continue;
    const std::string entry = key + "=" + value + "\n";
    crc = crc32_bytes(entry.data(), entry.size(), crc);
  }
  return crc;
}

// The file's checksums against its bytes: every tensor's and the metadata's, each
// present and equal. A mismatch names the tensor (or the metadata).
void check_checksums(const std::string& file, const SafetensorsFile& f) {
  auto it = f.metadata.find(kTensorCrcKey);
  NL_CHECK(it != f.metadata.end() && f.metadata.count(kMetadataCrcKey), file,
           ": metadata holds no checksums (", kTensorCrcKey, ", ", kMetadataCrcKey, ")");
  const auto recorded = nlohmann::json::parse(it->second, nullptr, false);
  NL_CHECK(recorded.is_object(), file, ": metadata ", kTensorCrcKey, " is not a JSON object");
  const std::string meta_crc = crc32_hex(metadata_crc(f.metadata));
  NL_CHECK(f.metadata.at(kMetadataCrcKey) == meta_crc, file,
           ": the metadata does not match its checksum (crc32 ", meta_crc, ", recorded ",
           f.metadata.at(kMetadataCrcKey), "): the file is corrupt");
  for (const auto& [name, t] : f.tensors) {
    NL_CHECK(recorded.contains(name) && recorded[name].is_string(), file, ": tensor '", name,
             "' has no checksum in ", kTensorCrcKey);
    const std::string crc = crc32_hex(crc32_tensor(t));
    NL_CHECK(recorded[name].get<std::string>() == crc, file, ": tensor '", name,
             "' does not match its checksum (crc32 ", crc, ", recorded ", recorded[name].get<std::string>(),
             "): the file is corrupt");
  }
  NL_CHECK(recorded.size() == f.tensors.size(), file, ": ", kTensorCrcKey, " lists ",
           recorded.size(), " tensors, the file holds ", f.tensors.size());
}

// Refuses a tensor of the wrong shape or dtype, or holding a value no training writes:
// NaN, infinity, or beyond `bound` (kMaxLoadedValue; kMaxLoadedSquare for the second
// moment, a mean of squared gradients).
const Tensor& expect_tensor(const std::string& file, const SafetensorsFile& f, const std::string& name,
                            const Shape& shape, bool non_negative = false, float bound = kMaxLoadedValue) {
  auto it = f.tensors.find(name);
  NL_CHECK(it != f.tensors.end(), file, ": missing tensor '", name, "' (a different model?)");
  const Tensor& t = it->second;
  NL_CHECK(t.shape() == shape && t.dtype() == DType::F32, file, ": tensor '", name, "' is ",
           describe(t), ", the model expects ", to_string(shape));
  const float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) {
    // a NaN or inf would only surface as a non-finite loss at the first step
    NL_CHECK(std::isfinite(p[i]), file, ": tensor '", name,
             "' holds NaN or infinite values (a corrupt or diverged checkpoint)");
    NL_CHECK(!non_negative || p[i] >= 0.0f, file, ": tensor '", name, "' holds a negative value (",
             p[i], " at ", i, "), which a second moment (a mean of squares) cannot be: the file is corrupt");
    // a flipped exponent bit gives a finite 4e36, which trained on to a loss of 2.6e36
    NL_CHECK(std::fabs(p[i]) <= bound, file, ": tensor '", name, "' holds ", p[i], " at ", i, ", beyond the bound ",
             bound, " of a loaded value (a corrupt or runaway checkpoint)");
  }
  return t;
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

void add_checksums(const std::map<std::string, Tensor>& tensors, std::map<std::string, std::string>& meta) {
  nlohmann::json crcs = nlohmann::json::object();
  for (const auto& [name, t] : tensors) crcs[name] = crc32_hex(crc32_tensor(t));
  meta[kTensorCrcKey] = crcs.dump();
  meta[kMetadataCrcKey] = crc32_hex(metadata_crc(meta));
}

void save_checkpoint(const std::string& path, const FlatParameters& params, const AdamW& optim, int64_t step,
                     const Generator& batch_gen, const std::map<std::string, std::string>& extra) {
  // on the CPU, contiguous: the bytes the file will hold, which the checksums cover
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, p] : params.params) tensors[name] = p.value().contiguous().to(Device::CPU);
  tensors["optim.m"] = optim.m.contiguous().to(Device::CPU);
  tensors["optim.v"] = optim.v.contiguous().to(Device::CPU);
  std::map<std::string, std::string> meta = extra;
  meta["format"] = kCheckpointFormat;
  meta["step"] = std::to_string(step);
  meta["optim.steps"] = std::to_string(optim.steps());
  meta["batch_generator"] = encode_state(batch_gen.state());  // extra holds "model", the model's description
  add_checksums(tensors, meta);
  save_safetensors(path, tensors, meta);
}

CheckpointInfo load_checkpoint(const std::string& path, FlatParameters& params, AdamW& optim, Generator& batch_gen,
                               const std::string& expected_model,
                               const std::function<void(const std::map<std::string, std::string>&)>& check_metadata) {
  SafetensorsFile f = load_safetensors(path);
  auto meta = [&](const std::string& key) -> const std::string& {
    auto it = f.metadata.find(key);
    NL_CHECK(it != f.metadata.end(), "checkpoint ", path, ": metadata has no '", key, "' (not a normlab checkpoint?)");
    return it->second;
  };
  if (meta("format") == "normlab-checkpoint-1")
    fail("checkpoint ", path, ": format normlab-checkpoint-1 was written before checkpoints carried checksums, so its "
         "integrity cannot be checked; start the run again, or take its weights with --init-from");
  NL_CHECK(meta("format") == kCheckpointFormat, "checkpoint ", path, ": unknown format '", meta("format"), "'");
  check_checksums("checkpoint " + path, f);
  if (!expected_model.empty() && meta("model") != expected_model)
    fail("checkpoint ", path, " was written for the model of another run: ",
         first_difference(meta("model"), expected_model),
         " (the checkpoint's model: ", meta("model"), ")");
  if (check_metadata) check_metadata(f.metadata);
  // check everything before changing anything, so a bad file leaves the model intact
  const std::string file = "checkpoint " + path;
  for (const auto& [name, p] : params.params) expect_tensor(file, f, name, p.value().shape());
  expect_tensor(file, f, "optim.m", optim.m.shape());
  expect_tensor(file, f, "optim.v", optim.v.shape(), /*non_negative=*/true, kMaxLoadedSquare);
  NL_CHECK(f.tensors.size() == params.params.size() + 2, "checkpoint ", path, ": holds ", f.tensors.size(),
           " tensors, the model has ", params.params.size(), " parameters (+2 optimizer moments)");
  CheckpointInfo info;
  char* end = nullptr;
  info.step = std::strtoll(meta("step").c_str(), &end, 10);
  NL_CHECK(*end == '\0' && info.step >= 0, "checkpoint ", path, ": bad step '", meta("step"), "'");
  int64_t optim_steps = std::strtoll(meta("optim.steps").c_str(), &end, 10);
  // skipped steps (--on-nonfinite skip) do not count as optimizer steps, so never more
  NL_CHECK(*end == '\0' && optim_steps >= 0 && optim_steps <= info.step, "checkpoint ", path, ": bad optim.steps '",
           meta("optim.steps"), "' (step ", info.step, ")");
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

std::string checkpoint_in(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) ? (std::filesystem::path(path) / "checkpoint.safetensors").string()
                                                 : path;
}

std::map<std::string, std::string> load_weights(const std::string& path, FlatParameters& params,
                                                const std::string& expected_model, const std::string& what) {
  const std::string in = checkpoint_in(path);
  std::error_code ec;
  NL_CHECK(std::filesystem::exists(std::filesystem::symlink_status(in, ec)), what, " ", in, ": no such file");
  SafetensorsFile f = load_safetensors(in, HalfFloats::ToF32);
  const std::string file = what + " " + in;
  if (f.metadata.count(kTensorCrcKey)) check_checksums(file, f);
  auto model = f.metadata.find("model");
  if (!expected_model.empty() && model != f.metadata.end() && model->second != expected_model)
    fail(file, " was written for another model: ", first_difference(model->second, expected_model));
  for (const auto& [name, p] : params.params) expect_tensor(file, f, name, p.value().shape());
  for (const auto& [name, t] : f.tensors) {
    if (name == "optim.m" || name == "optim.v") continue;
    bool known = false;
    for (const auto& [n, p] : params.params) known |= n == name;
    NL_CHECK(known, file, ": tensor '", name, "' is not a parameter of this model (its parameters: ",
             params.params.front().first, ", ..., ", params.params.back().first, ")");
  }
  for (auto& [name, p] : params.params) p.value().copy_from(f.tensors.at(name));
  return f.metadata;
}

}  // namespace nl
