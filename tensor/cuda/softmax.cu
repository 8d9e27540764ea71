// Softmax and log-softmax over the last axis, and cross-entropy fused with the
// log-softmax, one block per row. The row's maximum and sum of exponentials come from
// one pass (an "online" pair (m, s) per thread, merged across the block by rescaling
// the smaller maximum's sum); a second pass writes the outputs. Formulas as in
// tensor/cpu/softmax.cpp and cross_entropy.cpp; a row of all -inf gives NaN as there.
#include <vector>

#include "tensor/cuda/common.cuh"
#include "tensor/cuda/kernels.h"
#include "tensor/cross_entropy_targets.h"

namespace nl::cuda {
namespace {

// (m, s) stands for s * e^m; merging rescales to the larger m. -inf marks "nothing yet".
struct MaxSum {
  float m, s;
};
__device__ inline MaxSum merge(MaxSum a, MaxSum b) {
  if (a.m == -INFINITY) return b;
  if (b.m == -INFINITY) return a;
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

// The row's max m and sum of exp(x - m), in every thread of the block.
__device__ MaxSum row_max_sum(const float* x, int64_t C) {
  MaxSum t{-INFINITY, 0.0f};
  for (int64_t j = threadIdx.x; j < C; j += blockDim.x) {
    const float v = x[j];
    if (v != v) t = {v, 1.0f};  // NaN: it wins every later merge below
    else if (t.m != t.m) continue;
    else t = merge(t, MaxSum{v, 1.0f});
  }
  // a NaN maximum poisons the result, as on the CPU (every output of the row NaN)
  for (int o = 16; o > 0; o >>= 1) {
    MaxSum u{__shfl_xor_sync(0xffffffffu, t.m, o), __shfl_xor_sync(0xffffffffu, t.s, o)};
    t = (t.m != t.m || u.m != u.m) ? MaxSum{NAN, NAN} : merge(t, u);
  }
  __shared__ float ms[32], ss[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  __syncthreads();
  if (lane == 0) {
    ms[warp] = t.m;
    ss[warp] = t.s;
  }
  __syncthreads();
  MaxSum total{-INFINITY, 0.0f};
  for (int w = 0; w < warps; ++w) {
    const MaxSum u{ms[w], ss[w]};
    total = (total.m != total.m || u.m != u.m) ? MaxSum{NAN, NAN} : merge(total, u);
  }
  return total;
}

// y = exp(x - m) / s  or  y = x - (m + log s)
template <bool kLog>
__global__ void softmax_kernel(const float* x, float* y, int64_t C) {
  const int64_t r = blockIdx.x;
  const float* xr = x + r * C;
  float* yr = y + r * C;
  const MaxSum t = row_max_sum(xr, C);
  if (kLog) {
    const float lse = t.m + logf(t.s);
    for (int64_t j = threadIdx.x; j < C; j += blockDim.x) yr[j] = xr[j] - lse;
  } else {
    // an all -inf row: m = -inf, s = 0, and (x - m) is NaN, as on the CPU
    const float m = t.m == -INFINITY ? NAN : t.m;
    const float inv = 1.0f / t.s;
    for (int64_t j = threadIdx.x; j < C; j += blockDim.x) yr[j] = expf(xr[j] - m) * inv;
  }
}

// softmax:     dx_j = y_j (dy_j - sum_k dy_k y_k)
// log_softmax: dx_j = dy_j - exp(y_j) sum_k dy_k
template <bool kLog>
__global__ void softmax_backward_kernel(const float* y, const float* dy, float* dx, int64_t C) {
  const int64_t r = blockIdx.x;
  const float *yr = y + r * C, *gr = dy + r * C;
  float* dr = dx + r * C;
  float acc = 0.0f;
  for (int64_t j = threadIdx.x; j < C; j += blockDim.x) acc += kLog ? gr[j] : gr[j] * yr[j];
  const float total = block_sum(acc);
  for (int64_t j = threadIdx.x; j < C; j += blockDim.x)
    dr[j] = kLog ? gr[j] - expf(yr[j]) * total : yr[j] * (gr[j] - total);
}

// lse_r = log sum_j exp(logits[r, j]);  row_loss_r = lse_r - logits[r, target_r] (0 if ignored)
__global__ void cross_entropy_kernel(const float* logits, const int32_t* targets, int64_t V, int ignore_index,
                                     float* lse, float* row_loss) {
  const int64_t r = blockIdx.x;
  const float* xr = logits + r * V;
  const MaxSum t = row_max_sum(xr, V);
  if (threadIdx.x == 0) {
    const float l = t.m + logf(t.s);
    lse[r] = l;
    const int32_t target = targets[r];
    row_loss[r] = target == ignore_index ? 0.0f : l - xr[target];
  }
}

// dlogits[r, j] = (exp(logits[r, j] - lse_r) - [j == target_r]) * scale; 0 on ignored rows
__global__ void cross_entropy_backward_kernel(const float* logits, const int32_t* targets, const float* lse,
                                              float scale, int ignore_index, float* dx, int64_t N, int64_t V) {
  NL_GRID_STRIDE_LOOP(i, N * V) {
    const int64_t r = i / V, j = i - r * V;
    const int32_t target = targets[r];
    if (target == ignore_index) {
      dx[i] = 0.0f;
      continue;
    }
    const float p = expf(logits[i] - lse[r]) * scale;
    dx[i] = j == target ? p - scale : p;
  }
}

__global__ void scale_scalar_kernel(const float* in, float scale, float* out) { *out = *in * scale; }

template <bool kLog>
Tensor softmax_rows(const char* op, const Tensor& x) {
  check_f32(op, x);
  NL_CHECK(x.dim() >= 1, op, ": needs at least one axis, got ", describe(x));
  const Tensor c = x.contiguous();
  Tensor out = Tensor::empty(x.shape(), DType::F32, Device::CUDA);
  const int64_t C = x.shape().back(), rows = C ? x.numel() / C : 0;
  if (rows == 0) return out;
  softmax_kernel<kLog><<<(unsigned)rows, row_threads(C)>>>(c.data(), out.data(), C);
  check_launch(op);
  return out;
}

template <bool kLog>
Tensor softmax_backward_rows(const char* op, const Tensor& y, const Tensor& dy) {
  check_f32(op, y);
  check_f32(op, dy);
  NL_CHECK(y.shape() == dy.shape(), op, ": output ", describe(y), " and gradient ", describe(dy), " differ");
  const Tensor yc = y.contiguous(), gc = dy.contiguous();
  Tensor dx = Tensor::empty(y.shape(), DType::F32, Device::CUDA);
  const int64_t C = y.dim() ? y.shape().back() : 1, rows = C ? y.numel() / C : 0;
  if (rows == 0) return dx;
  softmax_backward_kernel<kLog><<<(unsigned)rows, row_threads(C)>>>(yc.data(), gc.data(), dx.data(), C);
  check_launch(op);
  return dx;
}

}  // namespace

Tensor softmax(const Tensor& x) { return softmax_rows<false>("softmax", x); }
Tensor log_softmax(const Tensor& x) { return softmax_rows<true>("log_softmax", x); }
Tensor softmax_backward(const Tensor& y, const Tensor& dy) {
  return softmax_backward_rows<false>("softmax_backward", y, dy);
}
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy) {
  return softmax_backward_rows<true>("log_softmax_backward", y, dy);
}

// loss = mean over kept rows of (lse_r - logits[r, target_r]); NaN when every row is ignored
Tensor cross_entropy_forward(const Tensor& logits, const Tensor& targets, int ignore_index, Tensor& lse) {
  check_f32("cross_entropy", logits);
  const int64_t kept = check_targets("cross_entropy", logits, targets, ignore_index);
  const int64_t N = logits.size(0), V = logits.size(1);
  const Tensor x = logits.contiguous(), t = targets.contiguous();
  lse = Tensor::empty({N}, DType::F32, Device::CUDA);
  Tensor row_loss = Tensor::empty({N}, DType::F32, Device::CUDA);
  Tensor loss = Tensor::empty({}, DType::F32, Device::CUDA);
  if (kept == 0 || V == 0) {
    loss.fill_(NAN);
    return loss;
  }
  cross_entropy_kernel<<<(unsigned)N, row_threads(V)>>>(x.data(), t.idata(), V, ignore_index, lse.data(),
                                                        row_loss.data());
  check_launch("cross_entropy");
  const Tensor total = cuda::sum(row_loss, {}, false);  // in double, in a fixed order
  scale_scalar_kernel<<<1, 1>>>(total.data(), (float)(1.0 / (double)kept), loss.data());
  check_launch("cross_entropy");
  return loss;
}

Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse, float dloss,
                              int ignore_index) {
  check_f32("cross_entropy_backward", logits);
  const int64_t kept = check_targets("cross_entropy_backward", logits, targets, ignore_index);
  const int64_t N = logits.size(0), V = logits.size(1);
  NL_CHECK(lse.numel() == N, "cross_entropy_backward: lse ", describe(lse), " does not match ", describe(logits));
  check_f32("cross_entropy_backward", lse);
  const Tensor x = logits.contiguous(), t = targets.contiguous(), l = lse.contiguous();
  Tensor dx = Tensor::empty({N, V}, DType::F32, Device::CUDA);
  if (N * V == 0) return dx;
  const float scale = kept ? dloss / (float)kept : 0.0f;
  cross_entropy_backward_kernel<<<grid_for(N * V), kThreads>>>(x.data(), t.idata(), l.data(), scale, ignore_index,
                                                               dx.data(), N, V);
  check_launch("cross_entropy_backward");
  return dx;
}

}  // namespace nl::cuda
