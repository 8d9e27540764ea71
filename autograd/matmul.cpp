// Matrix product. With C = op(A) op(B) (op a possible transpose):
//   dA = dC op(B)^T  (transposed back if A was used transposed)
//   dB = op(A)^T dC  (likewise)
// Both are again sgemm calls on views, no copies; broadcast batch dims are summed out.
#include "autograd/ops.h"

namespace nl::ag {

Var matmul(const Var& a, const Var& b, bool trans_a, bool trans_b) {
  Tensor av = a.value(), bv = b.value();
  bool ga = a.requires_grad(), gb = b.requires_grad();
  Var out = record("matmul", nl::matmul(av, bv, trans_a, trans_b), {a, b},
                [av, bv, trans_a, trans_b, ga, gb](const Tensor& g) {
                  Tensor da, db;
                  if (ga) {
                    // A used as is: dA = g op(B)^T;  used transposed: dA = (g op(B)^T)^T = op(B) g^T
                    da = trans_a ? nl::matmul(bv, g, trans_b, true) : nl::matmul(g, bv, false, !trans_b);
                    da = sum_to(da, av.shape());
                  }
                  if (gb) {
                    // B used as is: dB = op(A)^T g;  used transposed: dB = g^T op(A)
                    db = trans_b ? nl::matmul(g, av, true, trans_a) : nl::matmul(av, g, !trans_a, false);
                    db = sum_to(db, bv.shape());
                  }
                  return std::vector<Tensor>{da, db};
                });
  // graph walks (the folding detector) read which operand was used transposed
  if (out.node()) out.node()->attrs = {(float)trans_a, (float)trans_b};
  return out;
}

}  // namespace nl::ag
