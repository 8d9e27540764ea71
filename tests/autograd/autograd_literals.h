// Inputs and types that several autograd tests share, kept in one place so that the
// files of tests/autograd/ can be compiled together as one translation unit.
#pragma once
#include <functional>
#include <vector>

#include "autograd/var.h"
#include "tensor/tensor.h"

namespace nl::test {

// A one-element tensor of shape (1): a scalar parameter such as DyT's alpha or BHyT's lambda.
inline Tensor scalar1(float v) { return Tensor::from_vector({v}, {1}); }

// A function of variables, as the gradient checks take it.
using Fn = std::function<Var(const std::vector<Var>&)>;

}  // namespace nl::test
