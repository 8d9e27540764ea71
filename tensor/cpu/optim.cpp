// CPU kernels of tensor/optim.h: one OpenMP loop per parameter (AdamW), per buffer
// (SGD, scaling), or per fixed block (the sum of squares).
#include "tensor/optim.h"

#include <algorithm>
#include <cmath>

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
  float* p = values.data();
  const float* g = grads.data();
  float* pm = m.data();
  float* pv = v.data();
  const float b1 = s.beta1, b2 = s.beta2;
  for (int64_t i = 0; i < seg.count(); ++i) {
    const int64_t begin = begin_of(seg, i), end = end_of(seg, i);
    const float keep = seg.decay[i] ? 1.0f - s.lr * s.weight_decay : 1.0f;
#pragma omp parallel for if (end - begin > kParallelGrain)
    for (int64_t j = begin; j < end; ++j) {
      p[j] *= keep;
      pm[j] = b1 * pm[j] + (1.0f - b1) * g[j];
      pv[j] = b2 * pv[j] + (1.0f - b2) * g[j] * g[j];
      const float denom = std::sqrt(pv[j]) / s.bc2_sqrt + s.eps;
      p[j] -= s.step_size * (pm[j] / denom);
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
    double s = 0;
    for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) s += (double)g[i] * g[i];
    block_ss[b] = s;
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
