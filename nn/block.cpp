#include "nn/block.h"

#include <cmath>

#include "autograd/ops.h"

namespace nl {

Block::Block(int64_t dim, int64_t heads, bool causal, const NormConfig& norm_, int layers, Generator& gen,
             float dropout_, Generator* dropout_gen_)
    : norm(norm_), dropout(dropout_), dropout_gen(dropout_gen_) {
  NL_CHECK(dropout >= 0.0f && dropout < 1.0f, "block: dropout must lie in [0, 1), got ", dropout);
  NL_CHECK(dropout == 0.0f || dropout_gen, "block: dropout ", dropout, " needs a generator for its masks");
  // GPT-2: the projections that write into the residual stream start smaller, by
  // 1/sqrt(2L), so the stream's variance does not grow with depth at initialisation.
  const float proj_std = 0.02f / std::sqrt(2.0f * (float)layers);
  const bool cbwc = norm.name == "cbwc";
  ln1 = register_module("ln1", make_norm(norm, dim));
  attn = register_module("attn", std::make_shared<SelfAttention>(dim, heads, causal, gen, proj_std, cbwc));
  ln2 = register_module("ln2", make_norm(norm, dim));
  mlp = register_module("mlp", std::make_shared<MLP>(dim, gen, proj_std, cbwc));
}

Var Block::residual(const Var& x, const Var& branch) const {
  if (dropout == 0.0f) return ag::add(x, branch);
  return ag::add(x, ag::dropout(branch, dropout, training(), *dropout_gen));
}

Var Block::forward(const Var& x) const {
  Var h = residual(x, attn->forward(ln1->forward(x)));
  if (norm.name != "bhyt") return residual(h, mlp->forward(ln2->forward(h)));

  const auto& site1 = static_cast<const BHyT&>(*ln1);
  const auto& site2 = static_cast<const BHyT&>(*ln2);
  const float kappa = site1.kappa, T = (float)x.shape()[1], d = (float)x.shape()[2];
  const float c_attn = attn->value_output_frobenius2() / (T * d);
  const float lambda1 = site1.lambda.value().item();
  Var mu1 = ag::mean(x, {-1}, true);
  Var var1 = ag::var(x, {-1}, true, 0);
  Var spread = ag::sqrt(ag::add_scalar(var1, c_attn * lambda1 * lambda1 / (kappa * kappa) + site1.eps));
  Var denom = ag::add(ag::mul_scalar(spread, kappa), ag::abs(mu1));          // (B, T, 1)
  denom = ag::reshape(denom, {x.shape()[0], x.shape()[1]});
  return residual(h, mlp->forward(site2.forward_with_denom(h, denom)));
}

}  // namespace nl
