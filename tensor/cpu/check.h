// Checks shared by the CPU kernels: every op refuses tensors it cannot handle with a
// message that names it and describes the offending tensor.
#pragma once
#include "tensor/tensor.h"

namespace nl {

// The op runs on the CPU only in this build, on float32 data.
inline void check_cpu_f32(const char* op, const Tensor& t) {
  NL_CHECK(t.defined(), op, ": undefined tensor");
  NL_CHECK(t.device() == Device::CPU, op, " has no CUDA build (tensor ", describe(t), ")");
  NL_CHECK(t.dtype() == DType::F32, op, ": expected float32, got ", describe(t));
}

inline void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  NL_CHECK(a.device() == b.device(), op, ": tensors on different devices: ", describe(a), " and ", describe(b));
}

}  // namespace nl
