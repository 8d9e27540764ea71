// The argument checks of cross-entropy, shared by the CPU and CUDA kernels: logits
// (N, V) float32, targets int32 (N) in [0, V) or ignore_index. The targets are read on
// the host (for a GPU tensor: one small copy back).
#pragma once
#include <vector>

#include "tensor/tensor.h"

namespace nl {

// Throws naming `op` on bad arguments; returns how many rows are not ignored.
inline int64_t check_targets(const char* op, const Tensor& logits, const Tensor& targets, int ignore_index) {
  NL_CHECK(logits.defined() && logits.dtype() == DType::F32, op, ": logits must be float32, got ", describe(logits));
  NL_CHECK(logits.dim() == 2, op, ": logits must be (N, V), got ", describe(logits));
  NL_CHECK(targets.dtype() == DType::I32 && targets.dim() == 1 && targets.size(0) == logits.size(0), op,
           ": targets must be int32 (N) for logits ", describe(logits), ", got ", describe(targets));
  const int64_t V = logits.size(1);
  std::vector<int32_t> t = targets.to_ints();
  int64_t kept = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == ignore_index) continue;
    NL_CHECK(t[i] >= 0 && t[i] < V, op, ": target ", t[i], " at row ", i, " is out of range [0, ", V, ")");
    ++kept;
  }
  return kept;
}

}  // namespace nl
