#include "nn/diff_attention.h"

#include <cmath>

#include "autograd/ops.h"
#include "tensor/error.h"

namespace nl {

float diff_lambda_init(int64_t layer) { return 0.8f - 0.6f * std::exp(-0.3f * (float)(layer - 1)); }

DiffAttention::DiffAttention(int64_t dim_, int64_t heads_, bool causal_, int64_t layer, Generator& gen,
                             float proj_std, bool centred_proj)
    : dim(dim_), heads(heads_), causal(causal_), lambda_init(diff_lambda_init(layer)) {
  NL_CHECK(heads > 0 && dim % (2 * heads) == 0, "differential attention: dim ", dim,
           " is not divisible by 2 x heads = ", 2 * heads);
  head_dim = dim / (2 * heads);
  qkv = register_module("qkv", std::make_shared<Linear>(dim, 3 * dim, true, gen));
  proj = register_module("proj", std::make_shared<Linear>(dim, dim, true, gen, proj_std, centred_proj));
  lambda_q1 = register_parameter("lambda_q1", gen.normal({head_dim}, 0.0f, 0.1f));
  lambda_k1 = register_parameter("lambda_k1", gen.normal({head_dim}, 0.0f, 0.1f));
  lambda_q2 = register_parameter("lambda_q2", gen.normal({head_dim}, 0.0f, 0.1f));
  lambda_k2 = register_parameter("lambda_k2", gen.normal({head_dim}, 0.0f, 0.1f));
}

Var DiffAttention::lambda() const {
  Var l1 = ag::exp(ag::sum(ag::mul(lambda_q1, lambda_k1)));
  Var l2 = ag::exp(ag::sum(ag::mul(lambda_q2, lambda_k2)));
  return ag::add_scalar(ag::sub(l1, l2), lambda_init);
}

Var DiffAttention::forward(const Var& x) const {
  NL_CHECK(x.dim() == 3 && x.shape()[2] == dim, "differential attention: input must be (B, T, ", dim, "), got ",
           describe(x.value()));
  const int64_t B = x.shape()[0], T = x.shape()[1], H = heads, hd = head_dim;
  Var qkv_out = qkv->forward(x);  // (B, T, 3C)
  // q and k as (B, T, H, 2, hd): head h's pair i is the sub-head 2h + i of width hd, as the
  // reference code views them; v as (B, T, H, 2, hd): head h's value of width 2 hd in two halves
  auto part = [&](int which, int64_t i) {
    Var p = ag::reshape(ag::slice(qkv_out, 2, which * dim, (which + 1) * dim), {B, T, H, 2, hd});
    return ag::permute(ag::squeeze(ag::slice(p, 3, i, i + 1), 3), {0, 2, 1, 3});  // (B, H, T, hd)
  };
  const float scale = 1.0f / std::sqrt((float)hd);
  const Var q1 = part(0, 0), q2 = part(0, 1), k1 = part(1, 0), k2 = part(1, 1);
  const Var lam = lambda();
  std::vector<Var> halves;
  for (int64_t j = 0; j < 2; ++j) {
    const Var v = part(2, j);
    halves.push_back(
        ag::sub(ag::attention(q1, k1, v, scale, causal), ag::mul(ag::attention(q2, k2, v, scale, causal), lam)));
  }
  Var y = ag::concat(halves, 3);  // (B, H, T, 2 hd)
  // per-head RMSNorm without affine over the head's 2 hd, times (1 - lambda_init)
  Var ms = ag::mean(ag::mul(y, y), {3}, true);
  y = ag::mul_scalar(ag::mul(y, ag::rsqrt(ag::add_scalar(ms, 1e-5f))), 1.0f - lambda_init);
  y = ag::reshape(ag::permute(y, {0, 2, 1, 3}), {B, T, dim});  // (B, H, T, 2 hd) -> (B, T, C)
  return proj->forward(y);
}

}  // namespace nl
