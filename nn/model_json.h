// Model descriptions as checkpoints store them: one flat JSON object of numbers and
// strings, {"vocab": 256, "layers": 4, "norm": "ln", ...}. Read back by the tools that
// rebuild a model from a checkpoint alone (fold_ln).
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace nl {

// The keys of a flat JSON object with their raw values (strings without their quotes).
// Malformed text throws naming the offset.
std::map<std::string, std::string> parse_flat_json(const std::string& s);

// A parsed description with typed reads; a missing key or a value of the wrong type
// throws naming the key and quoting the description.
class ModelDescription {
 public:
  explicit ModelDescription(std::string text) : text_(std::move(text)), fields_(parse_flat_json(text_)) {}
  bool has(const std::string& key) const { return fields_.count(key) > 0; }
  const std::string& str(const std::string& key) const;
  int64_t integer(const std::string& key) const;
  float real(const std::string& key, float fallback) const;  // fallback when absent

 private:
  std::string text_;
  std::map<std::string, std::string> fields_;
};

}  // namespace nl
