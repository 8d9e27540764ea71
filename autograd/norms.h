// The five normalization layers as differentiable ops, each one fused: one forward
// kernel and one hand-written backward kernel from tensor/norms.h, recorded as a single
// node. Definitions: ../shared/NORMS.md; derivations: docs/norms/.
// x (..., C) is normalised over its last axis, one token per row.
#pragma once
#include "autograd/var.h"

namespace nl::ag {

// LN(x) = gamma * (x - mu) / sqrt(s^2 + eps) + beta;  gamma, beta (C)
Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps = 1e-5f);
// RMS(x) = gamma * x / sqrt(ms + eps) (+ beta when beta is defined: cbwc's RMSNorm + bias)
Var rms_norm(const Var& x, const Var& gamma, const Var& beta, float eps = 1e-5f);
// DyT(x) = gamma * tanh(alpha * x) + beta;  alpha (1); no beta when beta is undefined
Var dyt(const Var& x, const Var& alpha, const Var& gamma, const Var& beta);
// BHyT*(x) = gamma * tanh(lambda * x / (kappa * sqrt(s^2 + eps) + |mu|));  lambda (1).
// centred = false: the released code's form, gamma * tanh(lambda * x / (kappa * sqrt(mean(x^2) + eps))).
Var bhyt(const Var& x, const Var& gamma, const Var& lambda, float kappa, float eps = 1e-5f, bool centred = true);
// gamma * tanh(lambda * x / denom) with one denominator per token, denom (...): BHyT's
// block-level approximation supplies it from the block input's statistics.
Var bhyt_with_denom(const Var& x, const Var& denom, const Var& gamma, const Var& lambda);

}  // namespace nl::ag
