// LayerNorm forward and backward on rows x (N, C). Derivation: docs/norms/layernorm.md.
#include <cmath>

#include "tensor/cpu/norms_common.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/norms.h"

namespace nl {

// x (N, C), gamma (C), beta (C) -> y (N, C), mean (N), rstd (N)
//   mu = mean(x), s^2 = mean((x - mu)^2), rstd = 1 / sqrt(s^2 + eps)
//   y = gamma * (x - mu) * rstd + beta
LayerNormForward layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps) {
  if (on_cuda("layernorm_forward", {&x, &gamma, &beta})) return cuda::layernorm_forward(x, gamma, beta, eps);
  const char* op = "layernorm_forward";
  norms::check_rows(op, "x", x);
  const int64_t N = x.size(0), C = x.size(1);
  norms::check_vector(op, "gamma", gamma, C);
  norms::check_vector(op, "beta", beta, C);
  NL_CHECK(eps >= 0.0f, op, ": eps must be >= 0, got ", eps);

  LayerNormForward out{Tensor::empty({N, C}), Tensor::empty({N}), Tensor::empty({N})};
  const float *px = x.data(), *g = gamma.data(), *b = beta.data();
  float *py = out.y.data(), *pmean = out.mean.data(), *prstd = out.rstd.data();
#pragma omp parallel for schedule(static) if (N * C > kParallelGrain)
  for (int64_t n = 0; n < N; ++n) {
    const float* xr = px + n * C;
    float* yr = py + n * C;
    const double mu = norms::row_mean(xr, C);
    const double rs = 1.0 / std::sqrt(norms::row_var(xr, C, mu) + (double)eps);
    for (int64_t c = 0; c < C; ++c) yr[c] = (float)(((double)xr[c] - mu) * rs) * g[c] + b[c];
    pmean[n] = (float)mu;
    prstd[n] = (float)rs;
  }
  return out;
}

// dy (N, C), x (N, C), gamma (C), mean (N), rstd (N) -> dx (N, C), dgamma (C), dbeta (C)
//   xhat = (x - mu) * rstd,  g = dy * gamma
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))     (the Jacobian projects out
//        the mean direction and the xhat direction; docs/norms/layernorm.md)
//   dgamma = sum over rows of dy * xhat,  dbeta = sum over rows of dy
// Per row: one pass with the two reductions, one elementwise pass.
//
// The saved mean is a float: at mu = 1e3 its rounding (up to 3e-5) is 3e-4 of a std of
// 1e-1, which would shift every xhat of the row. So the saved mean serves as a pivot
// m: d = x - m is exact in double, the first pass also sums d, and
// delta = mean(d) = mu - m recovers the exact mean: xhat = (d - delta) * rstd.
LayerNormGrads layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                  const Tensor& rstd) {
  if (on_cuda("layernorm_backward", {&dy, &x, &gamma, &mean, &rstd}))
    return cuda::layernorm_backward(dy, x, gamma, mean, rstd);
  const char* op = "layernorm_backward";
  norms::check_rows(op, "x", x);
  norms::check_rows(op, "dy", dy);
  norms::check_same_shape(op, "dy", dy, x);
  const int64_t N = x.size(0), C = x.size(1);
  norms::check_vector(op, "gamma", gamma, C);
  norms::check_vector(op, "mean", mean, N);
  norms::check_vector(op, "rstd", rstd, N);

  LayerNormGrads grads{Tensor::empty({N, C}), Tensor::empty({C}), Tensor::empty({C})};
  const float *px = x.data(), *pdy = dy.data(), *g = gamma.data(), *pmean = mean.data(), *prstd = rstd.data();
  float* pdx = grads.dx.data();
  norms::RowChunks chunks(N, 2 * C);  // per chunk: dgamma (C), dbeta (C)
#pragma omp parallel for schedule(static) if (N * C > kParallelGrain)
  for (int64_t k = 0; k < chunks.chunks(); ++k) {
    double* acc_gamma = chunks.partial(k);
    double* acc_beta = acc_gamma + C;
    for (int64_t n = chunks.begin(k); n < chunks.end(k); ++n) {
      const float *xr = px + n * C, *dyr = pdy + n * C;
      float* dxr = pdx + n * C;
      const double m = pmean[n];
      const double rs = prstd[n];
      // reductions: sum d, sum g, sum g * d
      double sum_d = 0.0, sum_g = 0.0, sum_gd = 0.0;
#pragma omp simd reduction(+ : sum_d, sum_g, sum_gd)
      for (int64_t c = 0; c < C; ++c) {
        const double d = (double)xr[c] - m;
        const double gc = (double)dyr[c] * g[c];
        sum_d += d;
        sum_g += gc;
        sum_gd += gc * d;
      }
      const double delta = sum_d / (double)C;
      const double mean_g = sum_g / (double)C;
      // mean(g * xhat) = rstd * mean(g * (d - delta))
      const double mean_gxhat = rs * (sum_gd - delta * sum_g) / (double)C;
      for (int64_t c = 0; c < C; ++c) {
        const double xhat = ((double)xr[c] - m - delta) * rs;
        const double gc = (double)dyr[c] * g[c];
        dxr[c] = (float)(rs * (gc - mean_g - xhat * mean_gxhat));
        acc_gamma[c] += (double)dyr[c] * xhat;
        acc_beta[c] += dyr[c];
      }
    }
  }
  chunks.total(0, C, grads.dgamma.data());
  chunks.total(C, C, grads.dbeta.data());
  return grads;
}

}  // namespace nl
