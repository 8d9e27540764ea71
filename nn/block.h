// A transformer block in one of four variants (NORMS.md, "Block variants"):
//   pre   h = x + Attn(N1(x));           out = h + MLP(N2(h))
//   peri  h = x + N1o(Attn(N1(x)));      out = h + N2o(MLP(N2(h)))   (Peri-LN)
//   lns   pre, each norm output of layer l (1-based) times 1/sqrt(l)  (LayerNorm Scaling)
//   llama pre, with rotary position embeddings on the queries and keys (Llama; the model
//         around it has no learned positions, nn/gpt.h)
// Norms: ln1, ln2 (inputs of the branches), ln1_out, ln2_out (peri's output norms), of
// the kind the registry (nn/norms/registry.h) builds from config.norm for each site.
//
// A kind whose two sites are coupled (bhyt, bhyt-exact) provides a site pair
// (nn/norms/site_pair.h) that the block builds from ln1, ln2 and the attention between
// them and holds as an opaque SitePair: when the pair replaces site 2, the block feeds
// the MLP the pair's output instead of ln2(h); either way it lets the pair report to the
// probe and keep the state a checkpoint saves.
//
// With dropout p > 0 each branch output (attention, MLP) passes through dropout before
// it is added to the stream, masks drawn from *dropout_gen, in training mode only.
//
// attn "diff": the attention branch is differential attention (nn/diff_attention.h),
// diff_attn in place of attn; it has no key/value-cached form and takes no site pair.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/attention.h"
#include "nn/diff_attention.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"
#include "nn/probe.h"

namespace nl {

// The variant names Block accepts ("pre", "peri", "lns", "llama"), and a check that throws listing them.
const std::vector<std::string>& block_names();
void check_block_name(const std::string& name);

// The attention kinds ("standard", "diff"), and a check that throws listing them.
const std::vector<std::string>& attention_names();
void check_attention_name(const std::string& name);

struct BlockConfig {
  int64_t dim = 128, heads = 4;
  bool causal = true;         // the GPT's; the ViT's attention sees every token
  NormConfig norm;
  std::string variant = "pre";  // pre | peri | lns | llama
  int64_t layer = 1;          // this block's 1-based index in the stack
  int64_t layers = 1;         // the stack's depth: the projections into the stream start at 0.02/sqrt(2 layers)
  std::string mlp = "gelu";   // gelu | swiglu (nn/attention.h)
  std::string attn = "standard";  // standard | diff (attention_names)
  bool bias = true;           // the attention's and MLP's linears have biases
  float dropout = 0.0f;
  Generator* dropout_gen = nullptr;  // not owned; needed when dropout > 0
};

class Block;
// The stack of config.layers blocks, block l (from 0) told its depth l + 1 through
// BlockConfig::layer, made in order from gen (the models register them as blocks.l).
std::vector<std::shared_ptr<Block>> make_blocks(BlockConfig config, Generator& gen);

class Block : public Module {
 public:
  Block(const BlockConfig& config, Generator& gen);
  Var forward(const Var& x) const;
  // forward for new tokens at positions past .. past + Tn - 1 with the attention's
  // key/value cache (generation). Inference only; throws where supports_cache() is false.
  Var forward_cached(const Var& x, KVCacheLayer& cache, int64_t past) const;

  std::shared_ptr<Norm> ln1, ln2, ln1_out, ln2_out;  // *_out only in peri
  std::shared_ptr<SelfAttention> attn;       // null with attn "diff"
  std::shared_ptr<DiffAttention> diff_attn;  // null with attn "standard"
  std::shared_ptr<MLP> mlp;
  BlockConfig config;
  float out_scale;    // applied to every norm output: 1/sqrt(layer) in lns, else 1
  ActivationProbe* probe = nullptr;  // not owned (nn/probe.h)

  // Whether forward_cached is allowed: a standard attention, and no site pair refusing it.
  bool supports_cache() const;
  // The pair of ln1 and ln2 its norm kind provides (null: the sites act alone), and
  // whether it computes site 2.
  const SitePair* site_pair() const { return pair_.get(); }
  SitePair* site_pair() { return pair_.get(); }
  bool approximates_site2() const { return pair_ && pair_->replaces_site2(); }

 private:
  // The block with `attention` standing for attn->forward (cached or not). An attention
  // that takes the residual stream (`fuses_residual`) is handed it as its second argument
  // and returns x + the branch, added in its output projection's epilogue, whenever the
  // branch reaches the stream unchanged (no peri output norm, no dropout); else that
  // argument is undefined and the block adds the branch itself.
  Var forward_with(const Var& x, const std::function<Var(const Var&, const Var&)>& attention,
                   bool fuses_residual) const;
  bool adds_in_epilogue(const Norm* output_norm) const { return !output_norm && config.dropout == 0.0f; }
  Var residual(const Var& x, const Var& branch) const;  // x + dropout(branch)
  // norm(x) times out_scale, reported to the probe under `site`
  Var norm_site(const Norm& n, const Var& x, const char* site) const;
  Var paired_site2(const Var& x, const Var& h) const;  // the pair's site 2, scaled and reported

  std::unique_ptr<SitePair> pair_;
};

}  // namespace nl
