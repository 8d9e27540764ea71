// Statistics of activations used by the regime and depth studies.
#pragma once
#include <array>

#include "tensor/tensor.h"

namespace nl {

// Fractions of |v| above 1, 2 and 3 over all elements of `pre_tanh` (a tanh's
// argument, e.g. alpha * x for DyT): the saturation of the tanh. For v ~ N(0, s^2) the
// fraction above t is 2 (1 - Phi(t / s)).
std::array<double, 3> saturation_fractions(const Tensor& pre_tanh);

}  // namespace nl
