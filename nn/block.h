// A transformer block in one of three variants (NORMS.md, "Block variants"):
//   pre   h = x + Attn(N1(x));           out = h + MLP(N2(h))
//   peri  h = x + N1o(Attn(N1(x)));      out = h + N2o(MLP(N2(h)))   (Peri-LN)
//   lns   pre, each norm output of layer l (1-based) times 1/sqrt(l)  (LayerNorm Scaling)
// Norms: ln1, ln2 (inputs of the branches), ln1_out, ln2_out (peri's output norms).
// For `bhyt` the norms of the attention branch start with lambda_attn, those of the MLP
// branch with lambda_mlp (NormConfig).
//
// For `bhyt` in `pre` and `lns` the second site uses the block-level variance
// approximation of NORMS.md: no reduction over h; its denominator comes from the block
// input's statistics,
//   kappa * sqrt(s1^2 + r * c_attn * lambda1^2 / kappa^2 + eps) + |mu1|,
//   c_attn = ||W_V W_O||_F^2 / (T d)  (no gradient; lambda1 detached),
// where r = 1 for pre and r = 1/l for lns: the attention branch is linear in its input at
// uniform attention, so scaling site 1's output by 1/sqrt(l) scales the variance it adds
// to the stream by 1/l. ||W_V W_O||_F^2 is cached and recomputed every
// norm.bhyt_refresh training forwards (1: every forward). In `peri` the attention output
// passes through ln1_out before it reaches the stream, which the derivation does not
// cover: there `bhyt` computes the exact BHyT* at every site (as `bhyt-exact`).
//
// With dropout p > 0 each branch output (attention, MLP) passes through dropout before
// it is added to the stream, masks drawn from *dropout_gen, in training mode only.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "nn/attention.h"
#include "nn/norms/norms.h"

namespace nl {

// The variant names Block accepts ("pre", "peri", "lns"), and a check that throws listing them.
const std::vector<std::string>& block_names();
void check_block_name(const std::string& name);

// Receives intermediate tensors of a forward pass (studies/instruments/act_stats.h turns them into
// statistics). A model holds a pointer to one only for a probed forward; null costs one
// branch per site. `layer` is 0-based; the sites a Block reports:
//   resid                the residual stream entering the block
//   ln1, ln2, ln1_out, ln2_out   each norm's output (as it enters the next op: scaled in lns)
//   <norm>.pre_tanh      the argument of that norm's tanh (dyt, bhyt)
//   site2_var_approx     bhyt/bhyt-exact in pre/lns, per token: s1^2 + r c_attn lambda1^2/kappa^2
//   site2_var_exact      the same tokens' exact s2^2, the variance of h over channels
class ActivationProbe {
 public:
  virtual ~ActivationProbe() = default;
  virtual void record(int64_t layer, const std::string& site, const Tensor& value) = 0;
};

class Block : public Module {
 public:
  // a pre-norm block (layer 1), as the ViT builds it
  Block(int64_t dim, int64_t heads, bool causal, const NormConfig& norm, int layers, Generator& gen,
        float dropout = 0.0f, Generator* dropout_gen = nullptr);
  // variant: pre | peri | lns; layer: this block's 1-based index in the stack
  Block(int64_t dim, int64_t heads, bool causal, const NormConfig& norm, int layers, Generator& gen,
        const std::string& variant, int64_t layer, float dropout = 0.0f, Generator* dropout_gen = nullptr,
        const std::string& mlp_kind = "gelu");
  Var forward(const Var& x) const;
  // forward for new tokens at positions past .. past + Tn - 1 with the attention's
  // key/value cache (generation). Inference only; the block-level BHyT approximation
  // sizes its correction by the sequence length, so it has no cached form (throws).
  Var forward_cached(const Var& x, KVCacheLayer& cache, int64_t past) const;

  std::shared_ptr<Norm> ln1, ln2, ln1_out, ln2_out;  // *_out only in peri
  std::shared_ptr<SelfAttention> attn;
  std::shared_ptr<MLP> mlp;
  NormConfig norm;
  std::string variant;
  int64_t layer;      // 1-based
  float out_scale;    // applied to every norm output: 1/sqrt(layer) in lns, else 1
  float dropout;
  Generator* dropout_gen;  // not owned; used only when dropout > 0
  ActivationProbe* probe = nullptr;  // not owned; set for a probed forward only

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
  void build(int64_t dim, int64_t heads, bool causal, int layers, Generator& gen, const std::string& mlp_kind);
  // the block with `attention` standing for attn->forward (cached or not)
  Var forward_with(const Var& x, const std::function<Var(const Var&)>& attention) const;
  Var residual(const Var& x, const Var& branch) const;  // x + dropout(branch)
  // norm(x) times out_scale, reported to the probe under `site`
  Var norm_site(const Norm& n, const Var& x, const char* site) const;
  Var approximated_site2(const Var& x, const Var& h) const;
  void probe_site2_variances(const Tensor& x, const Tensor& h) const;
  float frobenius2_for_forward() const;  // refreshes the cache when due

  bool approx_site2_ = false;
  mutable float fro2_cache_;
  mutable int64_t training_forwards_ = 0;
};

}  // namespace nl
