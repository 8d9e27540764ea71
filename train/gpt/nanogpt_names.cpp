#include "train/gpt/nanogpt_names.h"

#include <cctype>
#include <cstdlib>
#include <vector>

#include "tensor/error.h"

namespace nl {

namespace {

constexpr const char* kCompilePrefix = "_orig_mod.";  // torch.compile's wrapper adds it to every name

struct NamePair {
  std::string nano, ours;
  Shape shape;
};

// Every parameter of `c`'s GPT under both names, with its shape.
std::vector<NamePair> name_pairs(const GPTConfig& c) {
  const int64_t C = c.dim;
  std::vector<NamePair> pairs = {{"transformer.wte.weight", "wte.weight", {c.vocab, C}},
                                 {"transformer.wpe.weight", "wpe.weight", {c.context, C}}};
  // (nanoGPT's module, ours, rows of the weight, its columns; 0 columns: a norm)
  const struct {
    const char *nano, *ours;
    int64_t rows, cols;
  } parts[] = {{"ln_1", "ln1", C, 0},          {"attn.c_attn", "attn.qkv", 3 * C, C},
               {"attn.c_proj", "attn.proj", C, C}, {"ln_2", "ln2", C, 0},
               {"mlp.c_fc", "mlp.fc", 4 * C, C},   {"mlp.c_proj", "mlp.proj", C, 4 * C}};
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string nano = "transformer.h." + std::to_string(i) + ".", ours = "blocks." + std::to_string(i) + ".";
    for (const auto& p : parts) {
      pairs.push_back({nano + p.nano + ".weight", ours + p.ours + ".weight",
                       p.cols ? Shape{p.rows, p.cols} : Shape{p.rows}});
      if (c.bias) pairs.push_back({nano + p.nano + ".bias", ours + p.ours + ".bias", {p.rows}});
    }
  }
  pairs.push_back({"transformer.ln_f.weight", "ln_f.weight", {C}});
  if (c.bias) pairs.push_back({"transformer.ln_f.bias", "ln_f.bias", {C}});
  return pairs;
}

const Tensor& expect(const NamedTensors& in, const std::string& name, const Shape& shape, const std::string& file) {
  auto it = in.find(name);
  NL_CHECK(it != in.end(), file, ": tensor '", name, "' is missing");
  NL_CHECK(it->second.dtype() == DType::F32, file, ": tensor '", name, "' holds integers, not weights");
  NL_CHECK(it->second.shape() == shape, file, ": tensor '", name, "' has shape ", to_string(it->second.shape()),
           ", expected ", to_string(shape));
  return it->second;
}

// The layer index of "transformer.h.I.rest", or -1 for another name.
int64_t layer_of(const std::string& name) {
  const std::string head = "transformer.h.";
  if (name.rfind(head, 0) != 0) return -1;
  size_t end = head.size();
  while (end < name.size() && std::isdigit((unsigned char)name[end])) ++end;
  if (end == head.size() || end - head.size() > 6 || end >= name.size() || name[end] != '.') return -1;
  return std::atoll(name.substr(head.size(), end - head.size()).c_str());
}

bool is_mask_buffer(const std::string& name, const Tensor& t) {
  const std::string tail = ".attn.bias";
  return layer_of(name) >= 0 && name.size() > tail.size() &&
         name.compare(name.size() - tail.size(), tail.size(), tail) == 0 && t.dim() == 4;
}

}  // namespace

NormlabWeights from_nanogpt(const NamedTensors& raw, int64_t heads, const std::string& file) {
  NamedTensors nano;
  for (const auto& [name, t] : raw) {
    const std::string n = name.rfind(kCompilePrefix, 0) == 0 ? name.substr(std::string(kCompilePrefix).size()) : name;
    if (!is_mask_buffer(n, t)) nano[n] = t;
  }
  auto wte = nano.find("transformer.wte.weight");
  NL_CHECK(wte != nano.end(), file, ": tensor 'transformer.wte.weight' is missing: not a nanoGPT state_dict",
           nano.count("wte.weight") ? " (it has normlab's names: convert it with --to nanogpt)" : "");
  NL_CHECK(wte->second.dim() == 2, file, ": tensor 'transformer.wte.weight' has shape ",
           to_string(wte->second.shape()), ", expected (vocab_size, n_embd)");
  NormlabWeights out;
  GPTConfig& c = out.config;
  NL_CHECK(wte->second.shape()[0] == c.vocab, file, ": tensor 'transformer.wte.weight' has ", wte->second.shape()[0],
           " rows, a vocabulary of ", wte->second.shape()[0], " tokens; normlab's models read bytes (vocab_size=256),",
           " so only a nanoGPT model trained with vocab_size=256 on bytes maps");
  c.dim = wte->second.shape()[1];
  auto wpe = nano.find("transformer.wpe.weight");
  NL_CHECK(wpe != nano.end(), file, ": tensor 'transformer.wpe.weight' is missing");
  NL_CHECK(wpe->second.dim() == 2, file, ": tensor 'transformer.wpe.weight' has shape ",
           to_string(wpe->second.shape()), ", expected (block_size, n_embd)");
  c.context = wpe->second.shape()[0];
  c.layers = 0;
  for (const auto& [name, t] : nano) c.layers = std::max(c.layers, layer_of(name) + 1);
  NL_CHECK(c.layers > 0, file, ": no tensor 'transformer.h.0.*': the model has no blocks");
  // a stray index (transformer.h.99999.x) is named before 99999 layers' names are built
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string first = "transformer.h." + std::to_string(i) + ".ln_1.weight";
    NL_CHECK(nano.count(first), file, ": tensor '", first, "' is missing (the file names layers up to ", c.layers - 1,
             ")");
  }
  NL_CHECK(heads > 0 && c.dim % heads == 0, "--heads ", heads, " does not divide n_embd ", c.dim, " (", file, ")");
  c.heads = heads;
  c.bias = c.norm.bias = nano.count("transformer.ln_f.bias") > 0;
  c.norm.name = "ln";
  c.validate();

  const std::vector<NamePair> pairs = name_pairs(c);
  for (const NamePair& p : pairs) out.tensors[p.ours] = expect(nano, p.nano, p.shape, file);
  auto head = nano.find("lm_head.weight");
  if (head != nano.end()) {
    expect(nano, "lm_head.weight", {c.vocab, c.dim}, file);
    const auto a = head->second.to_vector(), b = wte->second.to_vector();
    c.tied_head = a == b;  // nanoGPT ties them; another head is kept as normlab's untied one
    if (!c.tied_head) out.tensors["lm_head.weight"] = head->second;
  }
  for (const auto& [name, t] : nano) {
    if (name == "lm_head.weight") continue;
    bool known = false;
    for (const NamePair& p : pairs) known |= p.nano == name;
    NL_CHECK(known, file, ": tensor '", name, "' has no place in nanoGPT's GPT of ", c.layers, " layers (bias=",
             c.bias ? "True" : "False", ", as transformer.ln_f.bias says)");
  }
  return out;
}

NamedTensors to_nanogpt(const NamedTensors& ours, const GPTConfig& c, const std::string& file) {
  auto refuse_unless = [&](bool ok, const std::string& field, const std::string& value, const std::string& nano) {
    NL_CHECK(ok, file, ": the model's ", field, " is ", value, "; nanoGPT's GPT has only ", nano);
  };
  refuse_unless(c.block == "pre", "--block", c.block, "pre-norm blocks (--block pre)");
  refuse_unless(c.norm.name == "ln", "--norm", c.norm.name, "LayerNorm (--norm ln)");
  refuse_unless(c.final_norm_name() == "ln", "final norm", c.final_norm_name(), "LayerNorm (--final-norm ln)");
  refuse_unless(c.norm.eps == 1e-5f, "LayerNorm eps", std::to_string(c.norm.eps), "eps 1e-5");
  refuse_unless(c.mlp == "gelu", "--mlp", c.mlp, "the GELU MLP (--mlp gelu)");
  refuse_unless(c.attn == "standard", "--attn", c.attn, "standard attention (--attn standard)");
  refuse_unless(c.emb_scale0 == 0, "--emb-scale", std::to_string(c.emb_scale0), "no embedding scale");
  refuse_unless(c.tied_head, "--tied-head", "off", "a head tied to the token embedding (--tied-head on)");
  refuse_unless(c.bias == c.norm.bias, "--bias / --norm-bias", c.bias ? "on / off" : "off / on",
                "one bias switch for linears and LayerNorms together (both on or both off)");
  NamedTensors nano;
  for (const NamePair& p : name_pairs(c)) nano[p.nano] = expect(ours, p.ours, p.shape, file);
  NL_CHECK(ours.size() == nano.size(), file, ": holds ", ours.size(), " parameters, nanoGPT's GPT ", nano.size());
  return nano;
}

std::string train_gpt_flags(const GPTConfig& c) {
  std::string flags = "--layers " + std::to_string(c.layers) + " --dim " + std::to_string(c.dim) + " --heads " +
                      std::to_string(c.heads) + " --seq " + std::to_string(c.context);
  if (!c.bias) flags += " --bias off --norm-bias off";
  if (!c.tied_head) flags += " --tied-head off";
  return flags;
}

std::string nanogpt_config(const GPTConfig& c) {
  return "GPTConfig(n_layer=" + std::to_string(c.layers) + ", n_head=" + std::to_string(c.heads) +
         ", n_embd=" + std::to_string(c.dim) + ", block_size=" + std::to_string(c.context) +
         ", vocab_size=" + std::to_string(c.vocab) + ", bias=" + (c.bias ? "True" : "False") + ", dropout=0.0)";
}

}  // namespace nl
