// dyt: Dynamic Tanh (Zhu et al. 2025), no statistics at all.
#include "autograd/norms.h"
#include "autograd/ops.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"

namespace nl {

DyT::DyT(int64_t dim, float alpha0) {
  alpha = register_parameter("alpha", Tensor::full({1}, alpha0));
  weight = register_parameter("weight", Tensor::ones({dim}));
  bias = register_parameter("bias", Tensor::zeros({dim}));
}
Var DyT::forward(const Var& x) const { return ag::dyt(x, alpha, weight, bias); }
Var DyT::composite(const Var& x) const { return ag::add(ag::mul(ag::tanh(bounded_arg(x)), weight), bias); }
Var DyT::bounded_arg(const Var& x) const { return ag::mul(x, alpha); }

NormKind dyt_kind() {
  NormKind k;
  k.name = "dyt";
  k.summary = "DyT: gamma tanh(alpha x) + beta, alpha a learnt scalar (--dyt-alpha0)";
  k.make = [](const NormConfig& c, int64_t dim, NormPlace) -> std::shared_ptr<Norm> {
    return std::make_shared<DyT>(dim, (float)c.option("dyt-alpha0"));
  };
  k.options = {{"dyt-alpha0", 0.5, -1e6, 1e6, "DyT's initial alpha"}};
  k.statistics = false;
  k.source = "Zhu, Chen, He, LeCun and Liu 2025, Transformers without Normalization";
  k.bounded.name = "tanh";
  k.fused_ops = {"dyt"};
  return k;
}

}  // namespace nl
