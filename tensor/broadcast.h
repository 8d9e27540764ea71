// Broadcast layouts the elementwise kernels of both devices special-case.
#pragma once
#include <algorithm>

#include "tensor/tensor.h"

namespace nl {

// True when `small` (contiguous) repeats along leading dims of `out_shape`: its shape,
// with leading 1s dropped, equals a suffix of out_shape.
inline bool is_suffix_broadcast(const Tensor& small, const Shape& out_shape) {
  if (!small.is_contiguous()) return false;
  Shape s = small.shape();
  while (!s.empty() && s.front() == 1) s.erase(s.begin());
  if (s.size() > out_shape.size()) return false;
  return std::equal(s.begin(), s.end(), out_shape.end() - s.size());
}

}  // namespace nl
