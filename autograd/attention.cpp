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

}  // namespace nl::ag
