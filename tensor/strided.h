// Walks every element of a shape in row-major order, tracking the element offset of
// each operand from its own strides (stride 0 for broadcast dims). The innermost dim is
// handed to the callback as one run, so the inner loop stays a plain strided loop:
//   fn(const int64_t* base_offsets, int64_t run_length)   with offsets per operand.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "tensor/shape.h"

namespace nl {

template <size_t N, typename Fn>
void for_each_run(const Shape& shape, const std::array<const Shape*, N>& strides,
                  const std::array<int64_t, N>& start, Fn fn) {
  const int nd = (int)shape.size();
  std::array<int64_t, N> off = start;
  if (nd == 0) { fn(off.data(), 1); return; }
  for (int64_t d : shape) if (d == 0) return;
  const int64_t inner = shape[nd - 1];
  std::vector<int64_t> idx(nd, 0);
  while (true) {
    fn(off.data(), inner);
    int d = nd - 2;
    for (; d >= 0; --d) {
      idx[d]++;
      for (size_t k = 0; k < N; ++k) off[k] += (*strides[k])[d];
      if (idx[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= (*strides[k])[d] * shape[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace nl
