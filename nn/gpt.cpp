#include "nn/gpt.h"

#include <cmath>

#include "autograd/interrupt.h"
#include "autograd/ops.h"
#include "autograd/profile.h"

namespace nl {

void GPTConfig::validate() const {
  norm_kind(norm.name);  // throws naming the choices
  check_block_name(block);
  NL_CHECK(vocab > 0 && layers > 0 && dim > 0 && heads > 0 && context > 0,
           "gpt config: vocab, layers, dim, heads and context must be positive");
  NL_CHECK(dim % heads == 0, "gpt config: --dim ", dim, " is not divisible by --heads ", heads);
  NL_CHECK(block != "llama" || (dim / heads) % 2 == 0, "gpt config: --block llama rotates pairs of channels and needs "
           "an even head dimension (--dim / --heads), got ", dim / heads);
  NL_CHECK(dropout >= 0.0f && dropout < 1.0f, "gpt config: --dropout must lie in [0, 1), got ", dropout);
  check_norm_config(norm);
  check_mlp_name(mlp);
  check_attention_name(attn);
  NL_CHECK(attn != "diff" || dim % (2 * heads) == 0, "gpt config: --attn diff splits each head in two: --dim ", dim,
           " is not divisible by 2 x --heads = ", 2 * heads);
  NL_CHECK(attn != "diff" || (bias && block != "llama"), "gpt config: --attn diff is built with biases and learned "
           "positions (", block == "llama" ? "--block llama" : "--bias off", " is not supported with it)");
  NL_CHECK(std::isfinite(emb_scale0) && emb_scale0 >= 0.0f, "gpt config: --emb-scale must be a number >= 0, got ",
           emb_scale0);
  if (!final_norm.empty()) norm_kind(final_norm);
}

std::string GPTConfig::final_norm_name() const { return final_norm_kind(norm.name, final_norm); }

GPT::GPT(const GPTConfig& c, Generator& gen) : config(c) {
  c.validate();
  wte = register_module("wte", std::make_shared<Embedding>(c.vocab, c.dim, gen));
  if (c.block != "llama") wpe = register_module("wpe", std::make_shared<Embedding>(c.context, c.dim, gen));
  BlockConfig b;
  b.dim = c.dim, b.heads = c.heads, b.causal = true, b.norm = c.norm, b.variant = c.block, b.layers = c.layers;
  b.mlp = c.mlp, b.attn = c.attn, b.bias = c.bias, b.dropout = c.dropout, b.dropout_gen = &dropout_gen;
  blocks = make_blocks(b, gen);
  for (size_t l = 0; l < blocks.size(); ++l) register_module("blocks." + std::to_string(l), blocks[l]);
  NormConfig final_norm = c.norm;
  final_norm.name = c.final_norm_name();
  ln_f = register_module("ln_f", make_norm(final_norm, c.dim, NormPlace::Final));
  // after every other parameter, so that pre's parameter order (and checkpoints) stay as they were
  if (c.block == "peri") emb_norm = register_module("emb_norm", make_norm(c.norm, c.dim, NormPlace::Embedding));
  if (c.emb_scale0 > 0.0f) emb_scale = register_parameter("emb_scale", Tensor::full({1}, c.emb_scale0));
  if (!c.tied_head) lm_head = register_module("lm_head", std::make_shared<Linear>(c.dim, c.vocab, false, gen));
}

const Var& GPT::head_weight() const { return lm_head ? lm_head->weight : wte->weight; }

ActivationProbe* GPT::set_probe(ActivationProbe* probe) {
  ActivationProbe* previous = probe_;
  probe_ = probe;
  for (auto& block : blocks) block->probe = probe;
  return previous;
}

Var GPT::probed_norm(const Norm& norm, const Var& x, int64_t layer, const char* site) const {
  profile::Scope scope("norm");
  Var y = norm.forward(x);
  if (probe_ && probe_->wants_detail()) {
    probe_->record(layer, site, y.value());
    Tensor arg = norm.bounded_arg_value(x.value());
    if (arg.defined()) probe_->record(layer, std::string(site) + ".bounded_arg", arg);
  }
  return y;
}

Var GPT::forward(const Tensor& ids) const { return forward_embedded(embed(ids)); }

Var GPT::embed(const Tensor& ids, int64_t first_position) const {
  NL_CHECK(ids.dim() == 2 && ids.dtype() == DType::I32, "gpt: ids must be int32 (B, T), got ", describe(ids));
  const int64_t T = ids.shape()[1];
  NL_CHECK(first_position + T <= config.context, "gpt: sequence of ", first_position + T,
           " tokens is longer than the model's context of ", config.context);
  profile::Scope scope("embedding");
  if (!wpe) return wte->forward(ids);  // the Llama block: positions enter as rotations of q and k
  std::vector<int32_t> pos(T);
  for (int64_t t = 0; t < T; ++t) pos[t] = (int32_t)(first_position + t);
  return ag::add(wte->forward(ids), wpe->forward(Tensor::from_ints(pos, {T}).to(ids.device())));  // (B, T, C)
}

Var GPT::stream_start(const Var& e) const {
  profile::Scope scope("embedding");
  Var x = e;
  if (emb_scale.defined()) x = ag::mul(x, emb_scale);  // d/d scale: sum of (dL/dx) * e
  if (norm_kind(config.norm.name).centres_stream) x = ag::sub(x, ag::mean(x, {-1}, true));  // centre the stream once
  if (emb_norm) x = probed_norm(*emb_norm, x, 0, "emb_norm");
  return x;
}

Var GPT::forward_embedded(const Var& e) const {
  NL_CHECK(e.dim() == 3 && e.shape()[2] == config.dim && e.shape()[1] <= config.context,
           "gpt: the embedding must be (B, T <= ", config.context, ", ", config.dim, "), got ", describe(e.value()));
  Var x = stream_start(e);
  for (const auto& block : blocks) {
    poll_interrupt();  // between blocks: a stop signal need not wait for a large batch's forward
    x = block->forward(x);
  }
  if (probe_) probe_->record(config.layers, "resid", x.value());
  x = probed_norm(*ln_f, x, config.layers, "ln_f");
  profile::Scope scope("lm head");
  return ag::matmul(x, head_weight(), false, true);  // (B, T, C) @ (V, C)^T
}

bool GPT::supports_cache() const {
  for (const auto& block : blocks)
    if (!block->supports_cache()) return false;
  return true;
}

KVCache GPT::make_cache(int64_t batch) const {
  KVCache cache;
  const int64_t hd = config.dim / config.heads;
  const Device device = wte->weight.value().device();  // where the model lives
  for (int64_t l = 0; l < config.layers; ++l)
    cache.layers.push_back({Tensor::zeros({batch, config.heads, config.context, hd}, DType::F32, device),
                            Tensor::zeros({batch, config.heads, config.context, hd}, DType::F32, device)});
  return cache;
}

Tensor GPT::forward_cached(const Tensor& ids, KVCache& cache) const {
  NL_CHECK(ids.dim() == 2 && ids.dtype() == DType::I32, "gpt: ids must be int32 (B, T), got ", describe(ids));
  NL_CHECK(!training(), "gpt: the key/value cache is for inference; call eval() first");
  NL_CHECK((int64_t)cache.layers.size() == config.layers, "gpt: the cache has ", cache.layers.size(),
           " layers, the model ", config.layers, " (make it with make_cache)");
  const int64_t past = cache.length, T = ids.shape()[1];
  NL_CHECK(past + T <= config.context, "gpt: ", past, " cached + ", T, " new tokens overflow the context of ",
           config.context);
  NoGradGuard no_grad;
  Var x = stream_start(embed(ids, past));
  for (size_t l = 0; l < blocks.size(); ++l) x = blocks[l]->forward_cached(x, cache.layers[l], past);
  x = ln_f->forward(x);
  cache.length = past + T;
  return ag::matmul(x, head_weight(), false, true).value();
}

Var GPT::loss(const Tensor& ids, const Tensor& targets) const {
  NL_CHECK(targets.shape() == ids.shape(), "gpt: targets ", describe(targets), " do not match ids ", describe(ids));
  Var logits = forward(ids);
  profile::Scope scope("loss");
  return ag::cross_entropy(ag::reshape(logits, {-1, config.vocab}), targets.reshape({-1}));
}

}  // namespace nl
