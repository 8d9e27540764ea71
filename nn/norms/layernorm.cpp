// ln: LayerNorm. Foldable: a trained ln model becomes a cbwc model with the same
// outputs (nn/fold.h), because its inputs can be made zero-mean.
#include "autograd/norms.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"

namespace nl {

LayerNorm::LayerNorm(int64_t dim, float eps_) : eps(eps_) {
  weight = register_parameter("weight", Tensor::ones({dim}));
  bias = register_parameter("bias", Tensor::zeros({dim}));
}
Var LayerNorm::forward(const Var& x) const { return ag::layer_norm(x, weight, bias, eps); }

NormKind layernorm_kind() {
  NormKind k;
  k.name = "ln";
  k.summary = "LayerNorm: gamma (x - mu) / sqrt(s^2 + eps) + beta";
  k.make = [](const NormConfig& c, int64_t dim, NormPlace) -> std::shared_ptr<Norm> {
    return std::make_shared<LayerNorm>(dim, c.eps);
  };
  k.folds_into = "cbwc";
  return k;
}

}  // namespace nl
