// Rotary position embeddings on the GPU: the rotation of tensor/cpu/rope.cpp, one
// thread per output element. The angles' cosines and sines come from the host
// (tensor/rope_tables.h, the CPU's tables) as two (T, head_dim / 2) tables.
#include "tensor/cuda/common.cuh"
#include "tensor/cuda/kernels.h"
#include "tensor/rope_tables.h"

namespace nl::cuda {
namespace {

// y[n, k] for k < rotated: the pair (u, w) = x[n, 2i], x[n, 2i + 1] of its head rotated,
//   even k: u cos - w sin,  odd k: u sin + w cos;  k >= rotated: x[n, k]
__global__ void rope_kernel(const float* x, const float* cos_t, const float* sin_t, int64_t T, int64_t W,
                            int64_t head_dim, int64_t rotated, int64_t n, float* y) {
  NL_GRID_STRIDE_LOOP(e, n) {
    const int64_t row = e / W, k = e - row * W;
    if (k >= rotated) {
      y[e] = x[e];
      continue;
    }
    const int64_t half = head_dim / 2, j = k % head_dim, i = j / 2, t = row % T;
    const float* pair = x + (e - (j & 1));
    const float c = cos_t[t * half + i], s = sin_t[t * half + i];
    y[e] = (j & 1) ? pair[0] * s + pair[1] * c : pair[0] * c - pair[1] * s;
  }
}

Tensor rotate(const char* op, const Tensor& x, int64_t head_dim, int64_t rotated, int64_t first_position, float base,
              double sign) {
  if (x.defined()) check_f32(op, x);
  const RopeTables tab = rope_tables(op, x, head_dim, rotated, first_position, base, sign);
  const int64_t T = x.size(1), W = x.size(2), half = head_dim / 2;
  Tensor y = Tensor::empty(x.shape(), DType::F32, Device::CUDA);
  if (x.numel() == 0) return y;
  const Tensor c = Tensor::from_vector(tab.cos, {T, half}).to(Device::CUDA);
  const Tensor s = Tensor::from_vector(tab.sin, {T, half}).to(Device::CUDA);
  rope_kernel<<<grid_for(x.numel()), kThreads>>>(x.data(), c.data(), s.data(), T, W, head_dim, rotated, x.numel(),
                                                 y.data());
  check_launch(op);
  return y;
}

}  // namespace

Tensor rope_forward(const Tensor& x, int64_t head_dim, int64_t rotated, int64_t first_position, float base) {
  return rotate("rope_forward", x, head_dim, rotated, first_position, base, 1.0);
}

Tensor rope_backward(const Tensor& dy, int64_t head_dim, int64_t rotated, int64_t first_position, float base) {
  return rotate("rope_backward", dy, head_dim, rotated, first_position, base, -1.0);
}

}  // namespace nl::cuda
