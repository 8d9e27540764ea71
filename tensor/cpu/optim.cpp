// CPU kernels of tensor/optim.h: one OpenMP loop per parameter (AdamW), per buffer
// (SGD, scaling), or per fixed block (the sum of squares).
#include "tensor/optim.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/threads.h"

namespace nl {
namespace {

void check_flat(const char* op, const Tensor& t, int64_t n) {
  NL_CHECK(t.dtype() == DType::F32 && t.is_contiguous() && t.numel() == n, op,
           ": expected a contiguous float32 buffer of ", n, " elements, got ", describe(t));
}

// the element range of parameter i
int64_t begin_of(const ParamSegments& s, int64_t i) { return s.offsets[i]; }
int64_t end_of(const ParamSegments& s, int64_t i) { return s.offsets[i + 1]; }

}  // namespace

ParamSegments make_param_segments(const std::vector<int64_t>& starts, int64_t total, const std::vector<bool>& decay,
                                  Device device) {
  NL_CHECK(starts.size() == decay.size(), "optimizer: ", starts.size(), " parameter offsets for ", decay.size(),
           " decay flags");
  ParamSegments s;
  s.offsets = starts;
  s.offsets.push_back(total);
  s.decay = decay;
  for (size_t i = 0; i + 1 < s.offsets.size(); ++i)
    NL_CHECK(s.offsets[i] <= s.offsets[i + 1], "optimizer: parameter offsets must not decrease");
  if (device == Device::CUDA) {
    NL_CHECK(total < (1LL << 31), "optimizer: ", total, " parameters do not fit the int32 offsets of the cuda kernel");
    std::vector<int32_t> off(s.offsets.begin(), s.offsets.end()), dec;
    for (bool d : decay) dec.push_back(d ? 1 : 0);
    s.device_offsets = Tensor::from_ints(off, {(int64_t)off.size()}).to(Device::CUDA);
    s.device_decay = Tensor::from_ints(dec, {(int64_t)dec.size()}).to(Device::CUDA);
  }
  return s;
}

void adamw_step(Tensor& values, const Tensor& grads, Tensor& m, Tensor& v, const ParamSegments& seg,
                const AdamWScalars& s) {
  if (on_cuda("adamw", {&values, &grads, &m, &v})) return cuda::adamw_step(values, grads, m, v, seg, s);
  const int64_t n = values.numel();
  for (const Tensor* t : std::initializer_list<const Tensor*>{&values, &grads, &m, &v}) check_flat("adamw", *t, n);
  NL_CHECK(seg.offsets.back() == n, "adamw: the segments cover ", seg.offsets.back(), " elements, the buffer ", n);
  // This loop is vectorised (2.9 -> 0.6 ns an element on one thread) only because the
  // build has -fno-math-errno (std::sqrt's errno branch kept it scalar) and the simd
  // loop sits inside the parallel one (an `if` clause on a combined `parallel for simd`
  // also switches the simd off when false). restrict and the scalars in locals spare
  // the compiler alias checks and reloads of s.
  float* __restrict p = values.data();
  const float* __restrict g = grads.data();
  float* __restrict pm = m.data();
  float* __restrict pv = v.data();
  const float b1 = s.beta1, b2 = s.beta2, eps = s.eps, step_size = s.step_size, bc2_sqrt = s.bc2_sqrt;
  // the parameters cut into pieces of at most kPiece elements, all in one parallel loop:
  // a region per parameter cost a thread wake-up for each of the many small ones
  constexpr int64_t kPiece = 16384;
  struct Piece {
    int64_t begin, end;
    float keep;
  };
  std::vector<Piece> pieces;
  for (int64_t i = 0; i < seg.count(); ++i) {
    const float keep = seg.decay[i] ? 1.0f - s.lr * s.weight_decay : 1.0f;
    for (int64_t b = begin_of(seg, i); b < end_of(seg, i); b += kPiece)
      pieces.push_back({b, std::min(b + kPiece, end_of(seg, i)), keep});
  }
#pragma omp parallel for schedule(static) if (n > kParallelGrain)
  for (size_t k = 0; k < pieces.size(); ++k) {
    const float keep = pieces[k].keep;
#pragma omp simd
    for (int64_t j = pieces[k].begin; j < pieces[k].end; ++j) {
      p[j] *= keep;
      pm[j] = b1 * pm[j] + (1.0f - b1) * g[j];
      pv[j] = b2 * pv[j] + (1.0f - b2) * g[j] * g[j];
      const float denom = std::sqrt(pv[j]) / bc2_sqrt + eps;
      p[j] -= step_size * (pm[j] / denom);
    }
  }
}

void sgd_step(Tensor& values, const Tensor& grads, Tensor& buf, const ParamSegments& seg, float lr, float momentum,
              float weight_decay, bool started) {
  if (on_cuda("sgd", {&values, &grads, &buf}))
    return cuda::sgd_step(values, grads, buf, seg, lr, momentum, weight_decay, started);
  const int64_t n = values.numel();
  for (const Tensor* t : std::initializer_list<const Tensor*>{&values, &grads, &buf}) check_flat("sgd", *t, n);
  float* p = values.data();
  const float* g = grads.data();
  float* b = buf.data();
  for (int64_t i = 0; i < seg.count(); ++i) {
    const float wd = seg.decay[i] ? weight_decay : 0.0f;
    for (int64_t j = begin_of(seg, i); j < end_of(seg, i); ++j) {
      const float d = g[j] + wd * p[j];
      b[j] = started ? momentum * b[j] + d : d;  // the first step starts the buffer at d
      p[j] -= lr * b[j];
    }
  }
}

double sum_squares(const Tensor& x) {
  if (on_cuda("sum_squares", {&x})) return cuda::sum_squares(x);
  check_flat("sum_squares", x, x.numel());
  const float* g = x.data();
  const int64_t n = x.numel();
  // sums of fixed blocks, added in block order: the same bits at any thread count and
  // in any order the threads finish (an OpenMP reduction adds partials as they come)
  constexpr int64_t kBlock = 16384;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> block_ss((size_t)blocks, 0.0);
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t b = 0; b < blocks; ++b) {
    // eight running sums, element i into lane i % 8, then the lanes in a fixed order: one
    // chain of dependent adds ran at 1.1 ns an element; independent lanes vectorise
    const int64_t first = b * kBlock, last = std::min(n, (b + 1) * kBlock);
    double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = first;
    for (; i + 8 <= last; i += 8)
      for (int k = 0; k < 8; ++k) lane[k] += (double)g[i + k] * g[i + k];
    for (int k = 0; i < last; ++i, ++k) lane[k] += (double)g[i] * g[i];
    block_ss[b] = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  }
  double ss = 0;
  for (double s : block_ss) ss += s;
  return ss;
}

void scale_(Tensor& x, float s) {
  if (on_cuda("scale_", {&x})) return cuda::scale_(x, s);
  check_flat("scale_", x, x.numel());
  float* g = x.data();
  const int64_t n = x.numel();
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i) g[i] *= s;
}

}  // namespace nl
