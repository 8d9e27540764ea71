// Reductions over any set of axes. The reduced axes are moved last (a copy only when
// the tensor is not already laid out that way), so every reduction becomes one loop
// over rows of `inner` elements. Sums over leading axes of a contiguous tensor (bias
// gradients) skip the copy and add rows into a column accumulator instead.
// Row sums accumulate in double: these are the generic reductions, not a hot path
// (the norms have fused kernels), and the tests compare them at 1e-4.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/cpu/check.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"
#include "tensor/reduce_plan.h"
#include "tensor/threads.h"

namespace nl {

Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  if (on_cuda("sum", {&x})) return cuda::sum(x, axes, keepdim);
  check_cpu_f32("sum", x);
  ReducePlan p = plan_reduce("sum", x, axes, keepdim);
  Tensor out = Tensor::empty(p.out_shape);
  float* o = out.data();
  if (p.leading_only && x.is_contiguous() && p.rows > 1) {
    // out[j] = sum_i x[i, j]: stream the rows, accumulating columns in double
    const float* in = x.data();
    const int64_t cols = p.rows, n_rows = p.inner;
    const int64_t block = 256;
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t j0 = 0; j0 < cols; j0 += block) {
      const int64_t j1 = std::min(cols, j0 + block);
      double acc[256] = {0};
      for (int64_t i = 0; i < n_rows; ++i)
        for (int64_t j = j0; j < j1; ++j) acc[j - j0] += in[i * cols + j];
      for (int64_t j = j0; j < j1; ++j) o[j] = (float)acc[j - j0];
    }
    return out;
  }
  Tensor r = rows_layout(x, p);
  const float* in = r.data();
#pragma omp parallel for if (x.numel() > kParallelGrain)
  for (int64_t i = 0; i < p.rows; ++i) {
    double acc = 0;
    for (int64_t j = 0; j < p.inner; ++j) acc += in[i * p.inner + j];
    o[i] = (float)acc;
  }
  return out;
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  if (on_cuda("mean", {&x})) return cuda::mean(x, axes, keepdim);
  check_cpu_f32("mean", x);
  ReducePlan p = plan_reduce("mean", x, axes, keepdim);
  NL_CHECK(p.inner > 0, "mean: reducing ", describe(x), " over an empty axis");
  Tensor s = sum(x, axes, keepdim);
  float* o = s.data();
  for (int64_t i = 0; i < s.numel(); ++i) o[i] = (float)((double)o[i] / (double)p.inner);
  return s;
}

Tensor max(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  if (on_cuda("max", {&x})) return cuda::max(x, axes, keepdim);
  check_cpu_f32("max", x);
  ReducePlan p = plan_reduce("max", x, axes, keepdim);
  NL_CHECK(p.inner > 0, "max: reducing ", describe(x), " over an empty axis");
  Tensor r = rows_layout(x, p);
  Tensor out = Tensor::empty(p.out_shape);
  const float* in = r.data();
  float* o = out.data();
#pragma omp parallel for if (x.numel() > kParallelGrain)
  for (int64_t i = 0; i < p.rows; ++i) {
    float m = -std::numeric_limits<float>::infinity();
    bool nan = false;
    for (int64_t j = 0; j < p.inner; ++j) {
      float v = in[i * p.inner + j];
      nan |= std::isnan(v);
      m = v > m ? v : m;
    }
    o[i] = nan ? std::numeric_limits<float>::quiet_NaN() : m;  // NaN propagates, as in PyTorch
  }
  return out;
}

// var = sum (x - mean)^2 / (n - correction), two passes per row in double
Tensor var(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim, int correction) {
  if (on_cuda("var", {&x})) return cuda::var(x, axes, keepdim, correction);
  check_cpu_f32("var", x);
  ReducePlan p = plan_reduce("var", x, axes, keepdim);
  NL_CHECK(p.inner - correction > 0, "var: ", p.inner, " elements per group are too few for correction ",
           correction, " (", describe(x), ")");
  Tensor r = rows_layout(x, p);
  Tensor out = Tensor::empty(p.out_shape);
  const float* in = r.data();
  float* o = out.data();
#pragma omp parallel for if (x.numel() > kParallelGrain)
  for (int64_t i = 0; i < p.rows; ++i) {
    const float* row = in + i * p.inner;
    double m = 0;
    for (int64_t j = 0; j < p.inner; ++j) m += row[j];
    m /= (double)p.inner;
    double ss = 0;
    for (int64_t j = 0; j < p.inner; ++j) ss += (row[j] - m) * (row[j] - m);
    o[i] = (float)(ss / (double)(p.inner - correction));
  }
  return out;
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  NL_CHECK(broadcast_shapes(shape, x.shape(), "sum_to") == x.shape(), "sum_to: cannot reduce ", describe(x),
           " to ", to_string(shape));
  const int lead = x.dim() - (int)shape.size();
  std::vector<int64_t> axes;
  for (int i = 0; i < x.dim(); ++i)
    if (i < lead || shape[i - lead] == 1) axes.push_back(i);
  if (axes.empty()) return x;
  return sum(x, axes, false).reshape(shape);
}

}  // namespace nl
