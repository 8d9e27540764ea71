// Softmax and log-softmax over the last axis, one row at a time; the row maximum is
// subtracted first so exp never overflows. A row that is entirely -inf gives NaN, as in
// PyTorch; the causal mask always leaves the diagonal, so it never masks a whole row.
#include <cmath>
#include <limits>

#include "tensor/cpu/check.h"
#include "tensor/cpu/fast_math.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"
#include "tensor/threads.h"

namespace nl {
namespace {

template <bool kLog>
Tensor softmax_rows(const char* op, const Tensor& x) {
  check_cpu_f32(op, x);
  NL_CHECK(x.dim() >= 1, op, ": needs at least one axis, got ", describe(x));
  Tensor c = x.contiguous();
  Tensor out = Tensor::empty(x.shape());
  const int64_t C = x.shape().back(), rows = C ? x.numel() / C : 0;
  const float* in = c.data();
  float* o = out.data();
#pragma omp parallel for if (x.numel() > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = in + r * C;
    float* yr = o + r * C;
    // an explicit SIMD max: written as a plain loop the compiler keeps it scalar (a
    // serial compare chain, which alone took most of the kernel's time)
    float m = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < C; ++j) m = xr[j] > m ? xr[j] : m;
    // exp written out and summed with a SIMD reduction: std::exp per element kept this
    // loop arithmetic-bound at a tenth of memory speed (docs/benchmarks.md)
    float s = 0;
    if (kLog) {
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < C; ++j) s += fast::exp(xr[j] - m);
    } else {
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < C; ++j) {
        const float e = fast::exp(xr[j] - m);
        yr[j] = e;
        s += e;
      }
    }
    if (kLog) {
      float lse = m + std::log(s);
      for (int64_t j = 0; j < C; ++j) yr[j] = xr[j] - lse;
    } else {
      float inv = 1.0f / s;
      for (int64_t j = 0; j < C; ++j) yr[j] *= inv;
    }
  }
  return out;
}

// Shared shape of the two backward passes: per row a dot or sum, then a map.
template <typename RowFn>
Tensor softmax_backward_rows(const char* op, const Tensor& y, const Tensor& dy, RowFn fn) {
  check_cpu_f32(op, y);
  check_cpu_f32(op, dy);
  NL_CHECK(y.shape() == dy.shape(), op, ": output ", describe(y), " and gradient ", describe(dy), " differ");
  Tensor yc = y.contiguous(), gc = dy.contiguous();
  Tensor dx = Tensor::empty(y.shape());
  const int64_t C = y.shape().back(), rows = C ? y.numel() / C : 0;
#pragma omp parallel for if (y.numel() > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) fn(yc.data() + r * C, gc.data() + r * C, dx.data() + r * C, C);
  return dx;
}

}  // namespace

Tensor softmax(const Tensor& x) {
  if (on_cuda("softmax", {&x})) return cuda::softmax(x);
  return softmax_rows<false>("softmax", x);
}
Tensor log_softmax(const Tensor& x) {
  if (on_cuda("log_softmax", {&x})) return cuda::log_softmax(x);
  return softmax_rows<true>("log_softmax", x);
}

// y = softmax(x):  dx_j = y_j (dy_j - sum_k dy_k y_k)
Tensor softmax_backward(const Tensor& y, const Tensor& dy) {
  if (on_cuda("softmax_backward", {&y, &dy})) return cuda::softmax_backward(y, dy);
  return softmax_backward_rows("softmax_backward", y, dy, [](const float* yr, const float* g, float* d, int64_t C) {
    float dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int64_t j = 0; j < C; ++j) dot += g[j] * yr[j];
    for (int64_t j = 0; j < C; ++j) d[j] = yr[j] * (g[j] - dot);
  });
}

// y = log_softmax(x):  dx_j = dy_j - exp(y_j) sum_k dy_k
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy) {
  if (on_cuda("log_softmax_backward", {&y, &dy})) return cuda::log_softmax_backward(y, dy);
  return softmax_backward_rows("log_softmax_backward", y, dy,
                               [](const float* yr, const float* g, float* d, int64_t C) {
                                 float s = 0;
#pragma omp simd reduction(+ : s)
                                 for (int64_t j = 0; j < C; ++j) s += g[j];
#pragma omp simd
                                 for (int64_t j = 0; j < C; ++j) d[j] = g[j] - fast::exp(yr[j]) * s;
                               });
}

}  // namespace nl
