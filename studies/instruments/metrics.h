// Statistics of activations used by the regime and depth studies.
#pragma once
#include <array>

#include "tensor/tensor.h"

namespace nl {

// Fractions of |u| above 1, 2 and 3 over all elements of `arg`, the argument of a
// norm's bounded nonlinearity (Norm::bounded_arg: alpha x for DyT): how much of it lies
// where the nonlinearity is flat (a tanh past 2, a clip past 1). For u ~ N(0, s^2) the
// fraction above t is 2 (1 - Phi(t / s)).
std::array<double, 3> saturation_fractions(const Tensor& arg);

}  // namespace nl
