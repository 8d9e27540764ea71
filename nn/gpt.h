// GPT: token + position embeddings, L blocks (pre-norm, Peri-LN, LayerNorm Scaling or
// Llama: nn/block.h), a final norm, and an LM head tied to the token embedding
// (logits = x wte^T). Peri-LN also normalises the embedding output (emb_norm) before the
// first block. The Llama block rotates queries and keys by their positions instead: the
// model has no position embedding (wpe absent).
// Options for the papers' recipes: a learnable scale on the embedding sum, a final norm
// of another kind than the blocks' (ln_f; by default the kind's default_final_norm,
// nn/norms/registry.h), the SwiGLU MLP, linears without biases, and an untied head
// (lm_head, N(0, 0.02) like every GPT-2 weight; drawn after every other parameter, so
// that the rest of the model starts as the tied one does). The head never has a bias.
// For `cbwc` (NORMS.md) the embedding sum is centred once (x - mean over channels),
// the attention out-projection and MLP down-projection of every block are CBWC
// linears, and every norm site is RMSNorm + beta: the residual stream stays zero-mean,
// so each RMSNorm equals the LayerNorm it replaces.
// With dropout p > 0 every block drops elements of its attention and MLP outputs in
// training mode (masks from dropout_gen); p is not part of the model's description.
#pragma once
#include <string>
#include <vector>

#include "nn/block.h"

namespace nl {

struct GPTConfig {
  int64_t vocab = 256, layers = 4, dim = 128, heads = 4, context = 64;
  NormConfig norm;
  std::string block = "pre";  // pre | peri | lns | llama (nn/block.h)
  float dropout = 0.0f;  // on the attention and MLP branch outputs, training mode only
  std::string mlp = "gelu";  // gelu | swiglu (nn/attention.h)
  // > 0: the embedding sum is multiplied by a learnable scalar `emb_scale` initialised to
  // this (DyT's LLaMA recipe uses sqrt(dim)); 0: no scale, the GPT-2 embedding
  float emb_scale0 = 0.0f;
  std::string final_norm;  // the norm before the head (ln_f); empty: final_norm_kind's default for norm.name
  std::string attn = "standard";  // standard | diff (differential attention, nn/diff_attention.h)
  bool bias = true;        // biases in the blocks' linears (qkv, proj, fc)
  bool tied_head = true;   // the head is the token embedding (false: its own lm_head)
  void validate() const;  // throws naming the bad field
  // The kind of ln_f: final_norm, or the blocks' kind's default (nn/norms/registry.h).
  std::string final_norm_name() const;
};

// Keys and values of every layer for the tokens generated so far (GPT::forward_cached).
struct KVCache {
  std::vector<KVCacheLayer> layers;
  int64_t length = 0;  // tokens held
};

class GPT : public Module {
 public:
  GPT(const GPTConfig& config, Generator& gen);
  // ids int32 (B, T) with T <= context -> logits (B, T, vocab); forward_embedded(embed(ids))
  Var forward(const Tensor& ids) const;
  // False when a block has none (Block::supports_cache: differential attention, a site
  // pair that refuses it); forward_cached throws there.
  bool supports_cache() const;
  // A cache for batch B, able to hold the full context.
  KVCache make_cache(int64_t batch) const;
  // Logits (B, Tn, vocab) of new tokens ids (B, Tn) that follow the cache's tokens, which
  // they attend to; their keys and values are appended. The same numbers as the last Tn
  // positions of forward() on the whole sequence, in a fraction of the work. Inference
  // only: eval mode, no recording; throws when the context would overflow.
  Tensor forward_cached(const Tensor& ids, KVCache& cache) const;
  // The token + position embedding sum e (B, T, C) of ids at positions first_position ..
  // (the token embedding alone in the Llama block): the model's input as a vector.
  Var embed(const Tensor& ids, int64_t first_position = 0) const;
  // The rest of the forward, from e (B, T, C) to the logits (noise-sensitivity probes start here).
  Var forward_embedded(const Var& e) const;
  // mean cross-entropy of the next-token targets int32 (B, T)
  Var loss(const Tensor& ids, const Tensor& targets) const;
  // Makes every later forward report its intermediate tensors to `probe` (null: stop);
  // returns the probe it replaces. Besides the blocks' sites (nn/probe.h) the model
  // reports, at layer L, "resid" (the stream leaving the last block) and "ln_f"; in
  // peri "emb_norm" at layer 0.
  ActivationProbe* set_probe(ActivationProbe* probe);

  GPTConfig config;
  std::shared_ptr<Embedding> wte, wpe;
  std::vector<std::shared_ptr<Block>> blocks;
  std::shared_ptr<Norm> ln_f;
  std::shared_ptr<Norm> emb_norm;  // peri only
  Var emb_scale;                   // (1), only with emb_scale0 > 0
  std::shared_ptr<Linear> lm_head;  // (vocab, dim), only with an untied head
  // The head's weight (vocab, dim): wte's table, or lm_head's.
  const Var& head_weight() const;
  Generator dropout_gen;  // draws the dropout masks; seed it for a run (gpt_run seeds it)

 private:
  Var probed_norm(const Norm& norm, const Var& x, int64_t layer, const char* site) const;
  // what every forward does to the embedding sum before the blocks: the learnable
  // scale, cbwc's centring, Peri-LN's embedding norm
  Var stream_start(const Var& e) const;
  ActivationProbe* probe_ = nullptr;
};

}  // namespace nl
