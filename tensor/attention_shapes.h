// The shape checks of fused attention (attention_forward / attention_backward in
// tensor/ops.h), shared by the CPU and CUDA kernels; each backend checks devices and
// dtypes itself, first.
#pragma once
#include "tensor/tensor.h"

namespace nl {

struct AttentionShape {
  int64_t B, H, T, S, hd;  // q (B, H, T, hd), k and v (B, H, S, hd)
};

inline AttentionShape check_attention_shapes(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                                             bool causal) {
  for (const auto& [t, name] : {std::pair<const Tensor&, const char*>{q, "q"}, {k, "k"}, {v, "v"}})
    NL_CHECK(t.dim() == 4, op, ": ", name, " must be (B, H, rows, hd), got ", describe(t));
  const AttentionShape s{q.size(0), q.size(1), q.size(2), k.size(2), q.size(3)};
  NL_CHECK(k.shape() == v.shape() && k.size(0) == s.B && k.size(1) == s.H && k.size(3) == s.hd, op,
           ": q (B, H, T, hd), k and v (B, H, S, hd) do not match: q ", describe(q), ", k ", describe(k), ", v ",
           describe(v));
  NL_CHECK(s.hd > 0, op, ": the head dim is empty: q ", describe(q));
  NL_CHECK(s.T == 0 || s.S > 0, op, ": ", s.T, " queries but no keys: k ", describe(k));
  NL_CHECK(!causal || s.S >= s.T, op, ": causal attention needs at least as many keys as queries, got q ",
           describe(q), " and k ", describe(k));
  return s;
}

// dout and out of q's shape, lse (B, H, T)
inline void check_attention_grad_shapes(const char* op, const AttentionShape& s, const Tensor& q, const Tensor& dout,
                                        const Tensor& out, const Tensor& lse) {
  NL_CHECK(dout.shape() == q.shape() && out.shape() == q.shape(), op, ": dout ", describe(dout), " and out ",
           describe(out), " must have q's shape ", describe(q));
  NL_CHECK(lse.shape() == Shape({s.B, s.H, s.T}), op, ": lse ", describe(lse), " must be (B, H, T) of q ",
           describe(q));
}

}  // namespace nl
