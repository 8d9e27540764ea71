// RMSNorm forward and backward on rows x (N, C), with an optional bias (cbwc's
// RMSNorm + beta). Derivation: docs/norms/rmsnorm.md.
#include <cmath>

#include "tensor/cpu/norms_common.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/norms.h"

namespace nl {

// x (N, C), gamma (C), beta (C) or undefined -> y (N, C), rstd (N)
//   ms = mean(x^2), rstd = 1 / sqrt(ms + eps),  y = gamma * x * rstd (+ beta)
RMSNormForward rmsnorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps) {
  if (on_cuda("rmsnorm_forward", {&x, &gamma, &beta})) return cuda::rmsnorm_forward(x, gamma, beta, eps);
  const char* op = "rmsnorm_forward";
  norms::check_rows(op, "x", x);
  const int64_t N = x.size(0), C = x.size(1);
  norms::check_vector(op, "gamma", gamma, C);
  if (beta.defined()) norms::check_vector(op, "beta", beta, C);
  NL_CHECK(eps >= 0.0f, op, ": eps must be >= 0, got ", eps);

  RMSNormForward out{Tensor::empty({N, C}), Tensor::empty({N})};
  const float *px = x.data(), *g = gamma.data(), *b = beta.defined() ? beta.data() : nullptr;
  float *py = out.y.data(), *prstd = out.rstd.data();
#pragma omp parallel for schedule(static) if (N * C > kParallelGrain)
  for (int64_t n = 0; n < N; ++n) {
    const float* xr = px + n * C;
    float* yr = py + n * C;
    double ss = 0.0;
#pragma omp simd reduction(+ : ss)
    for (int64_t c = 0; c < C; ++c) ss += (double)xr[c] * xr[c];
    const double rs = 1.0 / std::sqrt(ss / (double)C + (double)eps);
    for (int64_t c = 0; c < C; ++c) yr[c] = (float)(xr[c] * rs) * g[c];
    if (b)
      for (int64_t c = 0; c < C; ++c) yr[c] += b[c];
    prstd[n] = (float)rs;
  }
  return out;
}

// dy (N, C), x (N, C), gamma (C), rstd (N) -> dx (N, C), dgamma (C), dbeta (C) if with_dbeta
//   xhat = x * rstd,  g = dy * gamma
//   dx = rstd * (g - xhat * mean(g * xhat))   (LayerNorm's projection without the mean
//        term: there is no mu to differentiate through; docs/norms/rmsnorm.md)
//   dgamma = sum over rows of dy * xhat,  dbeta = sum over rows of dy
// Per row: one reduction pass, one elementwise pass.
RMSNormGrads rmsnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd,
                              bool with_dbeta) {
  if (on_cuda("rmsnorm_backward", {&dy, &x, &gamma, &rstd}))
    return cuda::rmsnorm_backward(dy, x, gamma, rstd, with_dbeta);
  const char* op = "rmsnorm_backward";
  norms::check_rows(op, "x", x);
  norms::check_rows(op, "dy", dy);
  norms::check_same_shape(op, "dy", dy, x);
  const int64_t N = x.size(0), C = x.size(1);
  norms::check_vector(op, "gamma", gamma, C);
  norms::check_vector(op, "rstd", rstd, N);

  RMSNormGrads grads{Tensor::empty({N, C}), Tensor::empty({C}), with_dbeta ? Tensor::empty({C}) : Tensor()};
  const float *px = x.data(), *pdy = dy.data(), *g = gamma.data(), *prstd = rstd.data();
  float* pdx = grads.dx.data();
  norms::RowChunks chunks(N, 2 * C);  // per chunk: dgamma (C), dbeta (C)
#pragma omp parallel for schedule(static) if (N * C > kParallelGrain)
  for (int64_t k = 0; k < chunks.chunks(); ++k) {
    double* acc_gamma = chunks.partial(k);
    double* acc_beta = acc_gamma + C;
    for (int64_t n = chunks.begin(k); n < chunks.end(k); ++n) {
      const float *xr = px + n * C, *dyr = pdy + n * C;
      float* dxr = pdx + n * C;
      const double rs = prstd[n];
      double sum_gx = 0.0;
#pragma omp simd reduction(+ : sum_gx)
      for (int64_t c = 0; c < C; ++c) sum_gx += (double)dyr[c] * g[c] * xr[c];
      const double mean_gxhat = rs * sum_gx / (double)C;
      for (int64_t c = 0; c < C; ++c) {
        const double xhat = xr[c] * rs;
        dxr[c] = (float)(rs * ((double)dyr[c] * g[c] - xhat * mean_gxhat));
        acc_gamma[c] += (double)dyr[c] * xhat;
      }
      if (with_dbeta)
        for (int64_t c = 0; c < C; ++c) acc_beta[c] += dyr[c];
    }
  }
  chunks.total(0, C, grads.dgamma.data());
  if (with_dbeta) chunks.total(C, C, grads.dbeta.data());
  return grads;
}

}  // namespace nl
