// Reductions. Their backward spreads the output gradient back over the reduced axes:
// the gradient is reshaped with 1s where axes were reduced and broadcast against x.
#include "autograd/ops.h"

namespace nl::ag {
namespace {

// x's shape with the reduced axes set to 1 (what keepdim=true gives); all axes when empty.
Shape kept_shape(const Shape& x, const std::vector<int64_t>& axes, const char* op) {
  Shape s = x;
  if (axes.empty()) s.assign(x.size(), 1);
  for (int64_t a : axes) s[normalize_axis(a, (int)x.size(), op)] = 1;
  return s;
}

// The output gradient broadcast back to the input's shape, contiguous.
Tensor spread(const Tensor& g, const Shape& kept, const Shape& full) {
  return g.reshape(kept).expand(full).contiguous();
}

}  // namespace

// d(sum x)/dx_i = 1
Var sum(const Var& x, const std::vector<int64_t>& axes, bool keepdim) {
  Shape full = x.shape(), kept = kept_shape(full, axes, "sum");
  return record("sum", nl::sum(x.value(), axes, keepdim), {x}, [full, kept](const Tensor& g) {
    return std::vector<Tensor>{spread(g, kept, full)};
  });
}

// d(mean x)/dx_i = 1/n
Var mean(const Var& x, const std::vector<int64_t>& axes, bool keepdim) {
  Shape full = x.shape(), kept = kept_shape(full, axes, "mean");
  const float n = (float)(numel_of(full) / std::max<int64_t>(numel_of(kept), 1));
  return record("mean", nl::mean(x.value(), axes, keepdim), {x}, [full, kept, n](const Tensor& g) {
    return std::vector<Tensor>{nl::mul_scalar(spread(g, kept, full), 1.0f / n)};
  });
}

// d(max x)/dx_i = [x_i == max] / (number of elements equal to the max): ties share
// the gradient equally, as PyTorch's amax does.
Var max(const Var& x, const std::vector<int64_t>& axes, bool keepdim) {
  Tensor xv = x.value();
  Tensor y = nl::max(xv, axes, keepdim);
  Shape full = x.shape(), kept = kept_shape(full, axes, "max");
  std::vector<int64_t> ax = axes;
  return record("max", y, {x}, [xv, y, full, kept, ax](const Tensor& g) {
    Tensor mask = equal_mask(xv, y.reshape(kept));
    Tensor count = nl::sum(mask, ax, true);
    return std::vector<Tensor>{nl::mul(mask, nl::div(g.reshape(kept), count))};
  });
}

// d var / dx_i = 2 (x_i - mean) / (n - correction)
Var var(const Var& x, const std::vector<int64_t>& axes, bool keepdim, int correction) {
  Tensor xv = x.value();
  Shape full = x.shape(), kept = kept_shape(full, axes, "var");
  const int64_t n = numel_of(full) / std::max<int64_t>(numel_of(kept), 1);
  std::vector<int64_t> ax = axes;
  return record("var", nl::var(xv, axes, keepdim, correction), {x}, [xv, kept, ax, n, correction](const Tensor& g) {
    Tensor centred = nl::sub(xv, nl::mean(xv, ax, true));
    float scale = 2.0f / (float)(n - correction);
    return std::vector<Tensor>{nl::mul(centred, nl::mul_scalar(g.reshape(kept), scale))};
  });
}

}  // namespace nl::ag
