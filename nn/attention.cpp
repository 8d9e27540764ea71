#include "nn/attention.h"

#include <cmath>

#include "autograd/ops.h"
#include "autograd/profile.h"

namespace nl {

SelfAttention::SelfAttention(int64_t dim_, int64_t heads_, bool causal_, Generator& gen, float proj_std,
                             bool centred_proj, bool bias, bool rope_)
    : dim(dim_), heads(heads_), causal(causal_), rope(rope_) {
  NL_CHECK(heads > 0 && dim % heads == 0, "attention: dim ", dim, " is not divisible by heads ", heads);
  NL_CHECK(!rope || (dim / heads) % 2 == 0, "attention: rotary embeddings need an even head dimension, got ",
           dim / heads);
  qkv = register_module("qkv", std::make_shared<Linear>(dim, 3 * dim, bias, gen));
  proj = register_module("proj", std::make_shared<Linear>(dim, dim, bias, gen, proj_std, centred_proj));
}

Var SelfAttention::forward(const Var& x, const Var& residual) const {
  NL_CHECK(x.dim() == 3 && x.shape()[2] == dim, "attention: input must be (B, T, ", dim, "), got ",
           describe(x.value()));
  const int64_t hd = dim / heads;
  Var qkv_out = qkv->forward(x);  // (B, T, 3C)
  // q and k rotated before the fused core, which never sees positions; v as it is
  if (rope) qkv_out = ag::rope(qkv_out, hd, 2 * dim, 0, kRopeBase);
  Var y;
  {
    profile::Scope core("attention core");  // head views, the fused attention, merging the heads
    // the fused op reads the strided head views of qkv in place, keeps no (T, T) tensor,
    // and returns (B, T, C) with the heads merged
    y = ag::attention_qkv(qkv_out, heads, 1.0f / std::sqrt((float)hd), causal);
  }
  return proj->forward(y, Activation::None, residual);
}

Var SelfAttention::forward_cached(const Var& x, KVCacheLayer& cache, int64_t past) const {
  NL_CHECK(causal, "attention: a key/value cache needs causal attention");
  NL_CHECK(!grad_enabled(), "attention: the key/value cache is for inference; call it under NoGradGuard");
  NL_CHECK(x.dim() == 3 && x.shape()[2] == dim, "attention: input must be (B, T, ", dim, "), got ",
           describe(x.value()));
  const int64_t B = x.shape()[0], Tn = x.shape()[1], hd = dim / heads, S = past + Tn;
  NL_CHECK(cache.k.defined() && cache.k.shape()[0] == B && cache.k.shape()[1] == heads && cache.k.shape()[3] == hd &&
               S <= cache.k.shape()[2],
           "attention: the cache ", cache.k.defined() ? describe(cache.k) : std::string("(empty)"), " cannot hold ",
           S, " positions of batch ", B);
  Tensor qkv_out = qkv->forward(x).value();  // (B, Tn, 3C)
  if (rope) qkv_out = rope_forward(qkv_out, hd, 2 * dim, past, kRopeBase);  // at their positions past ..
  auto head_view = [&](int part) {
    return qkv_out.slice(2, part * dim, (part + 1) * dim).reshape({B, Tn, heads, hd}).permute({0, 2, 1, 3});
  };
  cache.k.slice(2, past, S).copy_from(head_view(1));
  cache.v.slice(2, past, S).copy_from(head_view(2));
  // the Tn new queries against all S cached keys: query i sits at position past + i and
  // sees keys 0 .. past + i, the fused kernel's causal mask for S > Tn
  const Tensor y = attention_forward(head_view(0), cache.k.slice(2, 0, S), cache.v.slice(2, 0, S),
                                     1.0f / std::sqrt((float)hd), true)
                       .out;  // (B, H, Tn, hd)
  return proj->forward(Var(y.permute({0, 2, 1, 3}).reshape({B, Tn, dim})));
}

float SelfAttention::value_output_frobenius2() const {
  // rows [2C, 3C) of the qkv weight are W_v (out, in); in the x W convention
  // W_V W_O = Wv^T Wo^T = (Wo Wv)^T, whose Frobenius norm equals that of Wo Wv.
  Tensor wv = qkv->effective_weight().value().slice(0, 2 * dim, 3 * dim);
  Tensor wo = proj->effective_weight().value();
  Tensor prod = matmul(wo, wv);
  double s = 0;
  for (float v : prod.to_vector()) s += (double)v * v;
  return (float)s;
}

const std::vector<std::string>& mlp_names() {
  static const std::vector<std::string> names = {"gelu", "swiglu"};
  return names;
}

void check_mlp_name(const std::string& name) {
  for (const auto& n : mlp_names())
    if (n == name) return;
  fail("unknown MLP kind '", name, "' (choose one of: gelu, swiglu)");
}

MLP::MLP(int64_t dim, Generator& gen, float proj_std, bool centred_proj, const std::string& kind_, bool bias)
    : kind(kind_) {
  check_mlp_name(kind);
  const bool gated = kind == "swiglu";
  hidden = gated ? (8 * dim + 1) / 3 : 4 * dim;
  fc = register_module("fc", std::make_shared<Linear>(dim, gated ? 2 * hidden : hidden, bias, gen));
  proj = register_module("proj", std::make_shared<Linear>(hidden, dim, bias, gen, proj_std, centred_proj));
}

// swiglu: y = proj(silu(g) * u), [g, u] = fc(x); the gradients reach g through
// silu'(g) = s(g) (1 + g (1 - s(g))) times u, and u through silu(g) (autograd/elementwise.cpp).
Var MLP::forward(const Var& x, const Var& residual) const {
  if (kind == "gelu")  // bias + GELU fused into fc
    return proj->forward(fc->forward(x, Activation::Gelu), Activation::None, residual);
  Var a = fc->forward(x);
  const int64_t axis = a.dim() - 1;
  Var gate = ag::slice(a, axis, 0, hidden), up = ag::slice(a, axis, hidden, 2 * hidden);
  return proj->forward(ag::mul(ag::silu(gate), up), Activation::None, residual);
}

}  // namespace nl
