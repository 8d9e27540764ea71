// The one place where an op picks its backend: every public op of tensor/ops.h and
// tensor/norms.h starts with `if (on_cuda("op", {&a, &b})) return cuda::op(a, b);`
// and otherwise runs its CPU kernel. All defined inputs must share one device; mixing
// them is a user error named here once, for every op alike.
#pragma once
#include <initializer_list>

#include "tensor/tensor.h"

namespace nl {

// The device of the defined tensors in `inputs` (CPU when none is defined). Throws
// "<op>: inputs on different devices: float32 (2, 3) on cpu and float32 (3) on cuda".
inline Device common_device(const char* op, std::initializer_list<const Tensor*> inputs) {
  const Tensor* first = nullptr;
  for (const Tensor* t : inputs) {
    if (!t->defined()) continue;
    if (!first) { first = t; continue; }
    NL_CHECK(t->device() == first->device(), op, ": inputs on different devices: ", describe(*first), " and ",
             describe(*t));
  }
  return first ? first->device() : Device::CPU;
}

inline bool on_cuda(const char* op, std::initializer_list<const Tensor*> inputs) {
  return common_device(op, inputs) == Device::CUDA;
}

}  // namespace nl
