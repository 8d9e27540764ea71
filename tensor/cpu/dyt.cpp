// DyT (Dynamic Tanh) forward and backward on rows x (N, C): an elementwise squashing
// with no row statistics. Derivation: docs/norms/dyt.md.
#include <cmath>

#include "tensor/cpu/fast_math.h"
#include "tensor/cpu/norms_common.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/norms.h"

namespace nl {

// x (N, C), alpha (1), gamma (C), beta (C) or undefined (no beta) -> y (N, C)
//   y = gamma * tanh(alpha * x) + beta
Tensor dyt_forward(const Tensor& x, const Tensor& alpha, const Tensor& gamma, const Tensor& beta) {
  if (on_cuda("dyt_forward", {&x, &alpha, &gamma, &beta})) return cuda::dyt_forward(x, alpha, gamma, beta);
  const char* op = "dyt_forward";
  norms::check_rows(op, "x", x);
  const int64_t N = x.size(0), C = x.size(1);
  const float a = norms::read_scalar(op, "alpha", alpha);
  norms::check_vector(op, "gamma", gamma, C);
  if (beta.defined()) norms::check_vector(op, "beta", beta, C);

  Tensor y = Tensor::empty({N, C});
  const float *px = x.data(), *g = gamma.data(), *b = beta.defined() ? beta.data() : nullptr;
  float* py = y.data();
#pragma omp parallel for schedule(static) if (N * C > kParallelGrain)
  for (int64_t n = 0; n < N; ++n) {
    if (b)
      for (int64_t c = 0; c < C; ++c) py[n * C + c] = g[c] * fast::tanh(a * px[n * C + c]) + b[c];
    else
      for (int64_t c = 0; c < C; ++c) py[n * C + c] = g[c] * fast::tanh(a * px[n * C + c]);
  }
  return y;
}

// dy (N, C), x (N, C), alpha (1), gamma (C) -> dx (N, C), dalpha (1), dgamma (C), dbeta (C)
//   t = tanh(alpha * x),  a = dy * gamma * (1 - t^2)   (the gradient at alpha * x)
//   dx = alpha * a,  dalpha = sum over all elements of a * x
//   dgamma = sum over rows of dy * t,  dbeta = sum over rows of dy
// One elementwise pass; tanh is recomputed rather than saved.
DyTGrads dyt_backward(const Tensor& dy, const Tensor& x, const Tensor& alpha, const Tensor& gamma) {
  if (on_cuda("dyt_backward", {&dy, &x, &alpha, &gamma})) return cuda::dyt_backward(dy, x, alpha, gamma);
  const char* op = "dyt_backward";
  norms::check_rows(op, "x", x);
  norms::check_rows(op, "dy", dy);
  norms::check_same_shape(op, "dy", dy, x);
  const int64_t N = x.size(0), C = x.size(1);
  const float a = norms::read_scalar(op, "alpha", alpha);
  norms::check_vector(op, "gamma", gamma, C);

  DyTGrads grads{Tensor::empty({N, C}), Tensor::empty({1}), Tensor::empty({C}), Tensor::empty({C})};
  const float *px = x.data(), *pdy = dy.data(), *g = gamma.data();
  float* pdx = grads.dx.data();
  norms::RowChunks chunks(N, 2 * C + 1);  // per chunk: dgamma (C), dbeta (C), dalpha (1)
#pragma omp parallel for schedule(static) if (N * C > kParallelGrain)
  for (int64_t k = 0; k < chunks.chunks(); ++k) {
    double* acc_gamma = chunks.partial(k);
    double* acc_beta = acc_gamma + C;
    double& acc_alpha = acc_beta[C];
    for (int64_t n = chunks.begin(k); n < chunks.end(k); ++n) {
      const float *xr = px + n * C, *dyr = pdy + n * C;
      float* dxr = pdx + n * C;
      double row_alpha = 0.0;
#pragma omp simd reduction(+ : row_alpha)
      for (int64_t c = 0; c < C; ++c) {
        const float t = fast::tanh(a * xr[c]);
        const float du = dyr[c] * g[c] * (1.0f - t * t);
        dxr[c] = a * du;
        row_alpha += (double)du * xr[c];
        acc_gamma[c] += (double)dyr[c] * t;
        acc_beta[c] += dyr[c];
      }
      acc_alpha += row_alpha;
    }
  }
  chunks.total(0, C, grads.dgamma.data());
  chunks.total(C, C, grads.dbeta.data());
  chunks.total(2 * C, 1, grads.dalpha.data());
  return grads;
}

}  // namespace nl
