// The normalization layers as fused kernels: one forward and one hand-written backward
// per norm, side by side, llm.c style. Every kernel works on contiguous float32 rows,
// x (N, C): one token per row, normalised over its C channels. The forward returns what
// the backward needs (per-row statistics); the backward returns the gradient of every
// input in one sweep over the rows. Definitions: ../shared/NORMS.md; derivations, term
// by term: docs/norms/*.md.
//
// Numerics: row statistics are accumulated in double (mean first, then the variance
// about it), so rows with a large offset (mean 1e3, std 1e-1) keep their accuracy.
// Parameter gradients (sums over rows) are summed in double over a fixed split of the
// rows into chunks, then the chunks are added in order: the result is the same bits for
// any number of threads.
//
// Kernels: tensor/cpu/layernorm.cpp, rmsnorm.cpp, dyt.cpp, bhyt.cpp.
#pragma once
#include "tensor/tensor.h"

namespace nl {

// ---- LayerNorm:  y = gamma * (x - mu) * rstd + beta,  rstd = 1 / sqrt(s^2 + eps)
struct LayerNormForward {
  Tensor y;     // (N, C)
  Tensor mean;  // (N)  mu per row
  Tensor rstd;  // (N)  1 / sqrt(s^2 + eps) per row
};
struct LayerNormGrads {
  Tensor dx;      // (N, C)
  Tensor dgamma;  // (C)
  Tensor dbeta;   // (C)
};
// x (N, C), gamma (C), beta (C)
LayerNormForward layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps);
// dy (N, C), x (N, C), gamma (C), mean (N), rstd (N): mean and rstd from layernorm_forward
LayerNormGrads layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                  const Tensor& rstd);

// ---- RMSNorm:  y = gamma * x * rstd (+ beta),  rstd = 1 / sqrt(ms + eps),  ms = mean(x^2)
struct RMSNormForward {
  Tensor y;     // (N, C)
  Tensor rstd;  // (N)
};
struct RMSNormGrads {
  Tensor dx;      // (N, C)
  Tensor dgamma;  // (C)
  Tensor dbeta;   // (C), only when asked for (RMSNorm + bias), else undefined
};
// x (N, C), gamma (C), beta (C) or undefined (no bias)
RMSNormForward rmsnorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps);
// dy (N, C), x (N, C), gamma (C), rstd (N); with_dbeta: also return dbeta = sum of dy over rows
RMSNormGrads rmsnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd,
                              bool with_dbeta);

// ---- DyT:  y = gamma * tanh(alpha * x) + beta   (no statistics, nothing saved)
struct DyTGrads {
  Tensor dx;      // (N, C)
  Tensor dalpha;  // (1)
  Tensor dgamma;  // (C)
  Tensor dbeta;   // (C)
};
// x (N, C), alpha (1), gamma (C), beta (C) or undefined (no beta)
Tensor dyt_forward(const Tensor& x, const Tensor& alpha, const Tensor& gamma, const Tensor& beta);
// dy (N, C), x (N, C), alpha (1), gamma (C)
DyTGrads dyt_backward(const Tensor& dy, const Tensor& x, const Tensor& alpha, const Tensor& gamma);

// ---- BHyT* (exact):  y = gamma * tanh(lambda * x / D),  D = kappa * sigma + |mu|,
//      sigma = sqrt(s^2 + eps). Gradients flow through mu and sigma; d|mu|/dmu = sign(mu), 0 at 0.
//      centred = false is the form the released BHyT code computes: no centring, mu taken
//      as 0, so sigma = sqrt(mean(x^2) + eps) and D = kappa * sigma.
struct BHyTForward {
  Tensor y;      // (N, C)
  Tensor mean;   // (N)  mu per row (0 when not centred)
  Tensor sigma;  // (N)  sqrt(s^2 + eps) per row (sqrt(mean(x^2) + eps) when not centred)
};
struct BHyTGrads {
  Tensor dx;       // (N, C)
  Tensor dgamma;   // (C)
  Tensor dlambda;  // (1)
};
// x (N, C), gamma (C), lambda (1)
BHyTForward bhyt_forward(const Tensor& x, const Tensor& gamma, const Tensor& lambda, float kappa, float eps,
                         bool centred = true);
// dy (N, C), x (N, C), gamma (C), lambda (1), mean (N), sigma (N): mean and sigma from
// bhyt_forward with the same `centred`
BHyTGrads bhyt_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& lambda,
                        const Tensor& mean, const Tensor& sigma, float kappa, bool centred = true);

// ---- BHyT with a given denominator (the block-level approximation supplies it):
//      y = gamma * tanh(lambda * x / denom),  one denom per row
struct BHyTDenomGrads {
  Tensor dx;       // (N, C)
  Tensor ddenom;   // (N)
  Tensor dgamma;   // (C)
  Tensor dlambda;  // (1)
};
// x (N, C), denom (N), gamma (C), lambda (1)
Tensor bhyt_denom_forward(const Tensor& x, const Tensor& denom, const Tensor& gamma, const Tensor& lambda);
// dy (N, C), x (N, C), denom (N), gamma (C), lambda (1)
BHyTDenomGrads bhyt_denom_backward(const Tensor& dy, const Tensor& x, const Tensor& denom, const Tensor& gamma,
                                   const Tensor& lambda);

}  // namespace nl
