#include "nn/model_json.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>

#include "tensor/error.h"

namespace nl {
namespace {

using json = nlohmann::json;

json parse(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail("model description is not valid JSON (", e.what(), "): ", text);
  }
  NL_CHECK(j.is_object(), "model description is not a JSON object: ", text);
  return j;
}

// Typed reads that name the key: required ones throw when absent, optional ones keep
// the value they were given.
class Fields {
 public:
  Fields(json j, std::string text) : j_(std::move(j)), text_(std::move(text)) {}
  bool has(const char* key) const { return j_.contains(key); }
  int64_t integer(const char* key) const {
    NL_CHECK(has(key), "model description: no '", key, "' in ", text_);
    NL_CHECK(j_[key].is_number_integer(), "model description: '", key, "' is not an integer: ", j_[key].dump());
    return j_[key].get<int64_t>();
  }
  void real(const char* key, float& target) const {
    if (!has(key)) return;
    NL_CHECK(j_[key].is_number(), "model description: '", key, "' is not a number: ", j_[key].dump());
    target = j_[key].get<float>();
  }
  void boolean(const char* key, bool& target) const {
    if (!has(key)) return;
    NL_CHECK(j_[key].is_boolean(), "model description: '", key, "' is not true or false: ", j_[key].dump());
    target = j_[key].get<bool>();
  }
  void text(const char* key, std::string& target, bool required = false) const {
    if (!has(key)) {
      NL_CHECK(!required, "model description: no '", key, "' in ", text_);
      return;
    }
    NL_CHECK(j_[key].is_string(), "model description: '", key, "' is not a string: ", j_[key].dump());
    target = j_[key].get<std::string>();
  }

 private:
  json j_;
  std::string text_;
};

json number(float v) { return json(std::strtod(shortest_decimal(v).c_str(), nullptr)); }

// "dyt-alpha0" -> "dyt_alpha0": an option's key in a description
std::string key_of(const std::string& option) {
  std::string key = option;
  for (char& c : key)
    if (c == '-') c = '_';
  return key;
}

// The norm and every option its kinds declare (the blocks' and the final norm's, when
// that is another), as set, by default or as followed (unset optional ones left out;
// text options as their text): a description says everything the model was built from,
// and nothing only other kinds declare, so that registering a kind leaves the
// descriptions of existing models, and with them the resumption of their checkpoints,
// as they were.
void describe_norm(json& j, const NormConfig& n, const std::string& final_norm) {
  j["norm"] = n.name;
  j["eps"] = number(n.eps);
  // only when off: the descriptions of models with the shift, all written before the
  // switch existed, stay as they were
  if (!n.bias) j["norm_bias"] = false;
  auto declared = [&](const NormOption& option, const std::string& kind) {
    for (const NormOption& o : norm_kind(kind).options)
      if (o.name == option.name) return true;
    return false;
  };
  for (const NormOption& o : norm_options()) {
    if (!declared(o, n.name) && !declared(o, final_norm)) continue;
    if (!n.has(o.name)) continue;
    if (o.quiet_default && n.option(o.name) == o.initial) continue;
    const std::string key = key_of(o.name);
    if (!o.choices.empty()) j[key] = n.choice(o.name);
    else j[key] = o.integer ? json((int64_t)n.option(o.name)) : number((float)n.option(o.name));
  }
}

void read_norm(const Fields& d, NormConfig& n) {
  d.text("norm", n.name, true);
  d.real("eps", n.eps);
  d.boolean("norm_bias", n.bias);
  for (const NormOption& o : norm_options()) {
    const std::string key = key_of(o.name);
    if (!d.has(key.c_str())) continue;
    if (!o.choices.empty()) {
      std::string v;
      d.text(key.c_str(), v);
      n.set_choice(o.name, v);
      continue;
    }
    float v = 0;
    d.real(key.c_str(), v);
    n.set(o.name, v);
  }
}

}  // namespace

std::string describe_gpt(const GPTConfig& c) {
  json j = json::object();
  j["arch"] = "gpt";
  j["vocab"] = c.vocab;
  j["layers"] = c.layers;
  j["dim"] = c.dim;
  j["heads"] = c.heads;
  j["context"] = c.context;
  j["block"] = c.block;
  j["mlp"] = c.mlp;
  j["attn"] = c.attn;
  j["emb_scale0"] = number(c.emb_scale0);
  // The final norm's kind as built, left "" when it is the blocks' own and none was named,
  // and the GPT-2 defaults (biases, a tied head) left out, as descriptions were written
  // before these fields: those models' checkpoints still resume.
  const std::string final_kind = c.final_norm_name();
  j["final_norm"] = c.final_norm.empty() && final_kind == c.norm.name ? std::string() : final_kind;
  if (!c.bias) j["bias"] = false;
  if (!c.tied_head) j["tied_head"] = false;
  describe_norm(j, c.norm, final_kind);
  return j.dump();
}

std::string describe_vit(const ViTConfig& c) {
  json j = json::object();
  j["arch"] = "vit";
  j["image"] = c.image;
  j["channels"] = c.channels;
  j["patch"] = c.patch;
  j["classes"] = c.classes;
  j["layers"] = c.layers;
  j["dim"] = c.dim;
  j["heads"] = c.heads;
  // only when named: the descriptions of ViTs from before --final-norm stay as they were
  if (!c.final_norm.empty()) j["final_norm"] = c.final_norm;
  describe_norm(j, c.norm, c.final_norm_name());
  return j.dump();
}

std::string model_arch(const std::string& description) {
  const json j = parse(description);
  if (!j.contains("arch")) return "gpt";
  NL_CHECK(j["arch"].is_string(), "model description: 'arch' is not a string: ", j["arch"].dump());
  return j["arch"].get<std::string>();
}

GPTConfig gpt_config_from_json(const std::string& text) {
  const std::string arch = model_arch(text);
  NL_CHECK(arch == "gpt", "model description: not a GPT (\"arch\": \"", arch, "\") in ", text);
  const Fields d(parse(text), text);
  GPTConfig c;
  c.vocab = d.integer("vocab");
  c.layers = d.integer("layers");
  c.dim = d.integer("dim");
  c.heads = d.integer("heads");
  c.context = d.integer("context");
  d.text("block", c.block);
  d.text("mlp", c.mlp);
  d.text("attn", c.attn);
  d.real("emb_scale0", c.emb_scale0);
  d.text("final_norm", c.final_norm);
  d.boolean("bias", c.bias);
  d.boolean("tied_head", c.tied_head);
  read_norm(d, c.norm);
  c.validate();
  return c;
}

ViTConfig vit_config_from_json(const std::string& text) {
  NL_CHECK(model_arch(text) == "vit", "model description: not a ViT (no \"arch\": \"vit\") in ", text);
  const Fields d(parse(text), text);
  ViTConfig c;
  c.image = d.integer("image");
  c.channels = d.integer("channels");
  c.patch = d.integer("patch");
  c.classes = d.integer("classes");
  c.layers = d.integer("layers");
  c.dim = d.integer("dim");
  c.heads = d.integer("heads");
  d.text("final_norm", c.final_norm);
  read_norm(d, c.norm);
  c.validate();
  return c;
}

}  // namespace nl
