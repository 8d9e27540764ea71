// Rotary position embeddings (RoPE, Su et al. 2021) on rows of heads: each head's
// channel pairs (2i, 2i+1) are rotated by an angle that grows with the position, so
// that the dot product of a rotated query and key depends on their positions only
// through their difference. Used on the q and k parts of the attention's qkv output
// (nn/attention.cpp), v left as it is.
#include <cmath>

#include "tensor/cpu/check.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"
#include "tensor/rope_tables.h"
#include "tensor/threads.h"

namespace nl {

RopeTables rope_tables(const char* op, const Tensor& x, int64_t head_dim, int64_t rotated, int64_t first_position,
                       float base, double sign) {
  NL_CHECK(x.defined() && x.dim() == 3, op, ": x must be (B, T, W), got ",
           x.defined() ? describe(x) : std::string("undefined"));
  NL_CHECK(x.is_contiguous(), op, ": x ", describe(x), " must be contiguous");
  NL_CHECK(head_dim > 0 && head_dim % 2 == 0, op, ": the head dimension must be even and positive, got ", head_dim);
  NL_CHECK(rotated >= 0 && rotated % head_dim == 0 && rotated <= x.size(2), op, ": the rotated width ", rotated,
           " must be a multiple of the head dimension ", head_dim, " within the row width ", x.size(2));
  NL_CHECK(first_position >= 0, op, ": the first position must be >= 0, got ", first_position);
  NL_CHECK(std::isfinite(base) && base > 1.0f, op, ": the base must be a number > 1, got ", base);
  const int64_t T = x.size(1), half = head_dim / 2;
  RopeTables tables{std::vector<float>((size_t)(T * half)), std::vector<float>((size_t)(T * half))};
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = (double)(first_position + t) * std::pow((double)base, -2.0 * (double)i / (double)head_dim);
      tables.cos[(size_t)(t * half + i)] = (float)std::cos(angle);
      tables.sin[(size_t)(t * half + i)] = (float)(sign * std::sin(angle));
    }
  return tables;
}

namespace {

// y = R(sign * angle) x on every rotated pair, the other channels copied:
//   R(a) (u, w) = (u cos a - w sin a,  u sin a + w cos a)
Tensor rotate(const char* op, const Tensor& x, int64_t head_dim, int64_t rotated, int64_t first_position, float base,
              double sign) {
  if (x.defined()) check_cpu_f32(op, x);
  const RopeTables tab = rope_tables(op, x, head_dim, rotated, first_position, base, sign);
  const int64_t T = x.size(1), W = x.size(2), half = head_dim / 2, heads = rotated / head_dim;
  Tensor y = Tensor::empty(x.shape());
  const float* px = x.data();
  float* py = y.data();
  const int64_t rows = x.size(0) * T;
#pragma omp parallel for schedule(static) if (rows * W > kParallelGrain)
  for (int64_t n = 0; n < rows; ++n) {
    const float *xr = px + n * W, *c = tab.cos.data() + (n % T) * half, *s = tab.sin.data() + (n % T) * half;
    float* yr = py + n * W;
    for (int64_t h = 0; h < heads; ++h) {
      const float* xh = xr + h * head_dim;
      float* yh = yr + h * head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const float u = xh[2 * i], w = xh[2 * i + 1];
        yh[2 * i] = u * c[i] - w * s[i];
        yh[2 * i + 1] = u * s[i] + w * c[i];
      }
    }
    for (int64_t k = rotated; k < W; ++k) yr[k] = xr[k];
  }
  return y;
}

}  // namespace

// x (B, T, W) -> y (B, T, W): rotation by +angle
Tensor rope_forward(const Tensor& x, int64_t head_dim, int64_t rotated, int64_t first_position, float base) {
  if (on_cuda("rope_forward", {&x})) return cuda::rope_forward(x, head_dim, rotated, first_position, base);
  return rotate("rope_forward", x, head_dim, rotated, first_position, base, 1.0);
}

// dy (B, T, W) -> dx (B, T, W). y = R(a) x is linear in x with an orthogonal R(a), so
//   dL/dx = R(a)^T dL/dy = R(-a) dL/dy:
// the backward is the rotation by the opposite angle (the copied channels pass dy on).
Tensor rope_backward(const Tensor& dy, int64_t head_dim, int64_t rotated, int64_t first_position, float base) {
  if (on_cuda("rope_backward", {&dy})) return cuda::rope_backward(dy, head_dim, rotated, first_position, base);
  return rotate("rope_backward", dy, head_dim, rotated, first_position, base, -1.0);
}

}  // namespace nl
