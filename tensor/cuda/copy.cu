// Copies between and on devices, and fill_. Tensors are moved as 32-bit words (float32
// and int32 are both 4 bytes). Contiguous copies are one cudaMemcpy; strided views go
// through a kernel that walks the view's strides on the GPU side.
#include <cstring>

#include "tensor/cuda/common.cuh"
#include "tensor/cuda/kernels.h"

namespace nl::cuda {
namespace {

void* raw(const Tensor& t) { return t.dtype() == DType::F32 ? (void*)t.data() : (void*)t.idata(); }

// dst[view offset i] = src[view offset i] for every element i of the shared shape
__global__ void copy_strided_kernel(uint32_t* dst, Strided ds, const uint32_t* src, Strided ss, int64_t n) {
  NL_GRID_STRIDE_LOOP(i, n) dst[ds.offset(i)] = src[ss.offset(i)];
}

__global__ void fill_kernel(uint32_t* dst, Strided ds, uint32_t bits, int64_t n) {
  NL_GRID_STRIDE_LOOP(i, n) dst[ds.offset(i)] = bits;
}

// Both on the GPU, not overlapping.
void copy_on_device(Tensor& dst, const Tensor& src) {
  const int64_t n = dst.numel();
  if (dst.is_contiguous() && src.is_contiguous()) {
    NL_CUDA_CHECK(cudaMemcpyAsync(raw(dst), raw(src), (size_t)n * 4, cudaMemcpyDeviceToDevice, 0));
    return;
  }
  copy_strided_kernel<<<grid_for(n), kThreads>>>((uint32_t*)raw(dst), make_strided("copy", dst),
                                                 (const uint32_t*)raw(src), make_strided("copy", src), n);
  check_launch("copy");
}

}  // namespace

void copy(Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  const size_t bytes = (size_t)dst.numel() * 4;
  const Device from = src.device(), to = dst.device();
  if (from == Device::CPU) {  // host -> device: stage a contiguous host copy, then one transfer
    Tensor s = src.contiguous();
    Tensor d = dst.is_contiguous() ? dst : Tensor::empty(dst.shape(), dst.dtype(), Device::CUDA);
    NL_CUDA_CHECK(cudaMemcpy(raw(d), raw(s), bytes, cudaMemcpyHostToDevice));
    if (!dst.is_contiguous()) copy_on_device(dst, d);
    return;
  }
  if (to == Device::CPU) {  // device -> host: make it contiguous on the GPU, one transfer
    Tensor s = src.contiguous();
    Tensor d = dst.is_contiguous() ? dst : Tensor::empty(dst.shape(), dst.dtype(), Device::CPU);
    NL_CUDA_CHECK(cudaMemcpy(raw(d), raw(s), bytes, cudaMemcpyDeviceToHost));  // waits for the kernels before it
    if (!dst.is_contiguous()) dst.copy_from(d);
    return;
  }
  // Views of one storage may overlap (memmove semantics on the CPU): go through a copy.
  if (dst.shares_storage(src)) {
    Tensor staged = Tensor::empty(src.shape(), src.dtype(), Device::CUDA);
    copy_on_device(staged, src);
    copy_on_device(dst, staged);
    return;
  }
  copy_on_device(dst, src);
}

void fill_(Tensor& t, float value) {
  const int64_t n = t.numel();
  if (n == 0) return;
  uint32_t bits;
  if (t.dtype() == DType::I32) {
    const int32_t v = (int32_t)value;
    std::memcpy(&bits, &v, 4);
  } else {
    std::memcpy(&bits, &value, 4);
  }
  if (bits == 0 && t.is_contiguous()) {
    NL_CUDA_CHECK(cudaMemsetAsync(raw(t), 0, (size_t)n * 4, 0));
    return;
  }
  fill_kernel<<<grid_for(n), kThreads>>>((uint32_t*)raw(t), make_strided("fill_", t), bits, n);
  check_launch("fill_");
}

}  // namespace nl::cuda
