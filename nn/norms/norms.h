// The normalization layers as modules, and the one factory that picks them by name.
// Each forward is one fused op from autograd/norms.h (kernels in tensor/cpu/).
//   ln          LayerNorm                     nn/norms/norms.cpp: LayerNorm
//   rms         RMSNorm                       RMSNorm
//   cbwc        RMSNorm + beta; the model centres its inputs (see nn/gpt.cpp)
//   dyt         DyT, tanh(alpha x)            DyT
//   bhyt        BHyT, block-level variance approximation at each block's second site
//   bhyt-exact  BHyT* at every site
// Norms that end in a tanh (dyt, bhyt) also give their pre-tanh argument, for the
// saturation statistics of studies/instruments/act_stats.h.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/module.h"

namespace nl {

struct NormConfig {
  std::string name = "ln";
  float eps = 1e-5f;
  float dyt_alpha0 = 0.5f;       // DyT's initial alpha
  float bhyt_lambda0 = 1.0f;     // BHyT's initial lambda (every site without its own below)
  std::optional<float> bhyt_lambda_attn, bhyt_lambda_mlp;  // the attention / MLP branch's sites
  float bhyt_p = 0.99f;          // target probability: kappa = 1 / sqrt(1 - p)
  int64_t bhyt_refresh = 1;      // bhyt: training steps between recomputations of c_attn
  float kappa() const;
  float lambda_attn() const { return bhyt_lambda_attn.value_or(bhyt_lambda0); }
  float lambda_mlp() const { return bhyt_lambda_mlp.value_or(bhyt_lambda0); }
  // The same config with bhyt_lambda0 replaced: what make_norm builds one site from.
  NormConfig with_lambda0(float lambda0) const;
};

// The names make_norm accepts, and a check that throws listing them.
const std::vector<std::string>& norm_names();
void check_norm_name(const std::string& name);

class Norm : public Module {
 public:
  virtual Var forward(const Var& x) const = 0;
  // The argument of the norm's tanh for input x (no graph), undefined for norms without one.
  virtual Tensor pre_tanh(const Tensor& x) const { return Tensor(); }
};

class LayerNorm : public Norm {
 public:
  LayerNorm(int64_t dim, float eps);
  Var forward(const Var& x) const override;
  Var weight, bias;
  float eps;
};

class RMSNorm : public Norm {
 public:
  RMSNorm(int64_t dim, float eps, bool with_bias);
  Var forward(const Var& x) const override;
  Var weight, bias;  // bias undefined unless with_bias (cbwc)
  float eps;
};

class DyT : public Norm {
 public:
  DyT(int64_t dim, float alpha0);
  Var forward(const Var& x) const override;
  Tensor pre_tanh(const Tensor& x) const override;  // alpha x
  Var alpha, weight, bias;  // alpha (1)
};

class BHyT : public Norm {
 public:
  BHyT(int64_t dim, float lambda0, float kappa, float eps);
  Var forward(const Var& x) const override;                      // exact BHyT*
  Var forward_with_denom(const Var& x, const Var& denom) const;  // given per-token denominators
  // exact per-token denominator kappa sqrt(s^2 + eps) + |mu|, x (..., C) -> (..., 1)
  Tensor denominator(const Tensor& x) const;
  Tensor pre_tanh(const Tensor& x) const override;                // lambda x / denominator(x)
  Tensor pre_tanh_with_denom(const Tensor& x, const Tensor& denom) const;  // denom (...) or (..., 1)
  Var weight, lambda;  // lambda (1)
  float kappa, eps;
};

std::shared_ptr<Norm> make_norm(const NormConfig& config, int64_t dim);

}  // namespace nl
