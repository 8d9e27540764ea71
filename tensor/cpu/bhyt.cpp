// BHyT (Bounded Hyperbolic Tanh) forward and backward on rows x (N, C): the exact form
// BHyT*, whose denominator comes from the row's own mean and std, and the form with a
// given denominator that the block-level approximation uses. Derivation: docs/norms/bhyt.md.
#include <cmath>

#include "tensor/cpu/fast_math.h"
#include "tensor/cpu/norms_common.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/norms.h"

namespace nl {

// x (N, C), gamma (C), lambda (1) -> y (N, C), mean (N), sigma (N)
//   mu = mean(x), sigma = sqrt(mean((x - mu)^2) + eps),  D = kappa * sigma + |mu|
//   y = gamma * tanh(lambda * x / D)
// Not centred (the released code's form): mu = 0, so sigma = sqrt(mean(x^2) + eps) and
// D = kappa * sigma. D > 0 whenever eps > 0 or the row is not all zeros.
BHyTForward bhyt_forward(const Tensor& x, const Tensor& gamma, const Tensor& lambda, float kappa, float eps,
                         bool centred) {
  if (on_cuda("bhyt_forward", {&x, &gamma, &lambda}))
    return cuda::bhyt_forward(x, gamma, lambda, kappa, eps, centred);
  const char* op = "bhyt_forward";
  norms::check_rows(op, "x", x);
  const int64_t N = x.size(0), C = x.size(1);
  norms::check_vector(op, "gamma", gamma, C);
  const float lam = norms::read_scalar(op, "lambda", lambda);
  NL_CHECK(kappa > 0.0f && eps >= 0.0f, op, ": need kappa > 0 and eps >= 0, got kappa ", kappa, ", eps ", eps);

  BHyTForward out{Tensor::empty({N, C}), Tensor::empty({N}), Tensor::empty({N})};
  const float *px = x.data(), *g = gamma.data();
  float *py = out.y.data(), *pmean = out.mean.data(), *psigma = out.sigma.data();
#pragma omp parallel for schedule(static) if (N * C > kParallelGrain)
  for (int64_t n = 0; n < N; ++n) {
    const float* xr = px + n * C;
    float* yr = py + n * C;
    const double mu = centred ? norms::row_mean(xr, C) : 0.0;
    const double sigma = std::sqrt(norms::row_var(xr, C, mu) + (double)eps);
    const float scale = (float)((double)lam / ((double)kappa * sigma + std::fabs(mu)));
    for (int64_t c = 0; c < C; ++c) yr[c] = g[c] * fast::tanh(scale * xr[c]);
    pmean[n] = (float)mu;
    psigma[n] = (float)sigma;
  }
  return out;
}

// dy (N, C), x (N, C), gamma (C), lambda (1), mean (N), sigma (N)
//   -> dx (N, C), dgamma (C), dlambda (1)
//   u = lambda * x / D,  t = tanh(u),  a = dy * gamma * (1 - t^2)   (the gradient at u)
//   S = sum_c a_c x_c  (per row),  K = lambda * S / D^2            (K = -dL/dD)
//   dD/dx_j = kappa * (x_j - mu) / (C * sigma) + sign(mu) / C       (sign(0) = 0)
//   dx_j = lambda * a_j / D - K * dD/dx_j
//   dlambda = sum over rows of S / D,  dgamma = sum over rows of dy * t
// Not centred: mu = 0 and sign(mu) = 0, so dD/dx_j = kappa * x_j / (C * sigma).
// Per row: one pass computing a (kept in dx meanwhile) and the reductions, one
// elementwise pass. As in layernorm_backward, the saved float mean is a pivot m whose
// rounding is recovered from sum(x - m) before forming x_j - mu (when centred; the mean
// 0 of the uncentred form is exact); D itself uses m, a relative change of ~1e-8 in D.
BHyTGrads bhyt_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& lambda,
                        const Tensor& mean, const Tensor& sigma, float kappa, bool centred) {
  if (on_cuda("bhyt_backward", {&dy, &x, &gamma, &lambda, &mean, &sigma}))
    return cuda::bhyt_backward(dy, x, gamma, lambda, mean, sigma, kappa, centred);
  const char* op = "bhyt_backward";
  norms::check_rows(op, "x", x);
  norms::check_rows(op, "dy", dy);
  norms::check_same_shape(op, "dy", dy, x);
  const int64_t N = x.size(0), C = x.size(1);
  norms::check_vector(op, "gamma", gamma, C);
  const float lam = norms::read_scalar(op, "lambda", lambda);
  norms::check_vector(op, "mean", mean, N);
  norms::check_vector(op, "sigma", sigma, N);
  NL_CHECK(kappa > 0.0f, op, ": need kappa > 0, got ", kappa);

  BHyTGrads grads{Tensor::empty({N, C}), Tensor::empty({C}), Tensor::empty({1})};
  const float *px = x.data(), *pdy = dy.data(), *g = gamma.data(), *pmean = mean.data(), *psigma = sigma.data();
  float* pdx = grads.dx.data();
  norms::RowChunks chunks(N, C + 1);  // per chunk: dgamma (C), dlambda (1)
#pragma omp parallel for schedule(static) if (N * C > kParallelGrain)
  for (int64_t k = 0; k < chunks.chunks(); ++k) {
    double* acc_gamma = chunks.partial(k);
    double& acc_lambda = acc_gamma[C];
    for (int64_t n = chunks.begin(k); n < chunks.end(k); ++n) {
      const float *xr = px + n * C, *dyr = pdy + n * C;
      float* dxr = pdx + n * C;
      const double m = pmean[n], sg = psigma[n];
      const double D = (double)kappa * sg + std::fabs(m);
      const float scale = (float)((double)lam / D);
      double S = 0.0, sum_d = 0.0;
#pragma omp simd reduction(+ : S, sum_d)
      for (int64_t c = 0; c < C; ++c) {
        const float t = fast::tanh(scale * xr[c]);
        const float a = dyr[c] * g[c] * (1.0f - t * t);
        dxr[c] = a;
        S += (double)a * xr[c];
        sum_d += (double)xr[c] - m;
        acc_gamma[c] += (double)dyr[c] * t;
      }
      const double delta = centred ? sum_d / (double)C : 0.0;  // mu - m
      const double K = (double)lam * S / (D * D);
      const double coef_dev = K * (double)kappa / ((double)C * sg);
      const double sign_mu = (m > 0.0) - (m < 0.0);
      const double coef_mean = K * sign_mu / (double)C;
      const double lam_over_D = (double)lam / D;
      for (int64_t c = 0; c < C; ++c)
        dxr[c] = (float)(lam_over_D * dxr[c] - coef_dev * ((double)xr[c] - m - delta) - coef_mean);
      acc_lambda += S / D;
    }
  }
  chunks.total(0, C, grads.dgamma.data());
  chunks.total(C, 1, grads.dlambda.data());
  return grads;
}

// x (N, C), denom (N), gamma (C), lambda (1) -> y (N, C)
//   y = gamma * tanh(lambda * x / denom)
Tensor bhyt_denom_forward(const Tensor& x, const Tensor& denom, const Tensor& gamma, const Tensor& lambda) {
  if (on_cuda("bhyt_denom_forward", {&x, &denom, &gamma, &lambda}))
    return cuda::bhyt_denom_forward(x, denom, gamma, lambda);
  const char* op = "bhyt_denom_forward";
  norms::check_rows(op, "x", x);
  const int64_t N = x.size(0), C = x.size(1);
  norms::check_vector(op, "denom", denom, N);
  norms::check_vector(op, "gamma", gamma, C);
  const float lam = norms::read_scalar(op, "lambda", lambda);

  Tensor y = Tensor::empty({N, C});
  const float *px = x.data(), *pden = denom.data(), *g = gamma.data();
  float* py = y.data();
#pragma omp parallel for schedule(static) if (N * C > kParallelGrain)
  for (int64_t n = 0; n < N; ++n) {
    const float scale = (float)((double)lam / pden[n]);
    for (int64_t c = 0; c < C; ++c) py[n * C + c] = g[c] * fast::tanh(scale * px[n * C + c]);
  }
  return y;
}

// dy (N, C), x (N, C), denom (N), gamma (C), lambda (1)
//   -> dx (N, C), ddenom (N), dgamma (C), dlambda (1)
//   u = lambda * x / D,  t = tanh(u),  a = dy * gamma * (1 - t^2),  S = sum_c a_c x_c
//   dx = lambda * a / D,  ddenom = -lambda * S / D^2
//   dlambda = sum over rows of S / D,  dgamma = sum over rows of dy * t
// One elementwise pass per row.
BHyTDenomGrads bhyt_denom_backward(const Tensor& dy, const Tensor& x, const Tensor& denom, const Tensor& gamma,
                                   const Tensor& lambda) {
  if (on_cuda("bhyt_denom_backward", {&dy, &x, &denom, &gamma, &lambda}))
    return cuda::bhyt_denom_backward(dy, x, denom, gamma, lambda);
  const char* op = "bhyt_denom_backward";
  norms::check_rows(op, "x", x);
  norms::check_rows(op, "dy", dy);
  norms::check_same_shape(op, "dy", dy, x);
  const int64_t N = x.size(0), C = x.size(1);
  norms::check_vector(op, "denom", denom, N);
  norms::check_vector(op, "gamma", gamma, C);
  const float lam = norms::read_scalar(op, "lambda", lambda);

  BHyTDenomGrads grads{Tensor::empty({N, C}), Tensor::empty({N}), Tensor::empty({C}), Tensor::empty({1})};
  const float *px = x.data(), *pdy = dy.data(), *pden = denom.data(), *g = gamma.data();
  float *pdx = grads.dx.data(), *pdden = grads.ddenom.data();
  norms::RowChunks chunks(N, C + 1);  // per chunk: dgamma (C), dlambda (1)
#pragma omp parallel for schedule(static) if (N * C > kParallelGrain)
  for (int64_t k = 0; k < chunks.chunks(); ++k) {
    double* acc_gamma = chunks.partial(k);
    double& acc_lambda = acc_gamma[C];
    for (int64_t n = chunks.begin(k); n < chunks.end(k); ++n) {
      const float *xr = px + n * C, *dyr = pdy + n * C;
      float* dxr = pdx + n * C;
      const double D = pden[n];
      const float scale = (float)((double)lam / D);
      double S = 0.0;
#pragma omp simd reduction(+ : S)
      for (int64_t c = 0; c < C; ++c) {
        const float t = fast::tanh(scale * xr[c]);
        const float a = dyr[c] * g[c] * (1.0f - t * t);
        dxr[c] = scale * a;
        S += (double)a * xr[c];
        acc_gamma[c] += (double)dyr[c] * t;
      }
      pdden[n] = (float)(-(double)lam * S / (D * D));
      acc_lambda += S / D;
    }
  }
  chunks.total(0, C, grads.dgamma.data());
  chunks.total(C, 1, grads.dlambda.data());
  return grads;
}

}  // namespace nl
