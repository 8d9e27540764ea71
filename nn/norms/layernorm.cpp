// ln: LayerNorm. Foldable: a trained ln model becomes a cbwc model with the same
// outputs (nn/fold.h), because its inputs can be made zero-mean.
#include "autograd/norms.h"
#include "autograd/ops.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"

namespace nl {

LayerNorm::LayerNorm(int64_t dim, float eps_, bool with_bias) : eps(eps_) {
  weight = register_parameter("weight", Tensor::ones({dim}));
  if (with_bias) bias = register_parameter("bias", Tensor::zeros({dim}));
}
Var LayerNorm::forward(const Var& x) const { return ag::layer_norm(x, weight, bias, eps); }
Var LayerNorm::composite(const Var& x) const {
  Var centred = ag::sub(x, ag::mean(x, {-1}, true));
  Var inv_spread = ag::rsqrt(ag::add_scalar(ag::mean(ag::mul(centred, centred), {-1}, true), eps));
  Var y = ag::mul(ag::mul(centred, inv_spread), weight);
  return bias.defined() ? ag::add(y, bias) : y;
}

NormKind layernorm_kind() {
  NormKind k;
  k.name = "ln";
  k.summary = "LayerNorm: gamma (x - mu) / sqrt(s^2 + eps) + beta";
  k.source = "Ba, Kiros and Hinton 2016, Layer Normalization";
  k.make = [](const NormConfig& c, int64_t dim, NormPlace) -> std::shared_ptr<Norm> {
    return std::make_shared<LayerNorm>(dim, c.eps, c.bias);
  };
  k.fused_ops = {"layer_norm"};
  k.ignores_shift = true;
  k.folds_into = "cbwc";
  return k;
}

}  // namespace nl
