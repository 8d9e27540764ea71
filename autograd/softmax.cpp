// Softmax and log-softmax over the last axis; the backward uses the saved output.
#include "autograd/ops.h"

namespace nl::ag {

// y = softmax(x):  dx = y * (dy - sum(dy * y))
Var softmax(const Var& x) {
  Tensor y = nl::softmax(x.value());
  return record("softmax", y, {x}, [y](const Tensor& g) { return std::vector<Tensor>{softmax_backward(y, g)}; });
}

// y = log_softmax(x):  dx = dy - softmax(x) * sum(dy)
Var log_softmax(const Var& x) {
  Tensor y = nl::log_softmax(x.value());
  return record("log_softmax", y, {x}, [y](const Tensor& g) {
    return std::vector<Tensor>{log_softmax_backward(y, g)};
  });
}

}  // namespace nl::ag
