// Small builders and comparisons that several tensor tests share, so that the files of
// tests/tensor/ can be compiled together as one translation unit.
#pragma once
#include <vector>

#include "tensor/tensor.h"

namespace nl::test {

// A tensor of row-major values written out in a test.
inline Tensor T(const std::vector<float>& v, const Shape& s) { return Tensor::from_vector(v, s); }

// Values worked out in double, rounded to float32, as a tensor of shape s.
inline Tensor to_tensor(const std::vector<double>& d, const Shape& s) {
  return Tensor::from_vector(std::vector<float>(d.begin(), d.end()), s);
}

// The same values element by element, compared with == (NaN never matches, -0 equals 0;
// the shapes are not compared).
inline bool same_bits(const Tensor& a, const Tensor& b) { return a.to_vector() == b.to_vector(); }

}  // namespace nl::test
