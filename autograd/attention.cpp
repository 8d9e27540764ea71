// Fused attention as one recorded op: the value and the gradients come from the kernel
// pair of tensor/cpu/attention.cpp. The node saves q, k, v (views, no copies), the
// output and one log-sum-exp per query row; never the (T, S) probabilities, which the
// backward recomputes tile by tile.
#include "autograd/ops.h"

namespace nl::ag {

// out = softmax(scale q k^T, the future masked when causal) v, per (batch, head).
// With P that softmax and g = dL/dout (derivation above attention_backward):
//   dv = P^T g,   dS = P * (g v^T - rowsum(g * out)),   dq = scale dS k,   dk = scale dS^T q
Var attention(const Var& q, const Var& k, const Var& v, float scale, bool causal) {
  AttentionForward f = attention_forward(q.value(), k.value(), v.value(), scale, causal);
  const Tensor qv = q.value(), kv = k.value(), vv = v.value(), out = f.out, lse = f.lse;
  return record("attention", f.out, {q, k, v}, [qv, kv, vv, out, lse, scale, causal](const Tensor& g) {
    AttentionGrads d = attention_backward(g, qv, kv, vv, out, lse, scale, causal);
    return std::vector<Tensor>{d.dq, d.dk, d.dv};
  });
}

namespace {

// part 0, 1, 2 (q, k, v) of a (B, T, 3C) tensor as (B, H, T, hd) views
Tensor head_view(const Tensor& qkv, int part, int64_t heads) {
  const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3;
  return qkv.slice(2, part * C, (part + 1) * C).reshape({B, T, heads, C / heads}).permute({0, 2, 1, 3});
}

}  // namespace

// attention on the head views of qkv, merged back to (B, T, C); dqkv = [dq | dk | dv]
// in the layout of qkv. The kernels write both in place through head views: the output
// into the merged (B, T, C) tensor, the gradients into dqkv, so neither is copied.
Var attention_qkv(const Var& qkv, int64_t heads, float scale, bool causal) {
  const Tensor x = qkv.value();
  NL_CHECK(x.dim() == 3 && heads > 0 && x.size(2) % (3 * heads) == 0, "attention_qkv: qkv must be (B, T, 3 H hd)",
           " with H = ", heads, ", got ", describe(x));
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2) / 3;
  const Tensor merged = Tensor::empty({B, T, C}, DType::F32, x.device());
  const Tensor merged_heads = merged.reshape({B, T, heads, C / heads}).permute({0, 2, 1, 3});
  AttentionForward f = attention_forward(head_view(x, 0, heads), head_view(x, 1, heads), head_view(x, 2, heads),
                                         scale, causal, merged_heads);
  const Tensor out = f.out, lse = f.lse;  // out: merged's head view
  return record("attention_qkv", merged, {qkv}, [x, out, lse, heads, scale, causal](const Tensor& g) {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2) / 3;
    // g (B, T, C) read as (B, H, T, hd) in place: the kernel takes strided head views
    const Tensor dout = g.reshape({B, T, heads, C / heads}).permute({0, 2, 1, 3});
    Tensor dqkv = Tensor::empty(x.shape(), DType::F32, x.device());
    attention_backward(dout, head_view(x, 0, heads), head_view(x, 1, heads), head_view(x, 2, heads), out, lse, scale,
                       causal, {head_view(dqkv, 0, heads), head_view(dqkv, 1, heads), head_view(dqkv, 2, heads)});
    return std::vector<Tensor>{dqkv};
  });
}

}  // namespace nl::ag
