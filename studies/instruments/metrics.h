// Statistics of activations used by the regime and depth studies.
#pragma once
#include <array>
#include <functional>
#include <vector>

#include "tensor/tensor.h"

namespace nl {

// Fractions of |u| above 1, 2 and 3 over all elements of `arg`, the argument of a
// norm's bounded nonlinearity (Norm::bounded_arg: alpha x for DyT): how much of it lies
// where the nonlinearity is flat (a tanh past 2, a clip past 1). For u ~ N(0, s^2) the
// fraction above t is 2 (1 - Phi(t / s)).
std::array<double, 3> saturation_fractions(const Tensor& arg);

// Effective rank of a matrix X (n, d) (Roy and Vetterli, 2007): exp of the entropy of
// its singular values normalised to sum to 1. A matrix with k equal non-zero singular
// values has effective rank k. The singular values come from the eigenvalues of the
// Gram matrix X^T X (d x d, in double), found by cyclic Jacobi rotations.
double effective_rank(const Tensor& x);

// Singular values of X (n, d), largest first (exposed for tests).
std::vector<double> singular_values(const Tensor& x);

// Noise sensitivity of a map f at e: for each tensor f returns, the mean over `trials`
// draws of ||f(e + d) - f(e)|| / ||d|| (norms over all elements, in double), d uniform in
// [-size, size] per element, drawn from a generator seeded with `seed`. A first-order
// estimate of how much f amplifies small input perturbations: for a linear map
// f(e) = e W it is ||d W|| / ||d||, exactly c when W is c times an orthogonal matrix.
std::vector<double> noise_sensitivity(const std::function<std::vector<Tensor>(const Tensor&)>& f, const Tensor& e,
                                      float size, int trials, uint64_t seed);

}  // namespace nl
