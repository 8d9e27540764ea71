// Softmax and log-softmax over the last axis; the backward uses the saved output.
#include <cmath>

#include "autograd/ops.h"

namespace nl::ag {

// y = softmax(x):  dx = y * (dy - sum(dy * y))
Var softmax(const Var& x) {
  Tensor y = nl::softmax(x.value());
  return record("softmax", y, {x}, [y](const Tensor& g) { return std::vector<Tensor>{softmax_backward(y, g)}; });
}

// Attention's probabilities in one recorded op: y = softmax(scale * x), the future
// masked out when causal (columns j > i + S - T of each (T, S) block get probability 0).
// Only y is saved: as three ops (scale, mask, softmax) the graph kept the scaled and the
// masked (T, S) scores alive too, the largest tensors of a training step.
//   dx = scale * y * (dy - sum(dy * y))   (0 where masked, since y is 0 there)
Var attention_softmax(const Var& scores, float scale, bool causal) {
  Tensor s = mul_scalar(scores.value(), scale);
  if (causal) s = causal_mask_fill(s, -INFINITY);
  Tensor y = nl::softmax(s);
  s = Tensor();
  return record("attention_softmax", y, {scores}, [y, scale](const Tensor& g) {
    return std::vector<Tensor>{mul_scalar(softmax_backward(y, g), scale)};
  });
}

// y = log_softmax(x):  dx = dy - softmax(x) * sum(dy)
Var log_softmax(const Var& x) {
  Tensor y = nl::log_softmax(x.value());
  return record("log_softmax", y, {x}, [y](const Tensor& g) {
    return std::vector<Tensor>{log_softmax_backward(y, g)};
  });
}

}  // namespace nl::ag
