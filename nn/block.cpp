#include "nn/block.h"

#include <cmath>

#include "autograd/ops.h"
#include "autograd/profile.h"

namespace nl {

const std::vector<std::string>& block_names() {
  static const std::vector<std::string> names = {"pre", "peri", "lns"};
  return names;
}

void check_block_name(const std::string& name) {
  for (const auto& n : block_names())
    if (n == name) return;
  fail("unknown block variant '", name, "' (choose one of: pre, peri, lns)");
}

Block::Block(int64_t dim, int64_t heads, bool causal, const NormConfig& norm_, int layers, Generator& gen,
             float dropout_, Generator* dropout_gen_)
    : Block(dim, heads, causal, norm_, layers, gen, "pre", 1, dropout_, dropout_gen_) {}

Block::Block(int64_t dim, int64_t heads, bool causal, const NormConfig& norm_, int layers, Generator& gen,
             const std::string& variant_, int64_t layer_, float dropout_, Generator* dropout_gen_,
             const std::string& mlp_kind)
    : norm(norm_), variant(variant_), layer(layer_), dropout(dropout_), dropout_gen(dropout_gen_),
      fro2_cache_(NAN) {
  check_block_name(variant);
  NL_CHECK(layer >= 1, "block: layer index is 1-based, got ", layer);
  NL_CHECK(dropout >= 0.0f && dropout < 1.0f, "block: dropout must lie in [0, 1), got ", dropout);
  NL_CHECK(dropout == 0.0f || dropout_gen, "block: dropout ", dropout, " needs a generator for its masks");
  NL_CHECK(norm.bhyt_refresh >= 1, "block: --bhyt-refresh must be >= 1, got ", norm.bhyt_refresh);
  out_scale = variant == "lns" ? 1.0f / std::sqrt((float)layer) : 1.0f;
  approx_site2_ = norm.name == "bhyt" && variant != "peri";
  build(dim, heads, causal, layers, gen, mlp_kind);
}

void Block::build(int64_t dim, int64_t heads, bool causal, int layers, Generator& gen, const std::string& mlp_kind) {
  // GPT-2: the projections that write into the residual stream start smaller, by
  // 1/sqrt(2L), so the stream's variance does not grow with depth at initialisation.
  const float proj_std = 0.02f / std::sqrt(2.0f * (float)layers);
  const bool cbwc = norm.name == "cbwc";
  const bool peri = variant == "peri";
  const NormConfig attn_site = norm.with_lambda0(norm.lambda_attn()), mlp_site = norm.with_lambda0(norm.lambda_mlp());
  // registration order gives the parameter order: pre's is ln1, attn, ln2, mlp as before
  ln1 = register_module("ln1", make_norm(attn_site, dim));
  attn = register_module("attn", std::make_shared<SelfAttention>(dim, heads, causal, gen, proj_std, cbwc));
  if (peri) ln1_out = register_module("ln1_out", make_norm(attn_site, dim));
  ln2 = register_module("ln2", make_norm(mlp_site, dim));
  mlp = register_module("mlp", std::make_shared<MLP>(dim, gen, proj_std, cbwc, mlp_kind));
  if (peri) ln2_out = register_module("ln2_out", make_norm(mlp_site, dim));
}

void Block::restore_c_attn_cache(float frobenius2, int64_t forwards) {
  fro2_cache_ = frobenius2;
  training_forwards_ = forwards;
}

Var Block::residual(const Var& x, const Var& branch) const {
  profile::Scope scope("residual add");
  if (dropout == 0.0f) return ag::add(x, branch);
  return ag::add(x, ag::dropout(branch, dropout, training(), *dropout_gen));
}

Var Block::norm_site(const Norm& n, const Var& x, const char* site) const {
  profile::Scope scope("norm");
  Var y = n.forward(x);
  if (out_scale != 1.0f) y = ag::mul_scalar(y, out_scale);
  if (probe) {
    probe->record(layer - 1, site, y.value());
    Tensor arg = n.pre_tanh(x.value());
    if (arg.defined()) probe->record(layer - 1, std::string(site) + ".pre_tanh", arg);
  }
  return y;
}

// A training forward (training mode, recording gradients) counts as one step; the
// cache is refreshed on the first and then every bhyt_refresh-th of them. Evaluation
// forwards use the cache as it stands (filling it if empty) and count nothing.
float Block::frobenius2_for_forward() const {
  const bool counted = training() && grad_enabled();
  const int64_t every = norm.bhyt_refresh;
  if (every <= 1 || std::isnan(fro2_cache_) || (counted && training_forwards_ % every == 0))
    fro2_cache_ = attn->value_output_frobenius2();
  if (counted) ++training_forwards_;
  return fro2_cache_;
}

Var Block::forward(const Var& x) const {
  return forward_with(x, [this](const Var& a) { return attn->forward(a); });
}

Var Block::forward_cached(const Var& x, KVCacheLayer& cache, int64_t past) const {
  NL_CHECK(!approx_site2_, "block: the block-level BHyT approximation depends on the sequence length and has no "
                           "key/value-cached form (generate without the cache)");
  return forward_with(x, [&](const Var& a) { return attn->forward_cached(a, cache, past); });
}

Var Block::forward_with(const Var& x, const std::function<Var(const Var&)>& attention) const {
  if (probe) probe->record(layer - 1, "resid", x.value());
  const Var a_in = norm_site(*ln1, x, "ln1");
  Var a;
  {
    profile::Scope scope("attention");
    a = attention(a_in);
  }
  if (ln1_out) a = norm_site(*ln1_out, a, "ln1_out");
  Var h = residual(x, a);
  Var m_in;
  if (approx_site2_) {
    m_in = approximated_site2(x, h);
  } else {
    m_in = norm_site(*ln2, h, "ln2");
    // bhyt-exact: report what the approximation would have used, for comparison
    if (probe && norm.name == "bhyt-exact" && variant != "peri")
      probe_site2_variances(x.value(), h.value());
  }
  Var m;
  {
    profile::Scope scope("mlp");
    m = mlp->forward(m_in);
  }
  if (ln2_out) m = norm_site(*ln2_out, m, "ln2_out");
  return residual(h, m);
}

Var Block::approximated_site2(const Var& x, const Var& h) const {
  profile::Scope scope("norm");
  const auto& site1 = static_cast<const BHyT&>(*ln1);
  const auto& site2 = static_cast<const BHyT&>(*ln2);
  const float kappa = site1.kappa, T = (float)x.shape()[1], d = (float)x.shape()[2];
  const float c_attn = site2_attn_factor() * frobenius2_for_forward() / (T * d);
  const float lambda1 = site1.lambda.value().item();
  const float added = c_attn * lambda1 * lambda1 / (kappa * kappa);  // the attention branch's variance
  Var mu1 = ag::mean(x, {-1}, true);
  Var var1 = ag::var(x, {-1}, true, 0);
  Var spread = ag::sqrt(ag::add_scalar(var1, added + site1.eps));
  Var denom = ag::add(ag::mul_scalar(spread, kappa), ag::abs(mu1));  // (B, T, 1)
  denom = ag::reshape(denom, {x.shape()[0], x.shape()[1]});
  Var y = site2.forward_with_denom(h, denom);
  if (out_scale != 1.0f) y = ag::mul_scalar(y, out_scale);
  if (probe) {
    probe->record(layer - 1, "ln2", y.value());
    probe->record(layer - 1, "ln2.pre_tanh", site2.pre_tanh_with_denom(h.value(), denom.value()));
    probe->record(layer - 1, "site2_var_approx", add_scalar(var1.value(), added).reshape({x.shape()[0], x.shape()[1]}));
    probe->record(layer - 1, "site2_var_exact", var(h.value(), {-1}, false, 0));
  }
  return y;
}

// What the approximation would use in a bhyt-exact block, beside the exact variance.
void Block::probe_site2_variances(const Tensor& x, const Tensor& h) const {
  const auto& site1 = static_cast<const BHyT&>(*ln1);
  const float T = (float)x.shape()[1], d = (float)x.shape()[2];
  const float c_attn = site2_attn_factor() * attn->value_output_frobenius2() / (T * d);
  const float lambda1 = site1.lambda.value().item();
  const float added = c_attn * lambda1 * lambda1 / (site1.kappa * site1.kappa);
  probe->record(layer - 1, "site2_var_approx", add_scalar(var(x, {-1}, false, 0), added));
  probe->record(layer - 1, "site2_var_exact", var(h, {-1}, false, 0));
}

}  // namespace nl
