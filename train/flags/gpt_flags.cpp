#include "train/flags/gpt_flags.h"

#include <algorithm>
#include <cmath>

#include "nn/attention.h"
#include "nn/block.h"
#include "nn/model_json.h"
#include "nn/norms/registry.h"
#include "tensor/error.h"
#include "train/flags/families.h"
#include "train/flags/recipes.h"
#include "train/safety/distributed.h"
#include "train/safety/limits.h"

namespace nl {

namespace {

// --bias on|off, --tied-head on|off
void on_off(FlagParser& p, const std::string& flag, bool& target, const std::string& help) {
  p.custom(
      flag, target ? "on" : "off",
      [&target, flag](const std::string& v) {
        NL_CHECK(v == "on" || v == "off", flag, ": unknown value '", v, "' (choose one of: on, off)");
        target = v == "on";
      },
      help);
}

}  // namespace

void add_gpt_model_flags(FlagParser& p, GPTConfig& m) {
  add_trunk_flags(p, m.layers, m.dim, m.heads);
  p.integer("--seq", m.context, 1, 65536, "sequence length (the model's context)");
  p.choice("--block", m.block, block_names(),
           "pre (Pre-LN) | peri (Peri-LN) | lns (LayerNorm Scaling: norm outputs of layer l times 1/sqrt(l)) | "
           "llama (Pre-LN with rotary position embeddings and no learned ones; also sets --mlp swiglu --bias off "
           "--tied-head off unless they are given)");
  p.choice("--mlp", m.mlp, mlp_names(), "gelu (fc 4C, GELU) | swiglu (gated SiLU, hidden round(8C/3))");
  p.choice("--attn", m.attn, attention_names(),
           "standard | diff (differential attention, Ye et al. 2025: two softmax maps subtracted with a learnt "
           "lambda, per-head RMSNorm; --heads differential heads of 2 query/key pairs each)");
  on_off(p, "--bias", m.bias, "biases in the blocks' linears (qkv, proj, fc): on | off (the head never has one)");
  on_off(p, "--tied-head", m.tied_head,
         "the head is the token embedding (on) or its own weight lm_head, N(0, 0.02) (off)");
  p.implies("--block", [](const std::string& block) {
    return block == "llama" ? std::vector<std::string>{"--mlp", "swiglu", "--bias", "off", "--tied-head", "off"}
                            : std::vector<std::string>{};
  });
  add_final_norm_flag(p, m.final_norm);
  p.group("Model");
  p.custom(
      "--emb-scale", m.emb_scale0 > 0 ? shortest_decimal(m.emb_scale0) : "none",
      [&m](const std::string& v) {
        if (v == "none") m.emb_scale0 = 0.0f;
        else if (v == "sqrt") m.emb_scale0 = std::sqrt((float)m.dim);  // --dim is read before
        else m.emb_scale0 = (float)flag_real("--emb-scale", v, 0, 1e6, true);
      },
      "multiply the embedding sum by a learnable scalar starting at this value, `sqrt` for sqrt(--dim) "
      "(DyT's LLaMA recipe), or none");
  p.real("--dropout", m.dropout, 0, 1, "dropout on the attention and MLP outputs, training only (in [0, 1))");
  p.check([&m] { NL_CHECK(m.dropout < 1.0f, "--dropout must lie in [0, 1), got ", m.dropout); });
  add_norm_flags(p, m.norm);
}

void add_gpt_run_flags(FlagParser& p, GPTRunConfig& c) {
  add_recipe_flags(p, c.recipe);  // first: its flags come before the command line's
  add_gpt_model_flags(p, c.model);
  add_schedule_flags(p, c);
  add_data_flag(p, c.data_dir, "the fortunes text");
  p.integer("--train-bytes", c.train_bytes, -1, INT64_MAX, "keep only the first N training bytes (-1: all)");
  p.integer("--eval-batches", c.eval_batches, 1, 1000000, "validation batches of 32 sequences", FlagRole::Setting);
  add_run_flags(p, c);
  p.check([&c] {
    NL_CHECK(c.train_bytes == -1 || c.train_bytes > c.model.context, "--train-bytes must exceed the sequence length ",
             c.model.context, " (or be -1: all), got ", c.train_bytes);
    NL_CHECK(c.batch % dist::world_size() == 0, "--batch ", c.batch, " (the global batch) must divide by the ",
             dist::world_size(), " ranks");
    c.model.validate();
    check_memory_estimate(gpt_run_memory(c));
  });
}

void add_sample_flags(FlagParser& p, SampleSettings& s) {
  p.integer("--length", s.length, 0, 100000000, "bytes to generate after the prompt");
  p.positive("--temperature", s.temperature, 100,
             "divides the logits before the softmax: below 1 sharper, above 1 flatter (in (0, 100])");
  p.integer("--top-k", s.top_k, 1, 256, "draw from the k most likely bytes only (1: always the most likely)");
  p.positive("--top-p", s.top_p, 1,
             "then from the fewest of those whose probabilities add up to at least p (nucleus sampling; 1: all k)");
  add_seed_flag(p, s.seed);
}

std::string check_gpt_run(const GPTRunConfig& config) { return check_config("train_gpt", config, add_gpt_run_flags); }

}  // namespace nl
