// bhyt and bhyt-exact: Bounded Hyperbolic Tanh (Byun et al. 2026). bhyt-exact is BHyT*
// at every site; bhyt replaces the exact reduction at each Pre-LN block's second site
// by the block-level variance approximation below.
#include <cmath>

#include "autograd/norms.h"
#include "autograd/ops.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"
#include "tensor/ops.h"

namespace nl {

float NormConfig::kappa() const { return 1.0f / std::sqrt(1.0f - (float)option("bhyt-p")); }

BHyT::BHyT(int64_t dim, float lambda0, float kappa_, float eps_) : kappa(kappa_), eps(eps_) {
  weight = register_parameter("weight", Tensor::ones({dim}));
  lambda = register_parameter("lambda", Tensor::full({1}, lambda0));
}
Var BHyT::forward(const Var& x) const { return ag::bhyt(x, weight, lambda, kappa, eps); }
Var BHyT::forward_with_denom(const Var& x, const Var& denom) const {
  return ag::bhyt_with_denom(x, denom, weight, lambda);
}
Var BHyT::composite(const Var& x) const { return ag::mul(ag::tanh(bounded_arg(x)), weight); }
Var BHyT::bounded_arg(const Var& x) const {
  Var spread = ag::sqrt(ag::add_scalar(ag::var(x, {-1}, true, 0), eps));
  Var denom = ag::add(ag::mul_scalar(spread, kappa), ag::abs(ag::mean(x, {-1}, true)));
  return ag::mul(ag::div(x, denom), lambda);
}
Tensor BHyT::pre_tanh_with_denom(const Tensor& x, const Tensor& denom) const {
  Shape keep(x.shape().begin(), x.shape().end() - 1);
  keep.push_back(1);
  return mul_scalar(div(x, denom.contiguous().reshape(keep)), lambda.value().item());
}

// The attention branch adds about c_attn lambda1^2 / kappa^2 to the variance of the
// stream (uniform attention, an output uncorrelated with x), and barely moves its mean.
BHyTSite2 bhyt_site2_approximation(const BHyT& site1, const BHyT& site2, const Var& x, const Var& h, float c_attn) {
  const float kappa = site1.kappa;
  const float lambda1 = site1.lambda.value().item();
  const float added = c_attn * lambda1 * lambda1 / (kappa * kappa);
  const int64_t B = x.shape()[0], T = x.shape()[1];
  Var mu1 = ag::mean(x, {-1}, true);
  Var var1 = ag::var(x, {-1}, true, 0);
  Var spread = ag::sqrt(ag::add_scalar(var1, added + site1.eps));
  Var denom = ag::reshape(ag::add(ag::mul_scalar(spread, kappa), ag::abs(mu1)), {B, T});  // (B, T)
  BHyTSite2 out;
  out.y = site2.forward_with_denom(h, denom);
  out.denom = denom;
  out.var_approx = add_scalar(var1.value(), added).reshape({B, T});
  return out;
}

namespace {

// lambda per site: the attention and MLP branches may start apart (the released recipe)
std::shared_ptr<Norm> make_bhyt(const NormConfig& c, int64_t dim, NormPlace place) {
  double lambda0 = c.option("bhyt-lambda");
  if (place == NormPlace::Attention && c.has("bhyt-lambda-attn")) lambda0 = c.option("bhyt-lambda-attn");
  if (place == NormPlace::Mlp && c.has("bhyt-lambda-mlp")) lambda0 = c.option("bhyt-lambda-mlp");
  return std::make_shared<BHyT>(dim, (float)lambda0, c.kappa(), c.eps);
}

const std::vector<NormOption>& bhyt_options() {
  static const std::vector<NormOption> options = {
      {"bhyt-lambda", 1.0, -1e6, 1e6, "BHyT's initial lambda at every site without its own"},
      {"bhyt-lambda-attn", NAN, -1e6, 1e6, "initial lambda of the attention branch's sites (default: --bhyt-lambda)"},
      {"bhyt-lambda-mlp", NAN, -1e6, 1e6, "initial lambda of the MLP branch's sites (default: --bhyt-lambda)"},
      {"bhyt-p", 0.99, 0, 1, "BHyT's target probability p (kappa = 1/sqrt(1-p))", false, true, true},
      {"bhyt-refresh", 1, 1, 1e9, "bhyt: training steps between recomputations of c_attn = ||W_V W_O||^2/(T d)", true},
  };
  return options;
}

const char kBHyTPaper[] = "Byun et al. 2026, Bounded Hyperbolic Tanh";

}  // namespace

NormKind bhyt_kind() {
  NormKind k;
  k.name = "bhyt";
  k.summary = "BHyT: BHyT* at site 1, the block-level variance approximation at each block's site 2";
  k.make = make_bhyt;
  k.options = bhyt_options();
  k.approximates_site2 = true;
  k.source = kBHyTPaper;
  k.bounded.name = "tanh";
  k.fused_ops = {"bhyt", "bhyt_with_denom"};
  return k;
}

NormKind bhyt_exact_kind() {
  NormKind k;
  k.name = "bhyt-exact";
  k.summary = "BHyT*: gamma tanh(lambda x / (kappa s + |mu|)) at every site";
  k.make = make_bhyt;
  k.options = bhyt_options();
  k.reports_site2 = true;
  k.source = kBHyTPaper;
  k.bounded.name = "tanh";
  k.fused_ops = {"bhyt", "bhyt_with_denom"};
  return k;
}

}  // namespace nl
