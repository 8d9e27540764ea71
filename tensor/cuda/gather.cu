// Embedding lookup and its backward, and the causal mask. (concat is device-agnostic:
// tensor/cpu/shape_ops.cpp copies the parts into slices, a strided copy on the GPU.)
// The ids are checked on the host (they come from the host each step anyway). The
// embedding backward is deterministic without atomics: the host groups the positions
// by id (ids are small), and one block per distinct id adds its rows in position order,
// as the CPU's serial loop does.
#include <vector>

#include "tensor/cuda/common.cuh"
#include "tensor/cuda/kernels.h"

namespace nl::cuda {
namespace {

// out[i, c] = table[ids[i], c]
__global__ void gather_rows_kernel(const float* table, const int32_t* ids, float* out, int64_t n, int64_t C) {
  NL_GRID_STRIDE_LOOP(k, n * C) {
    const int64_t i = k / C, c = k - i * C;
    out[k] = table[(int64_t)ids[i] * C + c];
  }
}

// Block b owns the distinct id uniq[b]; its positions are pos[start[b] .. start[b+1]),
// in increasing order: dtable[uniq[b], c] = sum of dout[pos, c] over them.
__global__ void scatter_rows_kernel(const float* dout, const int32_t* uniq, const int32_t* start,
                                    const int32_t* pos, float* dtable, int64_t C) {
  const int b = blockIdx.x;
  float* row = dtable + (int64_t)uniq[b] * C;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
    float acc = 0.0f;
    for (int32_t k = start[b]; k < start[b + 1]; ++k) acc += dout[(int64_t)pos[k] * C + c];
    row[c] = acc;
  }
}

// y = x with the future (column j > i + (S - T) of each (T, S) matrix) set to value
__global__ void causal_mask_kernel(float* y, int64_t n, int64_t T, int64_t S, float value) {
  NL_GRID_STRIDE_LOOP(k, n) {
    const int64_t j = k % S, i = (k / S) % T;
    if (j > i + (S - T)) y[k] = value;
  }
}

std::vector<int32_t> checked_ids(const char* op, const Tensor& ids, int64_t vocab) {
  NL_CHECK(ids.dtype() == DType::I32, op, ": ids must be int32, got ", describe(ids));
  std::vector<int32_t> v = ids.to_ints();
  for (size_t i = 0; i < v.size(); ++i)
    NL_CHECK(v[i] >= 0 && v[i] < vocab, op, ": id ", v[i], " at position ", i, " is out of range [0, ", vocab,
             ") for ids ", describe(ids));
  return v;
}

Tensor upload_ints(const std::vector<int32_t>& v) {
  return Tensor::from_ints(v, {(int64_t)v.size()}).to(Device::CUDA);
}

}  // namespace

Tensor embedding_forward(const Tensor& table, const Tensor& ids) {
  check_f32("embedding", table);
  NL_CHECK(table.dim() == 2, "embedding: table must be (V, C), got ", describe(table));
  const int64_t V = table.size(0), C = table.size(1);
  checked_ids("embedding", ids, V);
  const Tensor t = table.contiguous(), id = ids.contiguous();
  Shape shape = ids.shape();
  shape.push_back(C);
  Tensor out = Tensor::empty(shape, DType::F32, Device::CUDA);
  const int64_t n = id.numel();
  if (n * C == 0) return out;
  gather_rows_kernel<<<grid_for(n * C), kThreads>>>(t.data(), id.idata(), out.data(), n, C);
  check_launch("embedding");
  return out;
}

Tensor embedding_backward(const Tensor& dout, const Tensor& ids, int64_t vocab) {
  check_f32("embedding_backward", dout);
  const std::vector<int32_t> v = checked_ids("embedding_backward", ids, vocab);
  const int64_t C = dout.shape().back();
  NL_CHECK(dout.numel() == ids.numel() * C, "embedding_backward: gradient ", describe(dout), " does not match ids ",
           describe(ids));
  const Tensor g = dout.contiguous();
  Tensor dtable = Tensor::zeros({vocab, C}, DType::F32, Device::CUDA);
  if (v.empty() || C == 0) return dtable;
  // counting sort of the positions by id: stable, so each id's positions stay in order
  std::vector<int32_t> count(vocab + 1, 0);
  for (int32_t id : v) count[id + 1]++;
  for (int64_t k = 0; k < vocab; ++k) count[k + 1] += count[k];
  std::vector<int32_t> pos(v.size()), next(count.begin(), count.end() - 1);
  for (size_t i = 0; i < v.size(); ++i) pos[next[v[i]]++] = (int32_t)i;
  std::vector<int32_t> uniq, start;
  for (int64_t k = 0; k < vocab; ++k)
    if (count[k + 1] > count[k]) {
      uniq.push_back((int32_t)k);
      start.push_back(count[k]);
    }
  start.push_back((int32_t)v.size());
  const Tensor d_uniq = upload_ints(uniq), d_start = upload_ints(start), d_pos = upload_ints(pos);
  scatter_rows_kernel<<<(unsigned)uniq.size(), row_threads(C)>>>(g.data(), d_uniq.idata(), d_start.idata(),
                                                                 d_pos.idata(), dtable.data(), C);
  check_launch("embedding_backward");
  return dtable;
}

Tensor causal_mask_fill(const Tensor& x, float value) {
  check_f32("causal_mask", x);
  NL_CHECK(x.dim() >= 2, "causal_mask: needs (..., T, S), got ", describe(x));
  const int64_t T = x.size(-2), S = x.size(-1);
  NL_CHECK(S >= T, "causal_mask: more queries than keys in ", describe(x));
  Tensor out = x.clone();
  const int64_t n = out.numel();
  if (n == 0) return out;
  causal_mask_kernel<<<grid_for(n), kThreads>>>(out.data(), n, T, S, value);
  check_launch("causal_mask");
  return out;
}

}  // namespace nl::cuda
