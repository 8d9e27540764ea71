// Cross-entropy over integer targets, one fused node: the forward keeps only the
// per-row log-sum-exp, the backward rebuilds the softmax from it.
#include "autograd/ops.h"

namespace nl::ag {

// loss = mean_r (lse_r - z[r, t_r]):  dz[r, j] = (softmax(z_r)_j - [j == t_r]) / kept * dloss
Var cross_entropy(const Var& logits, const Tensor& targets, int ignore_index) {
  Tensor lse;
  Tensor z = logits.value();
  Tensor loss = cross_entropy_forward(z, targets, ignore_index, lse);
  return record("cross_entropy", loss, {logits}, [z, targets, lse, ignore_index](const Tensor& g) {
    return std::vector<Tensor>{cross_entropy_backward(z, targets, lse, g.item(), ignore_index)};
  });
}

}  // namespace nl::ag
