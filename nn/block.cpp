#include "nn/block.h"

#include <cmath>

#include "autograd/ops.h"
#include "autograd/profile.h"
#include "nn/norms/norms.h"

namespace nl {

const std::vector<std::string>& block_names() {
  static const std::vector<std::string> names = {"pre", "peri", "lns", "llama"};
  return names;
}

void check_block_name(const std::string& name) {
  std::string all;
  for (const auto& n : block_names()) {
    if (n == name) return;
    all += (all.empty() ? "" : ", ") + n;
  }
  fail("unknown block variant '", name, "' (choose one of: ", all, ")");
}

const std::vector<std::string>& attention_names() {
  static const std::vector<std::string> names = {"standard", "diff"};
  return names;
}

void check_attention_name(const std::string& name) {
  for (const auto& n : attention_names())
    if (n == name) return;
  fail("unknown attention '", name, "' (choose one of: standard, diff)");
}

Block::Block(const BlockConfig& c, Generator& gen) : config(c), fro2_cache_(NAN) {
  check_block_name(c.variant);
  const NormKind& kind = norm_kind(c.norm.name);
  NL_CHECK(c.layer >= 1 && c.layer <= c.layers, "block: the layer index is 1-based and at most the depth ", c.layers,
           ", got ", c.layer);
  NL_CHECK(c.dropout >= 0.0f && c.dropout < 1.0f, "block: dropout must lie in [0, 1), got ", c.dropout);
  NL_CHECK(c.dropout == 0.0f || c.dropout_gen, "block: dropout ", c.dropout, " needs a generator for its masks");
  check_norm_config(c.norm);
  const bool peri = c.variant == "peri";
  out_scale = c.variant == "lns" ? 1.0f / std::sqrt((float)c.layer) : 1.0f;
  approx_site2_ = kind.approximates_site2 && !peri;
  report_site2_ = kind.reports_site2 && !peri;
  // GPT-2: the projections that write into the residual stream start smaller, by
  // 1/sqrt(2L), so the stream's variance does not grow with depth at initialisation.
  const float proj_std = 0.02f / std::sqrt(2.0f * (float)c.layers);
  const bool cbwc = kind.centres_stream;
  // registration order gives the parameter order: pre's is ln1, attn, ln2, mlp
  ln1 = register_module("ln1", make_norm(c.norm, c.dim, NormPlace::Attention));
  check_attention_name(c.attn);
  const bool rope = c.variant == "llama";
  if (c.attn == "diff") {
    NL_CHECK(!kind.approximates_site2 && !kind.reports_site2, "block: --attn diff has no BHyT c_attn (", c.norm.name,
             " needs the value and output projections of a standard attention)");
    // the Differential Attention here is the paper's GPT form: biased linears, learned positions
    NL_CHECK(c.bias && !rope, "block: --attn diff is built with biases and without rotary embeddings (",
             rope ? "--block llama" : "--bias off", " is not supported with it)");
    diff_attn = register_module("attn", std::make_shared<DiffAttention>(c.dim, c.heads, c.causal, c.layer, gen,
                                                                        proj_std, cbwc));
  } else {
    attn = register_module("attn", std::make_shared<SelfAttention>(c.dim, c.heads, c.causal, gen, proj_std, cbwc,
                                                                   c.bias, rope));
  }
  if (peri) ln1_out = register_module("ln1_out", make_norm(c.norm, c.dim, NormPlace::Attention));
  ln2 = register_module("ln2", make_norm(c.norm, c.dim, NormPlace::Mlp));
  mlp = register_module("mlp", std::make_shared<MLP>(c.dim, gen, proj_std, cbwc, c.mlp, c.bias));
  if (peri) ln2_out = register_module("ln2_out", make_norm(c.norm, c.dim, NormPlace::Mlp));
}

void Block::restore_c_attn_cache(float frobenius2, int64_t forwards) {
  fro2_cache_ = frobenius2;
  training_forwards_ = forwards;
}

Var Block::residual(const Var& x, const Var& branch) const {
  profile::Scope scope("residual add");
  if (config.dropout == 0.0f) return ag::add(x, branch);
  return ag::add(x, ag::dropout(branch, config.dropout, training(), *config.dropout_gen));
}

Var Block::norm_site(const Norm& n, const Var& x, const char* site) const {
  profile::Scope scope("norm");
  Var y = n.forward(x);
  if (out_scale != 1.0f) y = ag::mul_scalar(y, out_scale);
  if (probe && probe->wants_detail()) {
    probe->record(config.layer - 1, site, y.value());
    Tensor arg = n.bounded_arg_value(x.value());
    if (arg.defined()) probe->record(config.layer - 1, std::string(site) + ".bounded_arg", arg);
  }
  return y;
}

// A training forward (training mode, recording gradients) counts as one step; the
// cache is refreshed on the first and then every --bhyt-refresh-th of them. Evaluation
// forwards use the cache as it stands (filling it if empty) and count nothing.
float Block::frobenius2_for_forward() const {
  const bool counted = training() && grad_enabled();
  const int64_t every = (int64_t)config.norm.option("bhyt-refresh");
  if (every <= 1 || std::isnan(fro2_cache_) || (counted && training_forwards_ % every == 0))
    fro2_cache_ = attn->value_output_frobenius2();
  if (counted) ++training_forwards_;
  return fro2_cache_;
}

float Block::c_attn(int64_t T, float frobenius2) const {
  return site2_attn_factor() * frobenius2 / ((float)T * (float)config.dim);
}

Var Block::forward(const Var& x) const {
  if (diff_attn) return forward_with(x, [this](const Var& a) { return diff_attn->forward(a); });
  return forward_with(x, [this](const Var& a) { return attn->forward(a); });
}

Var Block::forward_cached(const Var& x, KVCacheLayer& cache, int64_t past) const {
  NL_CHECK(!approx_site2_, "block: the block-level BHyT approximation depends on the sequence length and has no "
                           "key/value-cached form (generate without the cache)");
  NL_CHECK(attn, "block: differential attention has no key/value-cached form (generate without the cache)");
  return forward_with(x, [&](const Var& a) { return attn->forward_cached(a, cache, past); });
}

Var Block::forward_with(const Var& x, const std::function<Var(const Var&)>& attention) const {
  if (probe) probe->record(config.layer - 1, "resid", x.value());
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
    // report what the approximation would have used, for comparison
    if (report_site2_ && probe && probe->wants_detail()) probe_site2_variances(x.value(), h.value());
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
  BHyTSite2 s = bhyt_site2_approximation(site1, site2, x, h, c_attn(x.shape()[1], frobenius2_for_forward()));
  Var y = s.y;
  if (out_scale != 1.0f) y = ag::mul_scalar(y, out_scale);
  if (probe && probe->wants_detail()) {
    const int64_t l = config.layer - 1;
    probe->record(l, "ln2", y.value());
    probe->record(l, "ln2.bounded_arg", site2.pre_tanh_with_denom(h.value(), s.denom.value()));
    probe->record(l, "site2_var_approx", s.var_approx);
    probe->record(l, "site2_var_exact", site2.spread2(Var(h.value()), false).value());
  }
  return y;
}

// What the approximation would use in an exact block, beside the exact variance.
void Block::probe_site2_variances(const Tensor& x, const Tensor& h) const {
  const auto& site1 = static_cast<const BHyT&>(*ln1);
  const float lambda1 = site1.lambda.value().item();
  const float added = c_attn(x.shape()[1], attn->value_output_frobenius2()) * lambda1 * lambda1 /
                      (site1.kappa * site1.kappa);
  probe->record(config.layer - 1, "site2_var_approx", add_scalar(site1.spread2(Var(x), false).value(), added));
  probe->record(config.layer - 1, "site2_var_exact", static_cast<const BHyT&>(*ln2).spread2(Var(h), false).value());
}

}  // namespace nl
