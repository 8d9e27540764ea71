// Embedding lookup (a row gather) and its backward (a row scatter-add).
#include <cstring>

#include "tensor/cpu/check.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"

namespace nl {
namespace {

void check_ids(const char* op, const Tensor& ids, int64_t vocab) {
  NL_CHECK(ids.dtype() == DType::I32, op, ": ids must be int32, got ", describe(ids));
  NL_CHECK(ids.device() == Device::CPU, op, " has no CUDA build (ids ", describe(ids), ")");
  Tensor c = ids.contiguous();
  const int32_t* p = c.idata();
  for (int64_t i = 0; i < c.numel(); ++i)
    NL_CHECK(p[i] >= 0 && p[i] < vocab, op, ": id ", p[i], " at position ", i, " is out of range [0, ", vocab,
             ") for ids ", describe(ids));
}

}  // namespace

// table (V, C), ids (...) -> out (..., C):  out[t] = table[ids[t]]
Tensor embedding_forward(const Tensor& table, const Tensor& ids) {
  if (on_cuda("embedding", {&table, &ids})) return cuda::embedding_forward(table, ids);
  check_cpu_f32("embedding", table);
  NL_CHECK(table.dim() == 2, "embedding: table must be (V, C), got ", describe(table));
  const int64_t V = table.size(0), C = table.size(1);
  check_ids("embedding", ids, V);
  Tensor t = table.contiguous();
  Tensor id = ids.contiguous();
  Shape shape = ids.shape();
  shape.push_back(C);
  Tensor out = Tensor::empty(shape);
  const int32_t* p = id.idata();
  for (int64_t i = 0; i < id.numel(); ++i)
    std::memcpy(out.data() + i * C, t.data() + (int64_t)p[i] * C, (size_t)C * sizeof(float));
  return out;
}

// dtable[v] = sum over positions t with ids[t] == v of dout[t]; serial, so that
// repeated ids add up in a fixed order.
Tensor embedding_backward(const Tensor& dout, const Tensor& ids, int64_t vocab) {
  if (on_cuda("embedding_backward", {&dout, &ids})) return cuda::embedding_backward(dout, ids, vocab);
  check_cpu_f32("embedding_backward", dout);
  check_ids("embedding_backward", ids, vocab);
  const int64_t C = dout.shape().back();
  NL_CHECK(dout.numel() == ids.numel() * C, "embedding_backward: gradient ", describe(dout), " does not match ids ",
           describe(ids));
  Tensor g = dout.contiguous();
  Tensor id = ids.contiguous();
  Tensor dtable = Tensor::zeros({vocab, C});
  const int32_t* p = id.idata();
  for (int64_t i = 0; i < id.numel(); ++i) {
    float* row = dtable.data() + (int64_t)p[i] * C;
    const float* src = g.data() + i * C;
    for (int64_t j = 0; j < C; ++j) row[j] += src[j];
  }
  return dtable;
}

}  // namespace nl
