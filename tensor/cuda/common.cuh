// What every CUDA kernel file shares: error checks, launch sizes, strided indexing and
// the warp-shuffle reductions. Included by tensor/cuda/*.cu only (device code).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "tensor/error.h"
#include "tensor/tensor.h"

// Throws nl::Error naming the failed call and CUDA's description of the error.
#define NL_CUDA_CHECK(expr)                                                                  \
  do {                                                                                       \
    cudaError_t nl_cuda_err_ = (expr);                                                       \
    if (nl_cuda_err_ != cudaSuccess) ::nl::fail("CUDA error in ", #expr, ": ", cudaGetErrorString(nl_cuda_err_)); \
  } while (0)

// for (i over [0, n)) spread over the whole grid, so a grid of any size covers any n.
#define NL_GRID_STRIDE_LOOP(i, n) \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

namespace nl::cuda {

constexpr int kThreads = 256;  // threads per block of the elementwise and row kernels
constexpr int kMaxDims = 8;    // dims a strided operand may have

// Blocks for a grid-stride loop over n elements (capped: the loop covers the rest).
inline unsigned grid_for(int64_t n, int threads = kThreads) {
  const int64_t blocks = (n + threads - 1) / threads;
  return (unsigned)std::max<int64_t>(1, std::min<int64_t>(blocks, 1 << 20));
}

// After a launch: a bad configuration shows up here; a fault inside a kernel shows up at
// the next call that synchronises (a copy to the host), named by that call.
inline void check_launch(const char* op) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) fail(op, ": CUDA kernel launch failed: ", cudaGetErrorString(e));
}

// A float32 tensor on the GPU (the public op already checked that all inputs share a device).
inline void check_f32(const char* op, const Tensor& t) {
  NL_CHECK(t.defined(), op, ": undefined tensor");
  NL_CHECK(t.device() == Device::CUDA, op, ": expected a tensor on cuda, got ", describe(t));
  NL_CHECK(t.dtype() == DType::F32, op, ": expected float32, got ", describe(t));
}

// Shape and strides of a view, passed to kernels by value: offset(i) is the element
// offset of the i-th element in row-major order of `shape`.
struct Strided {
  int nd = 0;
  int64_t shape[kMaxDims];
  int64_t stride[kMaxDims];
  __host__ __device__ int64_t offset(int64_t linear) const {
    int64_t off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      const int64_t i = linear % shape[d];
      linear /= shape[d];
      off += i * stride[d];
    }
    return off;
  }
};

inline Strided make_strided(const char* op, const Shape& shape, const Shape& strides) {
  NL_CHECK(shape.size() <= (size_t)kMaxDims, op, ": tensors of more than ", kMaxDims,
           " dims are not supported on cuda, got ", to_string(shape));
  Strided s;
  s.nd = (int)shape.size();
  for (int d = 0; d < s.nd; ++d) {
    s.shape[d] = shape[d];
    s.stride[d] = strides[d];
  }
  return s;
}
inline Strided make_strided(const char* op, const Tensor& t) { return make_strided(op, t.shape(), t.strides()); }

// ---- reductions inside a warp and a block. Blocks are launched with a multiple of 32
// threads, so every warp is full and the full-mask shuffles are valid. The xor
// butterfly leaves the total in every lane; the block versions return it to every thread.
template <typename T>
__device__ inline T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// max that propagates NaN (as PyTorch's max does)
__device__ inline float nan_max(float a, float b) {
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
}

__device__ inline float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

template <typename T>
__device__ inline T block_sum(T v) {
  __shared__ T warp_totals[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  v = warp_sum(v);
  __syncthreads();  // the previous call's readers are done with warp_totals
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  return warp_sum(lane < warps ? warp_totals[lane] : T(0));
}

__device__ inline float block_max(float v) {
  __shared__ float warp_totals[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  return warp_max(lane < warps ? warp_totals[lane] : -INFINITY);
}

// Threads for a block that works on one row of `n` elements: a multiple of 32, at most kThreads.
inline int row_threads(int64_t n) {
  return (int)std::min<int64_t>(kThreads, std::max<int64_t>(32, (n + 31) / 32 * 32));
}

}  // namespace nl::cuda
