#include "nn/norms/norms.h"

#include <cmath>

#include "autograd/norms.h"
#include "tensor/ops.h"

namespace nl {

float NormConfig::kappa() const { return 1.0f / std::sqrt(1.0f - bhyt_p); }

NormConfig NormConfig::with_lambda0(float lambda0) const {
  NormConfig c = *this;
  c.bhyt_lambda0 = lambda0;
  return c;
}

const std::vector<std::string>& norm_names() {
  static const std::vector<std::string> names = {"ln", "rms", "cbwc", "dyt", "bhyt", "bhyt-exact"};
  return names;
}

void check_norm_name(const std::string& name) {
  for (const auto& n : norm_names())
    if (n == name) return;
  std::string all;
  for (const auto& n : norm_names()) all += (all.empty() ? "" : ", ") + n;
  fail("unknown norm '", name, "' (choose one of: ", all, ")");
}

LayerNorm::LayerNorm(int64_t dim, float eps_) : eps(eps_) {
  weight = register_parameter("weight", Tensor::ones({dim}));
  bias = register_parameter("bias", Tensor::zeros({dim}));
}
Var LayerNorm::forward(const Var& x) const { return ag::layer_norm(x, weight, bias, eps); }

RMSNorm::RMSNorm(int64_t dim, float eps_, bool with_bias) : eps(eps_) {
  weight = register_parameter("weight", Tensor::ones({dim}));
  if (with_bias) bias = register_parameter("bias", Tensor::zeros({dim}));
}
Var RMSNorm::forward(const Var& x) const { return ag::rms_norm(x, weight, bias, eps); }

DyT::DyT(int64_t dim, float alpha0) {
  alpha = register_parameter("alpha", Tensor::full({1}, alpha0));
  weight = register_parameter("weight", Tensor::ones({dim}));
  bias = register_parameter("bias", Tensor::zeros({dim}));
}
Var DyT::forward(const Var& x) const { return ag::dyt(x, alpha, weight, bias); }
Tensor DyT::pre_tanh(const Tensor& x) const { return mul_scalar(x, alpha.value().item()); }

BHyT::BHyT(int64_t dim, float lambda0, float kappa_, float eps_) : kappa(kappa_), eps(eps_) {
  weight = register_parameter("weight", Tensor::ones({dim}));
  lambda = register_parameter("lambda", Tensor::full({1}, lambda0));
}
Var BHyT::forward(const Var& x) const { return ag::bhyt(x, weight, lambda, kappa, eps); }
Var BHyT::forward_with_denom(const Var& x, const Var& denom) const {
  return ag::bhyt_with_denom(x, denom, weight, lambda);
}
Tensor BHyT::denominator(const Tensor& x) const {
  Tensor spread = sqrt(add_scalar(var(x, {-1}, true, 0), eps));
  return add(mul_scalar(spread, kappa), abs(mean(x, {-1}, true)));
}
Tensor BHyT::pre_tanh(const Tensor& x) const { return pre_tanh_with_denom(x, denominator(x)); }
Tensor BHyT::pre_tanh_with_denom(const Tensor& x, const Tensor& denom) const {
  Shape keep(x.shape().begin(), x.shape().end() - 1);
  keep.push_back(1);
  return mul_scalar(div(x, denom.contiguous().reshape(keep)), lambda.value().item());
}

std::shared_ptr<Norm> make_norm(const NormConfig& c, int64_t dim) {
  check_norm_name(c.name);
  if (c.name == "ln") return std::make_shared<LayerNorm>(dim, c.eps);
  if (c.name == "rms") return std::make_shared<RMSNorm>(dim, c.eps, false);
  if (c.name == "cbwc") return std::make_shared<RMSNorm>(dim, c.eps, true);
  if (c.name == "dyt") return std::make_shared<DyT>(dim, c.dyt_alpha0);
  return std::make_shared<BHyT>(dim, c.bhyt_lambda0, c.kappa(), c.eps);  // bhyt, bhyt-exact
}

}  // namespace nl
