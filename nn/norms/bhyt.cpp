// bhyt and bhyt-exact: Bounded Hyperbolic Tanh (Byun et al. 2026). bhyt-exact is BHyT*
// at every site; bhyt replaces the exact reduction at each Pre-LN block's second site
// by the block-level variance approximation below. Their defaults are the released
// recipe (MLAI-Yonsei/BHyT: lambda 2 at the attention sites and 1 at the MLP sites, a
// plain RMSNorm before the head); docs/norms/bhyt.md lists what still differs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "autograd/norms.h"
#include "autograd/ops.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"
#include "nn/probe.h"
#include "tensor/ops.h"

namespace nl {

float NormConfig::kappa() const { return 1.0f / std::sqrt(1.0f - (float)option("bhyt-p")); }

BHyT::BHyT(int64_t dim, float lambda0, float kappa_, float eps_, bool centred_, float gamma0)
    : kappa(kappa_), eps(eps_), centred(centred_) {
  weight = register_parameter("weight", Tensor::full({dim}, gamma0));
  lambda = register_parameter("lambda", Tensor::full({1}, lambda0));
}
Var BHyT::forward(const Var& x) const { return ag::bhyt(x, weight, lambda, kappa, eps, centred); }
Var BHyT::forward_with_denom(const Var& x, const Var& denom) const {
  return ag::bhyt_with_denom(x, denom, weight, lambda);
}
Var BHyT::spread2(const Var& x, bool keepdim) const {
  return centred ? ag::var(x, {-1}, keepdim, 0) : ag::mean(ag::mul(x, x), {-1}, keepdim);
}
Var BHyT::denominator(const Var& x) const {
  Var d = ag::mul_scalar(ag::sqrt(ag::add_scalar(spread2(x, true), eps)), kappa);
  return centred ? ag::add(d, ag::abs(ag::mean(x, {-1}, true))) : d;
}
Var BHyT::composite(const Var& x) const { return ag::mul(ag::tanh(bounded_arg(x)), weight); }
Var BHyT::bounded_arg(const Var& x) const { return ag::mul(ag::div(x, denominator(x)), lambda); }
Tensor BHyT::pre_tanh_with_denom(const Tensor& x, const Tensor& denom) const {
  Shape keep(x.shape().begin(), x.shape().end() - 1);
  keep.push_back(1);
  return mul_scalar(div(x, denom.contiguous().reshape(keep)), lambda.value().item());
}

// The attention branch adds about c_attn lambda1^2 / kappa^2 to the variance of the
// stream (uniform attention, an output uncorrelated with x), and barely moves its mean.
// The code form follows the released code (LayerWiseVarApproxParrallel): an output that
// is zero-mean and uncorrelated with x adds the same amount to the mean square, so its
// site 2 uses ms1 + c_attn lambda1^2 / kappa^2 with no |mu| term.
BHyTSite2 bhyt_site2_approximation(const BHyT& site1, const BHyT& site2, const Var& x, const Var& h, float c_attn) {
  const float kappa = site1.kappa;
  const float lambda1 = site1.lambda.value().item();
  const float added = c_attn * lambda1 * lambda1 / (kappa * kappa);
  const int64_t B = x.shape()[0], T = x.shape()[1];
  Var spread2_1 = site1.spread2(x, true);
  Var spread = ag::sqrt(ag::add_scalar(spread2_1, added + site1.eps));
  Var denom = ag::mul_scalar(spread, kappa);
  if (site1.centred) denom = ag::add(denom, ag::abs(ag::mean(x, {-1}, true)));
  BHyTSite2 out;
  out.denom = ag::reshape(denom, {B, T});
  out.y = site2.forward_with_denom(h, out.denom);
  out.var_approx = add_scalar(spread2_1.value(), added).reshape({B, T});
  return out;
}

BHyTPair::BHyTPair(const SitePairParts& p, bool approximate)
    : block_(p.block),
      site1_(dynamic_cast<const BHyT&>(p.site1)),
      site2_(dynamic_cast<const BHyT&>(p.site2)),
      frobenius2_(p.value_output_frobenius2),
      factor_(p.out_scale * p.out_scale),
      dim_(p.dim),
      every_((int64_t)p.config.option("bhyt-refresh")),
      approximate_(approximate),
      fro2_cache_(NAN) {}

// A training forward (training mode, recording gradients) counts as one step.
float BHyTPair::frobenius2_for_forward() const {
  const bool counted = block_.training() && grad_enabled();
  if (every_ <= 1 || std::isnan(fro2_cache_) || (counted && training_forwards_ % every_ == 0))
    fro2_cache_ = frobenius2_();
  if (counted) ++training_forwards_;
  return fro2_cache_;
}

float BHyTPair::c_attn(int64_t T, float frobenius2) const {
  return factor_ * frobenius2 / ((float)T * (float)dim_);
}

Var BHyTPair::forward(const Var& x, const Var& h) const {
  if (!approximate_) return site2_.forward(h);  // bhyt-exact: the block runs ln2 itself
  return bhyt_site2_approximation(site1_, site2_, x, h, c_attn(x.shape()[1], frobenius2_for_forward())).y;
}

void BHyTPair::report(const Tensor& x, const Tensor& h, ActivationProbe& probe, int64_t layer) const {
  NoGradGuard no_graph;
  if (approximate_) {
    // the denominators the forward used: the same inputs and the cached c_attn it left
    BHyTSite2 s = bhyt_site2_approximation(site1_, site2_, Var(x), Var(h), c_attn(x.shape()[1], fro2_cache_));
    probe.record(layer, "ln2.bounded_arg", site2_.pre_tanh_with_denom(h, s.denom.value()));
    probe.record(layer, "site2_var_approx", s.var_approx);
  } else {
    // what the approximation would have used, beside the exact variance, for comparison
    const float lambda1 = site1_.lambda.value().item();
    const float added = c_attn(x.shape()[1], frobenius2_()) * lambda1 * lambda1 / (site1_.kappa * site1_.kappa);
    probe.record(layer, "site2_var_approx", add_scalar(site1_.spread2(Var(x), false).value(), added));
  }
  probe.record(layer, "site2_var_exact", site2_.spread2(Var(h), false).value());
}

std::string BHyTPair::cached_form_refusal() const {
  return approximate_ ? "the block-level BHyT approximation depends on the sequence length and has no key/value-cached "
                        "form (generate without the cache)"
                      : "";
}

std::string BHyTPair::state() const {
  if (!approximate_) return {};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g:%lld", (double)fro2_cache_, (long long)training_forwards_);
  return buf;
}

void BHyTPair::restore(const std::string& text) {
  const size_t colon = text.find(':');
  NL_CHECK(approximate_ && colon != std::string::npos, "checkpoint: malformed bhyt state '", text,
           "' (expected frobenius2:forwards)");
  fro2_cache_ = std::strtof(text.substr(0, colon).c_str(), nullptr);
  training_forwards_ = std::atoll(text.c_str() + colon + 1);
}

namespace {

// lambda per site: the attention and MLP branches start apart (the released recipe)
std::shared_ptr<Norm> make_bhyt(const NormConfig& c, int64_t dim, NormPlace place) {
  double lambda0 = c.option("bhyt-lambda");
  if (place == NormPlace::Attention) lambda0 = c.option("bhyt-lambda-attn");
  if (place == NormPlace::Mlp) lambda0 = c.option("bhyt-lambda-mlp");
  // kappa / lambda0: for a small argument gamma tanh(lambda x / (kappa s)) ~ (gamma lambda / kappa) x / s,
  // so this gamma starts the layer as an RMSNorm of gain 1 (docs/norms/bhyt.md, the controls)
  const bool inverse = c.choice("bhyt-gamma0") == "kappa-over-lambda";
  NL_CHECK(!inverse || lambda0 != 0,
           "--bhyt-gamma0 kappa-over-lambda needs a nonzero initial lambda at every BHyT site");
  const double gamma0 = inverse ? c.kappa() / lambda0 : 1.0;
  return std::make_shared<BHyT>(dim, (float)lambda0, c.kappa(), c.eps, c.choice("bhyt-form") == "paper",
                                (float)gamma0);
}

// The released UpdateScalerCallback's interval: about 50 refreshes per run, at most every 1000 steps.
int64_t refresh_for_run(int64_t steps) { return std::max<int64_t>(1, std::min<int64_t>(1000, steps / 50)); }

const std::vector<NormOption>& bhyt_options() {
  static const std::vector<NormOption> options = {
      {"bhyt-lambda", 1.0, -1e6, 1e6,
       "BHyT's initial lambda of a BHyT final norm and of Peri-LN's embedding norm (the blocks' sites: "
       "--bhyt-lambda-attn, --bhyt-lambda-mlp)"},
      {"bhyt-lambda-attn", 2.0, -1e6, 1e6,
       "BHyT's initial lambda before the attention (and after it in Peri-LN); the released recipe's 2"},
      {"bhyt-lambda-mlp", 1.0, -1e6, 1e6, "BHyT's initial lambda before the MLP (and after it in Peri-LN); the "
                                          "released recipe's 1"},
      {"bhyt-p", 0.99, 0, 1, "BHyT's target probability p (kappa = 1/sqrt(1-p))", false, true, true},
      {"bhyt-refresh", 0, 1, 1e9,
       "bhyt: training steps between recomputations of c_attn = ||W_V W_O||^2/(T d); auto: max(1, min(1000, "
       "steps/50)), the released callback's ~50 per run",
       true, false, false, {}, {}, refresh_for_run},
      {"bhyt-form", 0, 0, 1,
       "BHyT's denominator: paper, kappa sqrt(s^2 + eps) + |mu|; code, kappa sqrt(mean(x^2) + eps) with no centring, "
       "as the released code computes",
       true, false, false, {"paper", "code"}},
      {"bhyt-gamma0", 0, 0, 1,
       "BHyT's initial gamma: one, or kappa-over-lambda (each site's kappa / lambda0, which starts it as an RMSNorm "
       "of gain 1)",
       true, false, false, {"one", "kappa-over-lambda"}, {}, nullptr, true},
  };
  return options;
}

// Peri-LN passes the attention output through ln1_out before it reaches the stream,
// which the derivation of the approximation does not cover: there every site is exact.
std::function<std::unique_ptr<SitePair>(const SitePairParts&)> bhyt_pair(bool approximate) {
  return [approximate](const SitePairParts& p) -> std::unique_ptr<SitePair> {
    if (p.branch_output_normed) return nullptr;
    return std::make_unique<BHyTPair>(p, approximate);
  };
}

// Checkpoints written before kNormStateKey hold the caches under "bhyt_c_attn", the
// blocks' states joined by commas.
std::vector<std::string> legacy_c_attn(const std::map<std::string, std::string>& metadata) {
  std::vector<std::string> states;
  auto caches = metadata.find("bhyt_c_attn");
  if (caches == metadata.end()) return states;
  std::stringstream ss(caches->second);
  std::string item;
  while (std::getline(ss, item, ',')) states.push_back(item);
  return states;
}

const char kBHyTPaper[] = "Byun et al. 2026, Bounded Hyperbolic Tanh";

}  // namespace

NormKind bhyt_kind() {
  NormKind k;
  k.name = "bhyt";
  k.summary = "BHyT: BHyT* at site 1, the block-level variance approximation at each block's site 2";
  k.make = make_bhyt;
  k.options = bhyt_options();
  k.make_site_pair = bhyt_pair(true);
  k.legacy_pair_states = legacy_c_attn;
  k.approximates_site2 = true;
  k.default_final_norm = "rms";
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
  k.make_site_pair = bhyt_pair(false);
  k.reports_site2 = true;
  k.default_final_norm = "rms";
  k.source = kBHyTPaper;
  k.bounded.name = "tanh";
  k.fused_ops = {"bhyt", "bhyt_with_denom"};
  return k;
}

}  // namespace nl
