// The layers behind the registered norm kinds (nn/norms/registry.h) that have fused
// kernels: each forward is one fused op from autograd/norms.h (kernels in tensor/cpu/,
// derivations in docs/norms/), its composite the same formula in plain autograd ops.
#pragma once
#include "nn/norms/norm.h"
#include "nn/norms/site_pair.h"

namespace nl {

// LN(x) = gamma (x - mu) / sqrt(s^2 + eps) + beta             nn/norms/layernorm.cpp
class LayerNorm : public Norm {
 public:
  LayerNorm(int64_t dim, float eps, bool with_bias = true);  // with_bias false: no beta
  Var forward(const Var& x) const override;  // ag::layer_norm
  Var composite(const Var& x) const override;
  Var weight, bias;
  float eps;
};

// RMS(x) = gamma x / sqrt(ms + eps), + beta when with_bias (cbwc) nn/norms/rmsnorm.cpp
class RMSNorm : public Norm {
 public:
  // gain0: gamma's initial value; learnt_gain false: gamma stays gain0 (no parameter)
  RMSNorm(int64_t dim, float eps, bool with_bias, float gain0 = 1.0f, bool learnt_gain = true);
  Var forward(const Var& x) const override;  // ag::rms_norm
  Var composite(const Var& x) const override;
  Var weight, bias;  // bias undefined unless with_bias; weight a constant when the gain is fixed
  float eps;

 private:
  Var gain_for(const Var& x) const;  // weight, on x's device
  mutable Var gain_on_device_;       // a fixed gain's copy on a device other than the CPU
};

// DyT(x) = gamma tanh(alpha x) + beta, alpha one scalar          nn/norms/dyt.cpp
// (without beta, as DyT's LLaMA recipe, when with_beta is false)
class DyT : public Norm {
 public:
  DyT(int64_t dim, float alpha0, bool with_beta = true);
  Var forward(const Var& x) const override;  // ag::dyt
  Var composite(const Var& x) const override;
  Var bounded_arg(const Var& x) const override;  // alpha x
  Var alpha, weight, bias;  // alpha (1); bias undefined without beta
};

// BHyT*(x) = gamma tanh(lambda x / (kappa sqrt(s^2 + eps) + |mu|))  nn/norms/bhyt.cpp
// In the released code's form (centred = false, --bhyt-form code) the denominator is
// kappa sqrt(mean(x^2) + eps): no centring, no |mu|.
class BHyT : public Norm {
 public:
  BHyT(int64_t dim, float lambda0, float kappa, float eps, bool centred = true, float gamma0 = 1.0f);
  Var forward(const Var& x) const override;                      // exact BHyT*, ag::bhyt
  Var composite(const Var& x) const override;
  Var forward_with_denom(const Var& x, const Var& denom) const;  // given per-token denominators
  // The squared spread the denominator uses, per token: s^2 (centred) or mean(x^2).
  Var spread2(const Var& x, bool keepdim) const;
  // the exact per-token denominator kappa sqrt(spread2 + eps) (+ |mu| when centred),
  // x (..., C) -> (..., 1)
  Var denominator(const Var& x) const;
  Var bounded_arg(const Var& x) const override;  // lambda x / denominator(x)
  Tensor pre_tanh_with_denom(const Tensor& x, const Tensor& denom) const;  // denom (...) or (..., 1)
  Var weight, lambda;  // lambda (1)
  float kappa, eps;
  bool centred;
};

// BHyT's block-level variance approximation (NORMS.md) of a Pre-LN block's second site
// h -> BHyT_2(h), with no reduction over h: the denominator comes from the block input
// x (B, T, C) and site 1's lambda (detached),
//   kappa sqrt(s1^2 + c_attn lambda1^2 / kappa^2 + eps) + |mu1|,
// where c_attn (no gradient) is the block's r ||W_V W_O||_F^2 / (T d). In the code form
// the mean square ms1 of x takes the place of s1^2 and there is no |mu1|.
struct BHyTSite2 {
  Var y;            // site 2's output (B, T, C)
  Var denom;        // its denominators (B, T)
  Tensor var_approx;  // s1^2 (or ms1) + c_attn lambda1^2 / kappa^2 per token (B, T): the approximated s2^2 (ms2)
};
BHyTSite2 bhyt_site2_approximation(const BHyT& site1, const BHyT& site2, const Var& x, const Var& h, float c_attn);

// BHyT's two sites of a block (nn/norms/site_pair.h), in pre, lns and llama. bhyt's
// (approximate) computes site 2 by bhyt_site2_approximation with
//   c_attn = r ||W_V W_O||_F^2 / (T d)  (no gradient),
// r = out_scale^2 (1 in pre, 1/l in lns: scaling site 1's output by 1/sqrt(l) scales the
// variance the attention adds to the stream by 1/l). ||W_V W_O||_F^2 is cached and
// recomputed on the first training forward and then every --bhyt-refresh-th (1, or an
// unresolved auto: every forward); evaluation forwards use the cache as it stands
// (filling it if empty) and count nothing. Its state() is "frobenius2:forwards" (%.9g,
// exact for a float). bhyt-exact's pair runs no approximation: it reports the one above
// beside the exact site-2 variance, and keeps no state.
class BHyTPair : public SitePair {
 public:
  BHyTPair(const SitePairParts& parts, bool approximate);
  bool replaces_site2() const override { return approximate_; }
  Var forward(const Var& x, const Var& h) const override;
  void report(const Tensor& x, const Tensor& h, ActivationProbe& probe, int64_t layer) const override;
  std::string cached_form_refusal() const override;
  std::string state() const override;
  void restore(const std::string& state) override;
  // the ||W_V W_O||_F^2 in use (NaN before the first forward) and the training forwards counted
  float cached_frobenius2() const { return fro2_cache_; }
  int64_t training_forwards() const { return training_forwards_; }

 private:
  float c_attn(int64_t T, float frobenius2) const;
  float frobenius2_for_forward() const;  // refreshes the cache when due

  const Module& block_;
  const BHyT &site1_, &site2_;
  std::function<float()> frobenius2_;
  float factor_;  // r
  int64_t dim_, every_;
  bool approximate_;
  mutable float fro2_cache_;
  mutable int64_t training_forwards_ = 0;
};

}  // namespace nl
