// rms: RMSNorm. cbwc: RMSNorm + beta in a model that keeps its residual stream
// zero-mean (the embedding sum centred once, CBWC projections into the stream), where
// it computes exactly LayerNorm (NORMS.md, CBWC).
#include "autograd/norms.h"
#include "autograd/ops.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"

namespace nl {

RMSNorm::RMSNorm(int64_t dim, float eps_, bool with_bias, float gain0, bool learnt_gain) : eps(eps_) {
  // a fixed gain is a constant of the layer, not a parameter: no optimizer, checkpoint
  // or weight decay sees it, and its gradient is never accumulated
  weight = learnt_gain ? register_parameter("weight", Tensor::full({dim}, gain0)) : Var(Tensor::full({dim}, gain0));
  if (with_bias) bias = register_parameter("bias", Tensor::zeros({dim}));
}
// A fixed gain is made on the CPU and Module::to moves parameters only, so it follows x:
// copied to x's device once and kept, not copied on every forward.
Var RMSNorm::gain_for(const Var& x) const {
  const Device device = x.value().device();
  if (weight.requires_grad() || weight.value().device() == device) return weight;
  if (!gain_on_device_.defined() || gain_on_device_.value().device() != device)
    gain_on_device_ = Var(weight.value().to(device));
  return gain_on_device_;
}
Var RMSNorm::forward(const Var& x) const { return ag::rms_norm(x, gain_for(x), bias, eps); }
Var RMSNorm::composite(const Var& x) const {
  Var y = ag::mul(ag::mul(x, ag::rsqrt(ag::add_scalar(ag::mean(ag::mul(x, x), {-1}, true), eps))), gain_for(x));
  return bias.defined() ? ag::add(y, bias) : y;
}

NormKind rmsnorm_kind() {
  NormKind k;
  k.name = "rms";
  k.summary = "RMSNorm: gamma x / sqrt(mean(x^2) + eps)";
  k.source = "Zhang and Sennrich 2019, Root Mean Square Layer Normalization";
  k.make = [](const NormConfig& c, int64_t dim, NormPlace place) -> std::shared_ptr<Norm> {
    // the final norm (and Peri-LN's embedding norm) keeps a learnt gain starting at 1
    const bool block_site = place == NormPlace::Attention || place == NormPlace::Mlp;
    if (!block_site) return std::make_shared<RMSNorm>(dim, c.eps, false);
    const double gain0 = c.option(place == NormPlace::Attention ? "rms-gain0-attn" : "rms-gain0-mlp");
    return std::make_shared<RMSNorm>(dim, c.eps, false, (float)gain0, c.choice("rms-gain") == "learnt");
  };
  // BHyT's controls (docs/norms/bhyt.md): for a small argument BHyT is an RMSNorm whose
  // gain is lambda / kappa, 0.2 and 0.1 at the released recipe's sites
  k.options = {
      {"rms-gain0-attn", 1.0, -1e6, 1e6, "RMSNorm's initial gain before the attention (and after it in Peri-LN)",
       false, false, false, {}, {}, nullptr, true},
      {"rms-gain0-mlp", 1.0, -1e6, 1e6, "RMSNorm's initial gain before the MLP (and after it in Peri-LN)", false,
       false, false, {}, {}, nullptr, true},
      {"rms-gain", 0, 0, 1,
       "RMSNorm's gain at the blocks' sites: learnt (a parameter) or fixed at its initial value (the final norm's is "
       "learnt either way)",
       true, false, false, {"learnt", "fixed"}, {}, nullptr, true},
  };
  k.fused_ops = {"rms_norm"};
  return k;
}

NormKind cbwc_kind() {
  NormKind k;
  k.name = "cbwc";
  k.summary = "CBWC + RMSNorm: RMSNorm + beta on a zero-mean stream (centred embedding, CBWC projections) = LayerNorm";
  k.source = "Enjoy your layer normalization with the computational efficiency of RMSNorm (CBWC)";
  k.make = [](const NormConfig& c, int64_t dim, NormPlace) -> std::shared_ptr<Norm> {
    return std::make_shared<RMSNorm>(dim, c.eps, c.bias);
  };
  k.fused_ops = {"rms_norm"};
  k.centres_stream = true;
  return k;
}

}  // namespace nl
