#include "nn/block.h"

#include <cmath>

#include "autograd/ops.h"
#include "autograd/profile.h"
#include "nn/norms/norms.h"

namespace nl {

const std::vector<std::string>& block_names() {
  static const std::vector<std::string> names = {"pre", "peri", "lns", "llama"};
  return names;
}

void check_block_name(const std::string& name) {
  std::string all;
  for (const auto& n : block_names()) {
    if (n == name) return;
    all += (all.empty() ? "" : ", ") + n;
  }
  fail("unknown block variant '", name, "' (choose one of: ", all, ")");
}

const std::vector<std::string>& attention_names() {
  static const std::vector<std::string> names = {"standard", "diff"};
  return names;
}

void check_attention_name(const std::string& name) {
  for (const auto& n : attention_names())
    if (n == name) return;
  fail("unknown attention '", name, "' (choose one of: standard, diff)");
}

std::vector<std::shared_ptr<Block>> make_blocks(BlockConfig config, Generator& gen) {
  std::vector<std::shared_ptr<Block>> blocks;
  for (int64_t l = 0; l < config.layers; ++l) {
    config.layer = l + 1;
    blocks.push_back(std::make_shared<Block>(config, gen));
  }
  return blocks;
}

Block::Block(const BlockConfig& c, Generator& gen) : config(c) {
  check_block_name(c.variant);
  const NormKind& kind = norm_kind(c.norm.name);
  NL_CHECK(c.layer >= 1 && c.layer <= c.layers, "block: the layer index is 1-based and at most the depth ", c.layers,
           ", got ", c.layer);
  NL_CHECK(c.dropout >= 0.0f && c.dropout < 1.0f, "block: dropout must lie in [0, 1), got ", c.dropout);
  NL_CHECK(c.dropout == 0.0f || c.dropout_gen, "block: dropout ", c.dropout, " needs a generator for its masks");
  check_norm_config(c.norm);
  const bool peri = c.variant == "peri";
  out_scale = c.variant == "lns" ? 1.0f / std::sqrt((float)c.layer) : 1.0f;
  // GPT-2: the projections that write into the residual stream start smaller, by
  // 1/sqrt(2L), so the stream's variance does not grow with depth at initialisation.
  const float proj_std = 0.02f / std::sqrt(2.0f * (float)c.layers);
  const bool cbwc = kind.centres_stream;
  // registration order gives the parameter order: pre's is ln1, attn, ln2, mlp
  ln1 = register_module("ln1", make_norm(c.norm, c.dim, NormPlace::Attention));
  check_attention_name(c.attn);
  const bool rope = c.variant == "llama";
  if (c.attn == "diff") {
    NL_CHECK(!kind.make_site_pair, "block: --attn diff takes no site pair (", c.norm.name,
             " couples its two sites through the value and output projections of a standard attention)");
    // the Differential Attention here is the paper's GPT form: biased linears, learned positions
    NL_CHECK(c.bias && !rope, "block: --attn diff is built with biases and without rotary embeddings (",
             rope ? "--block llama" : "--bias off", " is not supported with it)");
    diff_attn = register_module("attn", std::make_shared<DiffAttention>(c.dim, c.heads, c.causal, c.layer, gen,
                                                                        proj_std, cbwc));
  } else {
    attn = register_module("attn", std::make_shared<SelfAttention>(c.dim, c.heads, c.causal, gen, proj_std, cbwc,
                                                                   c.bias, rope));
  }
  if (peri) ln1_out = register_module("ln1_out", make_norm(c.norm, c.dim, NormPlace::Attention));
  ln2 = register_module("ln2", make_norm(c.norm, c.dim, NormPlace::Mlp));
  mlp = register_module("mlp", std::make_shared<MLP>(c.dim, gen, proj_std, cbwc, c.mlp, c.bias));
  if (peri) ln2_out = register_module("ln2_out", make_norm(c.norm, c.dim, NormPlace::Mlp));
  if (kind.make_site_pair)
    pair_ = kind.make_site_pair({c.norm, *this, *ln1, *ln2, [this] { return attn->value_output_frobenius2(); },
                                 out_scale, c.dim, peri});
}

bool Block::supports_cache() const { return attn && (!pair_ || pair_->cached_form_refusal().empty()); }

Var Block::residual(const Var& x, const Var& branch) const {
  profile::Scope scope("residual add");
  if (config.dropout == 0.0f) return ag::add(x, branch);
  return ag::add(x, ag::dropout(branch, config.dropout, training(), *config.dropout_gen));
}

Var Block::norm_site(const Norm& n, const Var& x, const char* site) const {
  profile::Scope scope("norm");
  Var y = n.forward(x);
  if (out_scale != 1.0f) y = ag::mul_scalar(y, out_scale);
  if (probe && probe->wants_detail()) {
    probe->record(config.layer - 1, site, y.value());
    Tensor arg = n.bounded_arg_value(x.value());
    if (arg.defined()) probe->record(config.layer - 1, std::string(site) + ".bounded_arg", arg);
  }
  return y;
}

Var Block::forward(const Var& x) const {
  if (diff_attn) return forward_with(x, [this](const Var& a, const Var&) { return diff_attn->forward(a); }, false);
  return forward_with(x, [this](const Var& a, const Var& r) { return attn->forward(a, r); }, true);
}

Var Block::forward_cached(const Var& x, KVCacheLayer& cache, int64_t past) const {
  NL_CHECK(!pair_ || pair_->cached_form_refusal().empty(), "block: ", pair_->cached_form_refusal());
  NL_CHECK(attn, "block: differential attention has no key/value-cached form (generate without the cache)");
  return forward_with(
      x, [&](const Var& a, const Var&) { return attn->forward_cached(a, cache, past); }, false);
}

Var Block::forward_with(const Var& x, const std::function<Var(const Var&, const Var&)>& attention,
                        bool fuses_residual) const {
  if (probe) probe->record(config.layer - 1, "resid", x.value());
  const Var a_in = norm_site(*ln1, x, "ln1");
  // h = x + attention branch, m = h + MLP branch: in the output projections' epilogues
  // where they can be (the same bits as the adds; tensor/cpu/linear.cpp)
  const bool fuse_attn = fuses_residual && adds_in_epilogue(ln1_out.get());
  Var a;  // the attention branch, or x + it when added in the projection's epilogue
  {
    profile::Scope scope("attention");
    a = attention(a_in, fuse_attn ? x : Var());
  }
  const Var h = fuse_attn ? a : residual(x, ln1_out ? norm_site(*ln1_out, a, "ln1_out") : a);
  const Var m_in = pair_ && pair_->replaces_site2() ? paired_site2(x, h) : norm_site(*ln2, h, "ln2");
  if (pair_ && probe && probe->wants_detail()) pair_->report(x.value(), h.value(), *probe, config.layer - 1);
  const bool fuse_mlp = adds_in_epilogue(ln2_out.get());
  Var m;  // the MLP branch, or h + it
  {
    profile::Scope scope("mlp");
    m = mlp->forward(m_in, fuse_mlp ? h : Var());
  }
  return fuse_mlp ? m : residual(h, ln2_out ? norm_site(*ln2_out, m, "ln2_out") : m);
}

Var Block::paired_site2(const Var& x, const Var& h) const {
  profile::Scope scope("norm");
  Var y = pair_->forward(x, h);
  if (out_scale != 1.0f) y = ag::mul_scalar(y, out_scale);
  if (probe && probe->wants_detail()) probe->record(config.layer - 1, "ln2", y.value());
  return y;
}

}  // namespace nl
