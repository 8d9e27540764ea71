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
#include "tensor/cpu/column_sums.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"
#include "tensor/reduce_plan.h"
#include "tensor/threads.h"

namespace nl {
namespace {

// out[i] = row_value(row i of x's reduced axes laid out last, inner): every reduction
// below is one function of a row.
template <class RowValue>
Tensor each_row(const Tensor& x, const ReducePlan& p, RowValue row_value) {
  Tensor r = rows_layout(x, p);
  Tensor out = Tensor::empty(p.out_shape);
  const float* in = r.data();
  float* o = out.data();
#pragma omp parallel for if (x.numel() > kParallelGrain)
  for (int64_t i = 0; i < p.rows; ++i) o[i] = row_value(in + i * p.inner, p.inner);
  return out;
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  if (on_cuda("sum", {&x})) return cuda::sum(x, axes, keepdim);
  check_cpu_f32("sum", x);
  ReducePlan p = plan_reduce("sum", x, axes, keepdim);
  if (p.leading_only && x.is_contiguous() && p.rows > 1) {
    Tensor out = Tensor::empty(p.out_shape);
    float* o = out.data();
    // out[j] = sum_i x[i, j]: stream the rows, accumulating columns in double
    const float* in = x.data();
    const int64_t cols = p.rows, n_rows = p.inner;
    cpu::for_column_blocks(cols, x.numel() > kParallelGrain, [&](int64_t j0, int64_t j1, double* acc) {
      for (int64_t i = 0; i < n_rows; ++i)
        for (int64_t j = j0; j < j1; ++j) acc[j - j0] += in[i * cols + j];
      for (int64_t j = j0; j < j1; ++j) o[j] = (float)acc[j - j0];
    });
    return out;
  }
  return each_row(x, p, [](const float* row, int64_t n) {
    double acc = 0;
    for (int64_t j = 0; j < n; ++j) acc += row[j];
    return (float)acc;
  });
}

namespace {

// The plan of a reduction that has no value over an empty group (mean, max), which it refuses.
ReducePlan plan_nonempty(const char* op, const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  check_cpu_f32(op, x);
  ReducePlan p = plan_reduce(op, x, axes, keepdim);
  NL_CHECK(p.inner > 0, op, ": reducing ", describe(x), " over an empty axis");
  return p;
}

}  // namespace

Tensor mean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  if (on_cuda("mean", {&x})) return cuda::mean(x, axes, keepdim);
  const ReducePlan p = plan_nonempty("mean", x, axes, keepdim);
  Tensor s = sum(x, axes, keepdim);
  float* o = s.data();
  for (int64_t i = 0; i < s.numel(); ++i) o[i] = (float)((double)o[i] / (double)p.inner);
  return s;
}

Tensor max(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  if (on_cuda("max", {&x})) return cuda::max(x, axes, keepdim);
  const ReducePlan p = plan_nonempty("max", x, axes, keepdim);
  return each_row(x, p, [](const float* row, int64_t n) {
    float m = -std::numeric_limits<float>::infinity();
    bool nan = false;
    for (int64_t j = 0; j < n; ++j) {
      nan |= std::isnan(row[j]);
      m = row[j] > m ? row[j] : m;
    }
    return nan ? std::numeric_limits<float>::quiet_NaN() : m;  // NaN propagates, as in PyTorch
  });
}

// var = sum (x - mean)^2 / (n - correction), two passes per row in double
Tensor var(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim, int correction) {
  if (on_cuda("var", {&x})) return cuda::var(x, axes, keepdim, correction);
  check_cpu_f32("var", x);
  ReducePlan p = plan_reduce("var", x, axes, keepdim);
  NL_CHECK(p.inner - correction > 0, "var: ", p.inner, " elements per group are too few for correction ",
           correction, " (", describe(x), ")");
  return each_row(x, p, [correction](const float* row, int64_t n) {
    double m = 0;
    for (int64_t j = 0; j < n; ++j) m += row[j];
    m /= (double)n;
    double ss = 0;
    for (int64_t j = 0; j < n; ++j) ss += (row[j] - m) * (row[j] - m);
    return (float)(ss / (double)(n - correction));
  });
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
