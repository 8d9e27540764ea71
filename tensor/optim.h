// Optimizer kernels over a flat parameter buffer (nn/module.h: flatten_parameters):
// the AdamW and SGD updates and the two halves of global-norm gradient clipping, each
// one loop (CPU, tensor/cpu/optim.cpp) or one kernel (CUDA, tensor/cuda/optim.cu) over
// every parameter at once. The optimizers of train/optim/ call these and keep the state.
#pragma once
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace nl {

// Where each parameter sits in the flat buffer: parameter i occupies
// [offsets[i], offsets[i + 1]), and decay[i] says whether weight decay applies to it.
// For buffers on the GPU the two tables are also kept there (int32), made once.
struct ParamSegments {
  std::vector<int64_t> offsets;  // P + 1 entries; the last is the buffer's length
  std::vector<bool> decay;       // P entries
  Tensor device_offsets, device_decay;  // int32 (P + 1) and (P) on the GPU; undefined on the CPU
  int64_t count() const { return (int64_t)decay.size(); }
};
// starts: each parameter's first element; total: the buffer's length
ParamSegments make_param_segments(const std::vector<int64_t>& starts, int64_t total, const std::vector<bool>& decay,
                                  Device device);

// The scalars of AdamW's step t, computed once on the host (the bias corrections in
// double, rounded once, as PyTorch does): step_size = lr / (1 - b1^t),
// bc2_sqrt = sqrt(1 - b2^t).
struct AdamWScalars {
  float lr, weight_decay, beta1, beta2, eps, step_size, bc2_sqrt;
};

// values, grads, m, v: contiguous float32 (n), one device. For each element j of
// parameter i (decoupled weight decay, torch.optim.AdamW):
//   p <- p (1 - lr wd)  if decay[i]
//   m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
//   p <- p - step_size m / (sqrt(v) / bc2_sqrt + eps)
void adamw_step(Tensor& values, const Tensor& grads, Tensor& m, Tensor& v, const ParamSegments& segments,
                const AdamWScalars& s);

// values, grads, buf: contiguous float32 (n). SGD with momentum in PyTorch's form:
//   d = g + wd p (if decay[i]);  b <- mu b + d (b <- d on the first step);  p <- p - lr b
void sgd_step(Tensor& values, const Tensor& grads, Tensor& buf, const ParamSegments& segments, float lr,
              float momentum, float weight_decay, bool started);

// The sum of x^2 over a contiguous float32 tensor, accumulated in double. On the CPU
// it adds fixed blocks of 16 384 elements in block order, so the result has the same
// bits at any thread count.
double sum_squares(const Tensor& x);
// x *= s in place (contiguous float32).
void scale_(Tensor& x, float s);

}  // namespace nl
