// dyt: Dynamic Tanh (Zhu et al. 2025), no statistics at all. Its LLaMA recipe
// (jiachenzhu/DyT, other_tasks/LLaMA) starts alpha apart before the attention, before
// the MLP and at the final norm, and has no beta.
#include <cmath>

#include "autograd/norms.h"
#include "autograd/ops.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"

namespace nl {

DyT::DyT(int64_t dim, float alpha0, bool with_beta) {
  alpha = register_parameter("alpha", Tensor::full({1}, alpha0));
  weight = register_parameter("weight", Tensor::ones({dim}));
  if (with_beta) bias = register_parameter("bias", Tensor::zeros({dim}));
}
Var DyT::forward(const Var& x) const { return ag::dyt(x, alpha, weight, bias); }
Var DyT::composite(const Var& x) const {
  Var y = ag::mul(ag::tanh(bounded_arg(x)), weight);
  return bias.defined() ? ag::add(y, bias) : y;
}
Var DyT::bounded_arg(const Var& x) const { return ag::mul(x, alpha); }

NormKind dyt_kind() {
  NormKind k;
  k.name = "dyt";
  k.summary = "DyT: gamma tanh(alpha x) + beta, alpha a learnt scalar (--dyt-alpha0)";
  k.make = [](const NormConfig& c, int64_t dim, NormPlace place) -> std::shared_ptr<Norm> {
    double alpha0 = c.option("dyt-alpha0");  // Peri-LN's embedding norm
    if (place == NormPlace::Attention) alpha0 = c.option("dyt-alpha0-attn");
    if (place == NormPlace::Mlp) alpha0 = c.option("dyt-alpha0-mlp");
    if (place == NormPlace::Final) alpha0 = c.option("dyt-alpha0-final");
    return std::make_shared<DyT>(dim, (float)alpha0, c.choice("dyt-beta") == "on" && c.bias);
  };
  k.options = {
      {"dyt-alpha0", 0.5, -1e6, 1e6, "DyT's initial alpha at every site without its own"},
      {"dyt-alpha0-attn", NAN, -1e6, 1e6, "DyT's initial alpha before the attention",
       false, false, false, {}, "dyt-alpha0"},
      {"dyt-alpha0-mlp", NAN, -1e6, 1e6, "DyT's initial alpha before the MLP", false, false,
       false, {}, "dyt-alpha0"},
      {"dyt-alpha0-final", NAN, -1e6, 1e6, "DyT's initial alpha of the final norm", false,
       false, false, {}, "dyt-alpha0"},
      {"dyt-beta", 0, 0, 1, "DyT's beta: on (gamma tanh(alpha x) + beta) or off (DyT's LLaMA recipe)", true, false,
       false, {"on", "off"}},
  };
  k.statistics = false;
  k.source = "Zhu, Chen, He, LeCun and Liu 2025, Transformers without Normalization";
  k.bounded.name = "tanh";
  k.screened = true;
  k.tuned_as_dyt = true;
  k.fused_ops = {"dyt"};
  return k;
}

}  // namespace nl
