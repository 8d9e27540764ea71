// The five norms as differentiable ops, each one recorded node: the fused forward kernel
// and the hand-written backward kernel of tensor/norms.h. x (..., C) is handed to the
// kernels as contiguous rows (N, C), N the product of the leading dims; outputs and dx
// are reshaped back to x's shape. Derivations: docs/norms/*.md.
#include "autograd/norms.h"

#include "tensor/norms.h"

namespace nl::ag {

namespace {

// x (..., C) as contiguous rows (N, C): a view when x is already contiguous.
Tensor as_rows(const Tensor& x, const char* op) {
  NL_CHECK(x.dim() >= 1 && x.size(-1) >= 1, op, ": x must have a last (channel) axis of size >= 1, got ",
           describe(x));
  const int64_t C = x.size(-1);
  return x.contiguous().reshape({x.numel() / C, C});
}

// The upstream gradient (shape of x, any strides) as rows like x's.
Tensor grad_rows(const Tensor& g, const Tensor& rows) { return g.contiguous().reshape(rows.shape()); }

void check_defined(const char* op, const Var& v, const char* name) {
  NL_CHECK(v.defined(), op, ": ", name, " is undefined");
}

}  // namespace

// y = gamma * xhat + beta,  xhat = (x - mu) * rstd,  rstd = (s^2 + eps)^(-1/2), per token.
// With g = dL/dy * gamma, the chain rule through mu and s^2 gives
//   dL/dx     = rstd * (g - mean(g) - xhat * mean(g * xhat))     (means over the C channels)
//   dL/dgamma = sum over tokens of dL/dy * xhat
//   dL/dbeta  = sum over tokens of dL/dy
// computed by layernorm_backward (tensor/cpu/layernorm.cpp). Without beta (a norm built
// with --norm-bias off) the kernels add zeros and the node has two inputs, x and gamma.
Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps) {
  const char* op = "layer_norm";
  check_defined(op, x, "x");
  check_defined(op, gamma, "gamma");
  const bool has_beta = beta.defined();
  Tensor rows = as_rows(x.value(), op), gv = gamma.value().contiguous();
  const Tensor bv = has_beta ? beta.value().contiguous() : Tensor::zeros(gv.shape(), DType::F32, gv.device());
  LayerNormForward fwd = layernorm_forward(rows, gv, bv, eps);
  const Shape shape = x.shape();
  std::vector<Var> inputs{x, gamma};
  if (has_beta) inputs.push_back(beta);
  Var out = record(op, fwd.y.reshape(shape), inputs,
                   [rows, gv, mean = fwd.mean, rstd = fwd.rstd, shape, has_beta](const Tensor& g) {
                     LayerNormGrads d = layernorm_backward(grad_rows(g, rows), rows, gv, mean, rstd);
                     std::vector<Tensor> grads{d.dx.reshape(shape), d.dgamma};
                     if (has_beta) grads.push_back(d.dbeta);
                     return grads;
                   });
  if (out.node()) out.node()->attrs = {eps};
  return out;
}

// y = gamma * xhat (+ beta),  xhat = x * rstd,  rstd = (ms + eps)^(-1/2), ms = mean(x^2).
// With g = dL/dy * gamma, the chain rule through ms gives
//   dL/dx     = rstd * (g - xhat * mean(g * xhat))
//   dL/dgamma = sum over tokens of dL/dy * xhat,  dL/dbeta = sum over tokens of dL/dy
// computed by rmsnorm_backward (tensor/cpu/rmsnorm.cpp). Without beta the node has two
// inputs, x and gamma.
Var rms_norm(const Var& x, const Var& gamma, const Var& beta, float eps) {
  const char* op = "rms_norm";
  check_defined(op, x, "x");
  check_defined(op, gamma, "gamma");
  const bool has_beta = beta.defined();
  Tensor rows = as_rows(x.value(), op), gv = gamma.value().contiguous();
  RMSNormForward fwd = rmsnorm_forward(rows, gv, has_beta ? beta.value().contiguous() : Tensor(), eps);
  const Shape shape = x.shape();
  std::vector<Var> inputs{x, gamma};
  if (has_beta) inputs.push_back(beta);
  Var out = record(op, fwd.y.reshape(shape), inputs, [rows, gv, rstd = fwd.rstd, shape, has_beta](const Tensor& g) {
    RMSNormGrads d = rmsnorm_backward(grad_rows(g, rows), rows, gv, rstd, has_beta);
    std::vector<Tensor> grads{d.dx.reshape(shape), d.dgamma};
    if (has_beta) grads.push_back(d.dbeta);
    return grads;
  });
  if (out.node()) out.node()->attrs = {eps};
  return out;
}

// y = gamma * t + beta,  t = tanh(alpha * x), elementwise; with a = dL/dy * gamma * (1 - t^2)
//   dL/dx = alpha * a,  dL/dalpha = sum over all elements of a * x
//   dL/dgamma = sum over tokens of dL/dy * t,  dL/dbeta = sum over tokens of dL/dy
// computed by dyt_backward (tensor/cpu/dyt.cpp). Without beta (undefined) the node has
// three inputs, x, alpha and gamma.
Var dyt(const Var& x, const Var& alpha, const Var& gamma, const Var& beta) {
  const char* op = "dyt";
  check_defined(op, x, "x");
  check_defined(op, alpha, "alpha");
  check_defined(op, gamma, "gamma");
  const bool has_beta = beta.defined();
  Tensor rows = as_rows(x.value(), op), av = alpha.value(), gv = gamma.value().contiguous();
  Tensor y = dyt_forward(rows, av, gv, has_beta ? beta.value().contiguous() : Tensor());
  const Shape shape = x.shape();
  std::vector<Var> inputs{x, alpha, gamma};
  if (has_beta) inputs.push_back(beta);
  return record(op, y.reshape(shape), inputs, [rows, av, gv, shape, has_beta](const Tensor& g) {
    DyTGrads d = dyt_backward(grad_rows(g, rows), rows, av, gv);
    std::vector<Tensor> grads{d.dx.reshape(shape), d.dalpha.reshape(av.shape()), d.dgamma};
    if (has_beta) grads.push_back(d.dbeta);
    return grads;
  });
}

// y = gamma * tanh(u),  u = lambda * x / D,  D = kappa * sigma + |mu|,  sigma = (s^2 + eps)^(1/2).
// With a = dL/dy * gamma * (1 - tanh(u)^2) and S = sum_c a_c x_c per token:
//   dL/dD      = -lambda * S / D^2
//   dD/dx_j    = kappa * (x_j - mu) / (C * sigma) + sign(mu) / C      (sign(0) = 0)
//   dL/dx_j    = lambda * a_j / D + dL/dD * dD/dx_j
//   dL/dlambda = sum over tokens of S / D,  dL/dgamma = sum over tokens of dL/dy * tanh(u)
// Not centred (the released code's form): mu = 0, sigma = (mean(x^2) + eps)^(1/2), so
//   dD/dx_j    = kappa * x_j / (C * sigma)
// computed by bhyt_backward (tensor/cpu/bhyt.cpp).
Var bhyt(const Var& x, const Var& gamma, const Var& lambda, float kappa, float eps, bool centred) {
  const char* op = "bhyt";
  check_defined(op, x, "x");
  check_defined(op, gamma, "gamma");
  check_defined(op, lambda, "lambda");
  Tensor rows = as_rows(x.value(), op), gv = gamma.value().contiguous(), lv = lambda.value();
  BHyTForward fwd = bhyt_forward(rows, gv, lv, kappa, eps, centred);
  const Shape shape = x.shape();
  Var out = record(op, fwd.y.reshape(shape), {x, gamma, lambda},
                   [rows, gv, lv, mean = fwd.mean, sigma = fwd.sigma, kappa, centred, shape](const Tensor& g) {
                     BHyTGrads d = bhyt_backward(grad_rows(g, rows), rows, gv, lv, mean, sigma, kappa, centred);
                     return std::vector<Tensor>{d.dx.reshape(shape), d.dgamma, d.dlambda.reshape(lv.shape())};
                   });
  if (out.node()) out.node()->attrs = {kappa, eps, centred ? 1.0f : 0.0f};
  return out;
}

// y = gamma * tanh(u),  u = lambda * x / D, one given D per token. With a and S as for bhyt:
//   dL/dx = lambda * a / D,  dL/dD = -lambda * S / D^2
//   dL/dlambda = sum over tokens of S / D,  dL/dgamma = sum over tokens of dL/dy * tanh(u)
// computed by bhyt_denom_backward (tensor/cpu/bhyt.cpp). denom may be shaped (...) or
// (..., 1) for x (..., C), so a keepdim reduction of the block input can be passed as is.
Var bhyt_with_denom(const Var& x, const Var& denom, const Var& gamma, const Var& lambda) {
  const char* op = "bhyt_with_denom";
  check_defined(op, x, "x");
  check_defined(op, denom, "denom");
  check_defined(op, gamma, "gamma");
  check_defined(op, lambda, "lambda");
  Tensor rows = as_rows(x.value(), op), gv = gamma.value().contiguous(), lv = lambda.value();
  const Shape shape = x.shape(), dshape = denom.shape();
  Shape tokens(shape.begin(), shape.end() - 1), tokens_keepdim = tokens;
  tokens_keepdim.push_back(1);
  NL_CHECK(dshape == tokens || dshape == tokens_keepdim, op, ": denom ", describe(denom.value()),
           " must have one value per token of x ", describe(x.value()), ", shape ", to_string(tokens), " or ",
           to_string(tokens_keepdim));
  Tensor dv = denom.value().contiguous().reshape({rows.size(0)});
  Tensor y = bhyt_denom_forward(rows, dv, gv, lv);
  return record(op, y.reshape(shape), {x, denom, gamma, lambda},
                [rows, dv, gv, lv, shape, dshape](const Tensor& g) {
                  BHyTDenomGrads d = bhyt_denom_backward(grad_rows(g, rows), rows, dv, gv, lv);
                  return std::vector<Tensor>{d.dx.reshape(shape), d.ddenom.reshape(dshape), d.dgamma,
                                             d.dlambda.reshape(lv.shape())};
                });
}

}  // namespace nl::ag
