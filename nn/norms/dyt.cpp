// dyt: Dynamic Tanh (Zhu et al. 2025), no statistics at all.
#include "autograd/norms.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"
#include "tensor/ops.h"

namespace nl {

DyT::DyT(int64_t dim, float alpha0) {
  alpha = register_parameter("alpha", Tensor::full({1}, alpha0));
  weight = register_parameter("weight", Tensor::ones({dim}));
  bias = register_parameter("bias", Tensor::zeros({dim}));
}
Var DyT::forward(const Var& x) const { return ag::dyt(x, alpha, weight, bias); }
Tensor DyT::pre_tanh(const Tensor& x) const { return mul_scalar(x, alpha.value().item()); }

NormKind dyt_kind() {
  NormKind k;
  k.name = "dyt";
  k.summary = "DyT: gamma tanh(alpha x) + beta, alpha a learnt scalar (--dyt-alpha0)";
  k.make = [](const NormConfig& c, int64_t dim, NormPlace) -> std::shared_ptr<Norm> {
    return std::make_shared<DyT>(dim, (float)c.option("dyt-alpha0"));
  };
  k.options = {{"dyt-alpha0", 0.5, -1e6, 1e6, "DyT's initial alpha"}};
  k.statistics = false;
  k.ends_in_tanh = true;
  return k;
}

}  // namespace nl
