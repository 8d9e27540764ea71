// Optimizer updates over the flat parameter buffer (nn/module.h: flatten_parameters),
// each one kernel over every parameter at once: a thread finds its parameter (for the
// weight-decay flag) by binary search in the small offsets table. The update formulas
// are tensor/optim.h's, element for element, as the CPU kernels compute them. Also the two pieces of gradient clipping.
#include "tensor/cuda/common.cuh"
#include "tensor/cuda/kernels.h"

namespace nl::cuda {
namespace {

// the parameter i with offsets[i] <= j < offsets[i + 1] (empty parameters are skipped:
// the largest i with offsets[i] <= j is always a non-empty one)
__device__ int segment_of(const int32_t* offsets, int P, int64_t j) {
  int lo = 0, hi = P - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (offsets[mid] <= j) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

//   p <- p (1 - lr wd)  (decayed parameters only)
//   m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
//   p <- p - step_size m / (sqrt(v) / sqrt(1 - b2^t) + eps),  step_size = lr / (1 - b1^t)
__global__ void adamw_kernel(float* p, const float* g, float* m, float* v, const int32_t* offsets,
                             const int32_t* decay, int P, int64_t n, float lr, float wd, float b1, float b2, float eps,
                             float step_size, float bc2_sqrt) {
  NL_GRID_STRIDE_LOOP(j, n) {
    const float keep = decay[segment_of(offsets, P, j)] ? 1.0f - lr * wd : 1.0f;
    const float gj = g[j];
    float pj = p[j] * keep;
    const float mj = b1 * m[j] + (1.0f - b1) * gj;
    const float vj = b2 * v[j] + (1.0f - b2) * gj * gj;
    const float denom = sqrtf(vj) / bc2_sqrt + eps;
    pj -= step_size * (mj / denom);
    p[j] = pj;
    m[j] = mj;
    v[j] = vj;
  }
}

//   d = g + wd p (decayed parameters only);  b <- mu b + d (b <- d on the first step);  p <- p - lr b
__global__ void sgd_kernel(float* p, const float* g, float* buf, const int32_t* offsets, const int32_t* decay, int P,
                           int64_t n, float lr, float momentum, float wd, bool started) {
  NL_GRID_STRIDE_LOOP(j, n) {
    const float w = decay[segment_of(offsets, P, j)] ? wd : 0.0f;
    const float d = g[j] + w * p[j];
    const float b = started ? momentum * buf[j] + d : d;
    buf[j] = b;
    p[j] -= lr * b;
  }
}

constexpr int kSquareBlocks = 1024;

// partial[block] = sum of x^2 over this block's grid-stride share, in double
__global__ void sum_squares_kernel(const float* x, int64_t n, double* partial) {
  double acc = 0.0;
  NL_GRID_STRIDE_LOOP(i, n) acc += (double)x[i] * x[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

__global__ void sum_partials_kernel(const double* partial, int n, double* out) {
  double acc = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += partial[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) *out = acc;
}

__global__ void scale_kernel(float* x, int64_t n, float s) {
  NL_GRID_STRIDE_LOOP(i, n) x[i] *= s;
}

void check_flat(const char* op, const Tensor& t, int64_t n) {
  check_f32(op, t);
  NL_CHECK(t.is_contiguous() && t.numel() == n, op, ": expected a contiguous buffer of ", n, " elements, got ",
           describe(t));
}

}  // namespace

void adamw_step(Tensor& values, const Tensor& grads, Tensor& m, Tensor& v, const ParamSegments& seg,
                const AdamWScalars& s) {
  const int64_t n = values.numel();
  for (const Tensor* t : std::initializer_list<const Tensor*>{&values, &grads, &m, &v}) check_flat("adamw", *t, n);
  if (n == 0) return;
  adamw_kernel<<<grid_for(n), kThreads>>>(values.data(), grads.data(), m.data(), v.data(), seg.device_offsets.idata(),
                                          seg.device_decay.idata(), (int)seg.count(), n, s.lr, s.weight_decay,
                                          s.beta1, s.beta2, s.eps, s.step_size, s.bc2_sqrt);
  check_launch("adamw");
}

void sgd_step(Tensor& values, const Tensor& grads, Tensor& buf, const ParamSegments& seg, float lr, float momentum,
              float weight_decay, bool started) {
  const int64_t n = values.numel();
  for (const Tensor* t : std::initializer_list<const Tensor*>{&values, &grads, &buf}) check_flat("sgd", *t, n);
  if (n == 0) return;
  sgd_kernel<<<grid_for(n), kThreads>>>(values.data(), grads.data(), buf.data(), seg.device_offsets.idata(),
                                        seg.device_decay.idata(), (int)seg.count(), n, lr, momentum, weight_decay,
                                        started);
  check_launch("sgd");
}

double sum_squares(const Tensor& x) {
  check_f32("clip_grad_norm", x);
  const Tensor c = x.contiguous();
  Tensor scratch = Tensor::empty({2 * (kSquareBlocks + 1)}, DType::F32, Device::CUDA);  // doubles
  double* partial = reinterpret_cast<double*>(scratch.data());
  sum_squares_kernel<<<kSquareBlocks, kThreads>>>(c.data(), c.numel(), partial);
  sum_partials_kernel<<<1, kThreads>>>(partial, kSquareBlocks, partial + kSquareBlocks);
  check_launch("clip_grad_norm");
  double total = 0.0;
  NL_CUDA_CHECK(cudaMemcpy(&total, partial + kSquareBlocks, sizeof total, cudaMemcpyDeviceToHost));
  return total;
}

void scale_(Tensor& x, float s) {
  check_f32("clip_grad_norm", x);
  NL_CHECK(x.is_contiguous(), "clip_grad_norm: gradients must be contiguous, got ", describe(x));
  if (x.numel() == 0) return;
  scale_kernel<<<grid_for(x.numel()), kThreads>>>(x.data(), x.numel(), s);
  check_launch("clip_grad_norm");
}

}  // namespace nl::cuda
