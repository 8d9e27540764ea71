// A linear layer in one recorded op: y = act(x W^T + b) or r + x W^T + b, x (M, K),
// W (N, K), b (N) or none, r (M, N) a residual stream added after the projection.
// With pre = x W^T + b:
//   dpre = dy * gelu'(pre)  (dy itself without the GELU),  db = sum over the rows of dpre,
//   dx = dpre W,  dW = dpre^T x,  dr = dy.
// The forward applies b and the GELU (or r) to each output tile after its sgemm, and the
// backward takes gelu' and db in one pass (tensor/cpu/linear.cpp); the two products are
// the ones ag::matmul's backward runs for matmul(x, W, false, true), so the op gives the
// bits of add(matmul(x, W^T), b) and gelu of it (or add(r, it)), with two elementwise
// passes fewer each way.
#include "autograd/ops.h"

namespace nl::ag {

Var linear(const Var& x, const Var& w, const Var& b, Activation act, const Var& residual) {
  const bool has_bias = b.defined(), gelu = act == Activation::Gelu, has_residual = residual.defined();
  if (!has_bias && !gelu && !has_residual) return matmul(x, w, false, true);
  const Tensor xv = x.value(), wv = w.value();
  LinearForward f = linear_forward(xv, wv, has_bias ? b.value() : Tensor(), act,
                                   has_residual ? residual.value() : Tensor());
  const bool gx = x.requires_grad(), gw = w.requires_grad(), gb = b.requires_grad();
  const Tensor pre = gelu ? f.pre : Tensor();  // only GELU's derivative reads it
  std::vector<Var> inputs{x, w};
  if (has_bias) inputs.push_back(b);
  if (has_residual) inputs.push_back(residual);
  Var out = record("linear", f.out, inputs, [xv, wv, pre, act, gx, gw, gb, has_bias, has_residual](const Tensor& g) {
    LinearEpilogueGrads e = linear_epilogue_backward(pre, g, act, gb);
    std::vector<Tensor> grads{gx ? nl::matmul(e.dpre, wv, false, false) : Tensor(),
                              gw ? nl::matmul(e.dpre, xv, true, false) : Tensor()};
    if (has_bias) grads.push_back(e.db);
    if (has_residual) grads.push_back(g);
    return grads;
  });
  // graph walks (the folding detector) read whether it has a bias, a GELU and a residual
  if (out.node()) out.node()->attrs = {(float)has_bias, (float)gelu, (float)has_residual};
  return out;
}

}  // namespace nl::ag
