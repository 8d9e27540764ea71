// What the CPU and CUDA RoPE kernels (tensor/cpu/rope.cpp, tensor/cuda/rope.cu) share:
// the argument checks and the table of each position's rotation, computed on the host.
#pragma once
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace nl {

// cos and sign * sin of the angle (first_position + t) * base^(-2i / head_dim) for
// t < T = x.size(1) and i < head_dim / 2, row-major (T, head_dim / 2), computed in double
// and rounded to float once. Throws naming `op` when x is not a contiguous (B, T, W), the
// head dimension is odd, `rotated` is not a multiple of it within W, or base <= 1.
struct RopeTables {
  std::vector<float> cos, sin;
};
RopeTables rope_tables(const char* op, const Tensor& x, int64_t head_dim, int64_t rotated, int64_t first_position,
                       float base, double sign);

}  // namespace nl
