// Inputs that several autograd tests build the same way, kept in one place so that the
// files of tests/autograd/ can be compiled together as one translation unit.
#pragma once
#include "tensor/tensor.h"

namespace nl::test {

// A one-element tensor of shape (1): a scalar parameter such as DyT's alpha or BHyT's lambda.
inline Tensor scalar1(float v) { return Tensor::from_vector({v}, {1}); }

}  // namespace nl::test
