// A transformer block in one of four variants (NORMS.md, "Block variants"):
//   pre   h = x + Attn(N1(x));           out = h + MLP(N2(h))
//   peri  h = x + N1o(Attn(N1(x)));      out = h + N2o(MLP(N2(h)))   (Peri-LN)
//   lns   pre, each norm output of layer l (1-based) times 1/sqrt(l)  (LayerNorm Scaling)
//   llama pre, with rotary position embeddings on the queries and keys (Llama; the model
//         around it has no learned positions, nn/gpt.h)
// Norms: ln1, ln2 (inputs of the branches), ln1_out, ln2_out (peri's output norms), of
// the kind the registry (nn/norms/registry.h) builds from config.norm for each site.
//
// A kind that approximates its second site (bhyt) computes it, in `pre` and `lns`, from
// the block input's statistics (nn/norms/norms.h: bhyt_site2_approximation), with
//   c_attn = r ||W_V W_O||_F^2 / (T d)  (no gradient),
// where r = 1 for pre and r = 1/l for lns: the attention branch is linear in its input at
// uniform attention, so scaling site 1's output by 1/sqrt(l) scales the variance it adds
// to the stream by 1/l. In BHyT's code form (--bhyt-form code) site 2 follows the same
// derivation with the mean square of x in place of its variance and no |mu| term
// (nn/norms/norms.h). ||W_V W_O||_F^2 is cached and recomputed every
// --bhyt-refresh training forwards (1, or an unresolved auto: every forward). In `peri` the attention output
// passes through ln1_out before it reaches the stream, which the derivation does not
// cover: there every site is exact.
//
// With dropout p > 0 each branch output (attention, MLP) passes through dropout before
// it is added to the stream, masks drawn from *dropout_gen, in training mode only.
//
// attn "diff": the attention branch is differential attention (nn/diff_attention.h),
// diff_attn in place of attn; it has no key/value-cached form and no BHyT c_attn.
#pragma once
#include <functional>
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

class Block : public Module {
 public:
  Block(const BlockConfig& config, Generator& gen);
  Var forward(const Var& x) const;
  // forward for new tokens at positions past .. past + Tn - 1 with the attention's
  // key/value cache (generation). Inference only; the block-level BHyT approximation
  // sizes its correction by the sequence length, so it has no cached form (throws).
  Var forward_cached(const Var& x, KVCacheLayer& cache, int64_t past) const;

  std::shared_ptr<Norm> ln1, ln2, ln1_out, ln2_out;  // *_out only in peri
  std::shared_ptr<SelfAttention> attn;       // null with attn "diff"
  std::shared_ptr<DiffAttention> diff_attn;  // null with attn "standard"
  std::shared_ptr<MLP> mlp;
  BlockConfig config;
  float out_scale;    // applied to every norm output: 1/sqrt(layer) in lns, else 1
  ActivationProbe* probe = nullptr;  // not owned (nn/probe.h)

  // Does the second site use the block-level approximation (bhyt in pre or lns)?
  bool approximates_site2() const { return approx_site2_; }
  // The factor r of the approximation: 1 in pre, 1/layer in lns.
  float site2_attn_factor() const { return out_scale * out_scale; }
  // The c_attn cache: the ||W_V W_O||_F^2 in use (NaN before the first forward) and the
  // training forwards counted so far; a checkpoint saves both for an exact resume.
  float cached_frobenius2() const { return fro2_cache_; }
  int64_t training_forwards() const { return training_forwards_; }
  void restore_c_attn_cache(float frobenius2, int64_t training_forwards);

 private:
  // the block with `attention` standing for attn->forward (cached or not)
  Var forward_with(const Var& x, const std::function<Var(const Var&)>& attention) const;
  Var residual(const Var& x, const Var& branch) const;  // x + dropout(branch)
  // norm(x) times out_scale, reported to the probe under `site`
  Var norm_site(const Norm& n, const Var& x, const char* site) const;
  Var approximated_site2(const Var& x, const Var& h) const;
  void probe_site2_variances(const Tensor& x, const Tensor& h) const;
  float c_attn(int64_t T, float frobenius2) const;
  float frobenius2_for_forward() const;  // refreshes the cache when due

  bool approx_site2_ = false, report_site2_ = false;
  mutable float fro2_cache_;
  mutable int64_t training_forwards_ = 0;
};

}  // namespace nl
