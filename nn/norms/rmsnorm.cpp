// rms: RMSNorm. cbwc: RMSNorm + beta in a model that keeps its residual stream
// zero-mean (the embedding sum centred once, CBWC projections into the stream), where
// it computes exactly LayerNorm (NORMS.md, CBWC).
#include "autograd/norms.h"
#include "autograd/ops.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"

namespace nl {

RMSNorm::RMSNorm(int64_t dim, float eps_, bool with_bias) : eps(eps_) {
  weight = register_parameter("weight", Tensor::ones({dim}));
  if (with_bias) bias = register_parameter("bias", Tensor::zeros({dim}));
}
Var RMSNorm::forward(const Var& x) const { return ag::rms_norm(x, weight, bias, eps); }
Var RMSNorm::composite(const Var& x) const {
  Var y = ag::mul(ag::mul(x, ag::rsqrt(ag::add_scalar(ag::mean(ag::mul(x, x), {-1}, true), eps))), weight);
  return bias.defined() ? ag::add(y, bias) : y;
}

NormKind rmsnorm_kind() {
  NormKind k;
  k.name = "rms";
  k.summary = "RMSNorm: gamma x / sqrt(mean(x^2) + eps)";
  k.source = "Zhang and Sennrich 2019, Root Mean Square Layer Normalization";
  k.make = [](const NormConfig& c, int64_t dim, NormPlace) -> std::shared_ptr<Norm> {
    return std::make_shared<RMSNorm>(dim, c.eps, false);
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
