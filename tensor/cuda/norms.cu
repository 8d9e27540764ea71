// The five norms' fused kernels on the GPU: the formulas of tensor/cpu/layernorm.cpp,
// rmsnorm.cpp, dyt.cpp and bhyt.cpp (derivations in docs/norms/*.md), on contiguous
// float32 rows x (N, C).
//
// Forward: one block per row. The row is read once from global memory into shared
// memory (when C * 4 bytes fit in 48 KiB); the statistics (mean, then the variance
// about it, both in double and reduced with warp shuffles) and the output are computed
// from that copy.
// Backward: the rows are split into a fixed number of chunks (kChunks, or N when
// smaller), one block per chunk walking its rows in order. Per row: one pass for the
// row's reductions, one for dx. The parameter gradients (sums over rows) accumulate in
// double per chunk, each column owned by one thread (no atomics), and a second kernel
// adds the chunks in chunk order: the same bits on every run.
#include <cmath>

#include "tensor/cuda/common.cuh"
#include "tensor/cuda/kernels.h"

namespace nl::cuda {
namespace {

constexpr int64_t kChunks = 256;
constexpr int64_t kMaxCachedC = 48 * 1024 / 4;

// ---- argument checks (the CPU's norms_common.h, for tensors on the GPU)

void check_rows(const char* op, const char* name, const Tensor& t) {
  NL_CHECK(t.defined(), op, ": ", name, " is undefined (expected float32 (N, C) on cuda)");
  check_f32(op, t);
  NL_CHECK(t.dim() == 2 && t.size(1) >= 1, op, ": ", name, " must be (N, C) with C >= 1, got ", describe(t));
  NL_CHECK(t.is_contiguous(), op, ": ", name, " ", describe(t), " must be contiguous");
}
void check_vector(const char* op, const char* name, const Tensor& t, int64_t n) {
  NL_CHECK(t.defined(), op, ": ", name, " is undefined (expected float32 (", n, ") on cuda)");
  check_f32(op, t);
  NL_CHECK(t.dim() == 1 && t.size(0) == n, op, ": ", name, " must be (", n, "), got ", describe(t));
  NL_CHECK(t.is_contiguous(), op, ": ", name, " ", describe(t), " must be contiguous");
}
// a learnable scalar (alpha, lambda): the kernels read it from GPU memory, no copy back
const float* scalar_ptr(const char* op, const char* name, const Tensor& t) {
  NL_CHECK(t.defined(), op, ": ", name, " is undefined (expected float32 (1) on cuda)");
  check_f32(op, t);
  NL_CHECK(t.numel() == 1, op, ": ", name, " must hold one element, got ", describe(t));
  return t.data();
}
void check_same_shape(const char* op, const char* name, const Tensor& t, const Tensor& x) {
  NL_CHECK(t.shape() == x.shape(), op, ": ", name, " ", describe(t), " must have the shape of x ", describe(x));
}

Tensor empty(const Shape& s) { return Tensor::empty(s, DType::F32, Device::CUDA); }

// ---- shared device pieces

// The row xr (C) in shared memory when it fits, else xr itself. Syncs first, so a
// block may stage one row after another.
__device__ const float* stage_row(const float* xr, int64_t C, bool cached, float* cache) {
  if (!cached) return xr;
  __syncthreads();
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) cache[c] = xr[c];
  __syncthreads();
  return cache;
}

// mu and s^2 = mean((x - mu)^2) of a row, in double, in every thread.
__device__ void row_mean_var(const float* row, int64_t C, double& mu, double& var) {
  double s = 0.0;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) s += row[c];
  mu = block_sum(s) / (double)C;
  double ss = 0.0;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
    const double d = (double)row[c] - mu;
    ss += d * d;
  }
  var = block_sum(ss) / (double)C;
}

// rows [begin, end) of chunk blockIdx.x out of gridDim.x chunks
__device__ int64_t chunk_begin(int64_t N) { return (int64_t)blockIdx.x * N / gridDim.x; }
__device__ int64_t chunk_end(int64_t N) { return ((int64_t)blockIdx.x + 1) * N / gridDim.x; }

// out[j] = sum over chunks k of partial[k * width + first + j], in chunk order
__global__ void chunk_totals_kernel(const double* partial, int64_t chunks, int64_t width, int64_t first,
                                    int64_t count, float* out) {
  NL_GRID_STRIDE_LOOP(j, count) {
    double s = 0.0;
    for (int64_t k = 0; k < chunks; ++k) s += partial[k * width + first + j];
    out[j] = (float)s;
  }
}

// Zeroed per-chunk double accumulators for a backward over N rows, `width` per chunk.
struct Partials {
  int64_t chunks, width;
  Tensor storage;
  Partials(int64_t N, int64_t w) : chunks(std::min(N, kChunks)), width(w) {
    storage = Tensor::zeros({std::max<int64_t>(1, 2 * chunks * width)}, DType::F32, Device::CUDA);
  }
  double* data() const { return reinterpret_cast<double*>(storage.data()); }
  void total(int64_t first, int64_t count, Tensor& out) const {
    if (chunks == 0) {
      out.fill_(0.0f);
      return;
    }
    chunk_totals_kernel<<<grid_for(count), kThreads>>>(data(), chunks, width, first, count, out.data());
    check_launch("norm backward");
  }
};

size_t cache_bytes(int64_t C) { return C <= kMaxCachedC ? (size_t)C * sizeof(float) : 0; }

// ---- LayerNorm

// mu = mean(x), s^2 = mean((x - mu)^2), rstd = 1/sqrt(s^2 + eps), y = gamma (x - mu) rstd + beta
__global__ void layernorm_forward_kernel(const float* x, const float* gamma, const float* beta, float eps, int64_t C,
                                         bool cached, float* y, float* mean, float* rstd) {
  extern __shared__ float cache[];
  const int64_t n = blockIdx.x;
  const float* row = stage_row(x + n * C, C, cached, cache);
  double mu, var;
  row_mean_var(row, C, mu, var);
  const double rs = 1.0 / ::sqrt(var + (double)eps);
  float* yr = y + n * C;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
    yr[c] = (float)(((double)row[c] - mu) * rs) * gamma[c] + beta[c];
  if (threadIdx.x == 0) {
    mean[n] = (float)mu;
    rstd[n] = (float)rs;
  }
}

// dx = rstd (g - mean(g) - xhat mean(g xhat)),  g = dy gamma,  xhat = (x - mu) rstd;
// the saved float mean m is a pivot: delta = mean(x - m) recovers mu exactly.
// partial per chunk: dgamma (C) = sum dy xhat, dbeta (C) = sum dy
__global__ void layernorm_backward_kernel(const float* dy, const float* x, const float* gamma, const float* mean,
                                          const float* rstd, int64_t N, int64_t C, float* dx, double* partial) {
  double* acc_gamma = partial + (int64_t)blockIdx.x * 2 * C;
  double* acc_beta = acc_gamma + C;
  for (int64_t n = chunk_begin(N); n < chunk_end(N); ++n) {
    const float *xr = x + n * C, *dyr = dy + n * C;
    float* dxr = dx + n * C;
    const double m = mean[n], rs = rstd[n];
    double sum_d = 0.0, sum_g = 0.0, sum_gd = 0.0;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const double d = (double)xr[c] - m;
      const double gc = (double)dyr[c] * gamma[c];
      sum_d += d;
      sum_g += gc;
      sum_gd += gc * d;
    }
    sum_d = block_sum(sum_d);
    sum_g = block_sum(sum_g);
    sum_gd = block_sum(sum_gd);
    const double delta = sum_d / (double)C;
    const double mean_g = sum_g / (double)C;
    const double mean_gxhat = rs * (sum_gd - delta * sum_g) / (double)C;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const double xhat = ((double)xr[c] - m - delta) * rs;
      const double gc = (double)dyr[c] * gamma[c];
      dxr[c] = (float)(rs * (gc - mean_g - xhat * mean_gxhat));
      acc_gamma[c] += (double)dyr[c] * xhat;
      acc_beta[c] += dyr[c];
    }
  }
}

// ---- RMSNorm

// ms = mean(x^2), rstd = 1/sqrt(ms + eps), y = gamma x rstd (+ beta)
__global__ void rmsnorm_forward_kernel(const float* x, const float* gamma, const float* beta, float eps, int64_t C,
                                       bool cached, float* y, float* rstd) {
  extern __shared__ float cache[];
  const int64_t n = blockIdx.x;
  const float* row = stage_row(x + n * C, C, cached, cache);
  double ss = 0.0;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) ss += (double)row[c] * row[c];
  const double rs = 1.0 / ::sqrt(block_sum(ss) / (double)C + (double)eps);
  float* yr = y + n * C;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
    const float v = (float)(row[c] * rs) * gamma[c];
    yr[c] = beta ? v + beta[c] : v;
  }
  if (threadIdx.x == 0) rstd[n] = (float)rs;
}

// dx = rstd (g - xhat mean(g xhat)),  g = dy gamma,  xhat = x rstd
// partial per chunk: dgamma (C) = sum dy xhat, dbeta (C) = sum dy (when asked for)
__global__ void rmsnorm_backward_kernel(const float* dy, const float* x, const float* gamma, const float* rstd,
                                        int64_t N, int64_t C, bool with_dbeta, float* dx, double* partial) {
  double* acc_gamma = partial + (int64_t)blockIdx.x * 2 * C;
  double* acc_beta = acc_gamma + C;
  for (int64_t n = chunk_begin(N); n < chunk_end(N); ++n) {
    const float *xr = x + n * C, *dyr = dy + n * C;
    float* dxr = dx + n * C;
    const double rs = rstd[n];
    double sum_gx = 0.0;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) sum_gx += (double)dyr[c] * gamma[c] * xr[c];
    const double mean_gxhat = rs * block_sum(sum_gx) / (double)C;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const double xhat = xr[c] * rs;
      dxr[c] = (float)(rs * ((double)dyr[c] * gamma[c] - xhat * mean_gxhat));
      acc_gamma[c] += (double)dyr[c] * xhat;
      if (with_dbeta) acc_beta[c] += dyr[c];
    }
  }
}

// ---- DyT

// y = gamma tanh(alpha x) + beta, elementwise
__global__ void dyt_forward_kernel(const float* x, const float* alpha, const float* gamma, const float* beta,
                                   int64_t n, int64_t C, float* y) {
  const float a = *alpha;
  NL_GRID_STRIDE_LOOP(i, n) {
    const int64_t c = i % C;
    y[i] = beta ? gamma[c] * tanhf(a * x[i]) + beta[c] : gamma[c] * tanhf(a * x[i]);
  }
}

// t = tanh(alpha x),  u = dy gamma (1 - t^2),  dx = alpha u
// partial per chunk: dgamma (C) = sum dy t, dbeta (C) = sum dy, dalpha (1) = sum u x
__global__ void dyt_backward_kernel(const float* dy, const float* x, const float* alpha, const float* gamma,
                                    int64_t N, int64_t C, float* dx, double* partial) {
  const float a = *alpha;
  double* acc_gamma = partial + (int64_t)blockIdx.x * (2 * C + 1);
  double* acc_beta = acc_gamma + C;
  double acc_alpha = 0.0;  // this thread's share, over all rows of the chunk
  for (int64_t n = chunk_begin(N); n < chunk_end(N); ++n) {
    const float *xr = x + n * C, *dyr = dy + n * C;
    float* dxr = dx + n * C;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const float t = tanhf(a * xr[c]);
      const float du = dyr[c] * gamma[c] * (1.0f - t * t);
      dxr[c] = a * du;
      acc_alpha += (double)du * xr[c];
      acc_gamma[c] += (double)dyr[c] * t;
      acc_beta[c] += dyr[c];
    }
  }
  acc_alpha = block_sum(acc_alpha);
  if (threadIdx.x == 0) acc_beta[C] = acc_alpha;
}

// ---- BHyT

// mu, sigma = sqrt(s^2 + eps), D = kappa sigma + |mu|,  y = gamma tanh(lambda x / D);
// not centred: mu = 0, sigma = sqrt(mean(x^2) + eps)
__global__ void bhyt_forward_kernel(const float* x, const float* gamma, const float* lambda, float kappa, float eps,
                                    bool centred, int64_t C, bool cached, float* y, float* mean, float* sigma) {
  extern __shared__ float cache[];
  const int64_t n = blockIdx.x;
  const float* row = stage_row(x + n * C, C, cached, cache);
  double mu = 0.0, var;
  if (centred) {
    row_mean_var(row, C, mu, var);
  } else {
    double ss = 0.0;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) ss += (double)row[c] * row[c];
    var = block_sum(ss) / (double)C;
  }
  const double sg = ::sqrt(var + (double)eps);
  const float scale = (float)((double)*lambda / ((double)kappa * sg + fabs(mu)));
  float* yr = y + n * C;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) yr[c] = gamma[c] * tanhf(scale * row[c]);
  if (threadIdx.x == 0) {
    mean[n] = (float)mu;
    sigma[n] = (float)sg;
  }
}

// a = dy gamma (1 - t^2), t = tanh(lambda x / D);  S = sum a x;  K = lambda S / D^2
// dx = lambda a / D - K (kappa (x - mu) / (C sigma) + sign(mu) / C)   (not centred: mu = 0)
// partial per chunk: dgamma (C) = sum dy t, dlambda (1) = sum S / D
__global__ void bhyt_backward_kernel(const float* dy, const float* x, const float* gamma, const float* lambda,
                                     const float* mean, const float* sigma, float kappa, bool centred, int64_t N,
                                     int64_t C, float* dx, double* partial) {
  const double lam = *lambda;
  double* acc_gamma = partial + (int64_t)blockIdx.x * (C + 1);
  double acc_lambda = 0.0;  // kept by thread 0
  for (int64_t n = chunk_begin(N); n < chunk_end(N); ++n) {
    const float *xr = x + n * C, *dyr = dy + n * C;
    float* dxr = dx + n * C;
    const double m = mean[n], sg = sigma[n];
    const double D = (double)kappa * sg + fabs(m);
    const float scale = (float)(lam / D);
    double S = 0.0, sum_d = 0.0;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const float t = tanhf(scale * xr[c]);
      const float a = dyr[c] * gamma[c] * (1.0f - t * t);
      dxr[c] = a;  // kept here until the row's sums are known; read back by this thread
      S += (double)a * xr[c];
      sum_d += (double)xr[c] - m;
      acc_gamma[c] += (double)dyr[c] * t;
    }
    S = block_sum(S);
    sum_d = block_sum(sum_d);
    const double delta = centred ? sum_d / (double)C : 0.0;  // mu - m
    const double K = lam * S / (D * D);
    const double coef_dev = K * (double)kappa / ((double)C * sg);
    const double sign_mu = (m > 0.0) - (m < 0.0);
    const double coef_mean = K * sign_mu / (double)C;
    const double lam_over_D = lam / D;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
      dxr[c] = (float)(lam_over_D * dxr[c] - coef_dev * ((double)xr[c] - m - delta) - coef_mean);
    acc_lambda += S / D;
  }
  if (threadIdx.x == 0) acc_gamma[C] = acc_lambda;
}

// y = gamma tanh(lambda x / denom), one denom per row
__global__ void bhyt_denom_forward_kernel(const float* x, const float* denom, const float* gamma,
                                          const float* lambda, int64_t n, int64_t C, float* y) {
  const double lam = *lambda;
  NL_GRID_STRIDE_LOOP(i, n) {
    const int64_t r = i / C, c = i - r * C;
    const float scale = (float)(lam / denom[r]);
    y[i] = gamma[c] * tanhf(scale * x[i]);
  }
}

// a = dy gamma (1 - t^2);  dx = lambda a / D;  ddenom = -lambda S / D^2,  S = sum a x
// partial per chunk: dgamma (C) = sum dy t, dlambda (1) = sum S / D
__global__ void bhyt_denom_backward_kernel(const float* dy, const float* x, const float* denom, const float* gamma,
                                           const float* lambda, int64_t N, int64_t C, float* dx, float* ddenom,
                                           double* partial) {
  const double lam = *lambda;
  double* acc_gamma = partial + (int64_t)blockIdx.x * (C + 1);
  double acc_lambda = 0.0;
  for (int64_t n = chunk_begin(N); n < chunk_end(N); ++n) {
    const float *xr = x + n * C, *dyr = dy + n * C;
    float* dxr = dx + n * C;
    const double D = denom[n];
    const float scale = (float)(lam / D);
    double S = 0.0;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const float t = tanhf(scale * xr[c]);
      const float a = dyr[c] * gamma[c] * (1.0f - t * t);
      dxr[c] = scale * a;
      S += (double)a * xr[c];
      acc_gamma[c] += (double)dyr[c] * t;
    }
    S = block_sum(S);
    if (threadIdx.x == 0) ddenom[n] = (float)(-lam * S / (D * D));
    acc_lambda += S / D;
  }
  if (threadIdx.x == 0) acc_gamma[C] = acc_lambda;
}

unsigned chunks_for(int64_t N) { return (unsigned)std::min(N, kChunks); }

}  // namespace

LayerNormForward layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps) {
  const char* op = "layernorm_forward";
  check_rows(op, "x", x);
  const int64_t N = x.size(0), C = x.size(1);
  check_vector(op, "gamma", gamma, C);
  check_vector(op, "beta", beta, C);
  NL_CHECK(eps >= 0.0f, op, ": eps must be >= 0, got ", eps);
  LayerNormForward out{empty({N, C}), empty({N}), empty({N})};
  if (N == 0) return out;
  layernorm_forward_kernel<<<(unsigned)N, row_threads(C), cache_bytes(C)>>>(
      x.data(), gamma.data(), beta.data(), eps, C, cache_bytes(C) > 0, out.y.data(), out.mean.data(),
      out.rstd.data());
  check_launch(op);
  return out;
}

LayerNormGrads layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                  const Tensor& rstd) {
  const char* op = "layernorm_backward";
  check_rows(op, "x", x);
  check_rows(op, "dy", dy);
  check_same_shape(op, "dy", dy, x);
  const int64_t N = x.size(0), C = x.size(1);
  check_vector(op, "gamma", gamma, C);
  check_vector(op, "mean", mean, N);
  check_vector(op, "rstd", rstd, N);
  LayerNormGrads grads{empty({N, C}), empty({C}), empty({C})};
  Partials partials(N, 2 * C);
  if (N > 0) {
    layernorm_backward_kernel<<<chunks_for(N), row_threads(C)>>>(dy.data(), x.data(), gamma.data(), mean.data(),
                                                                 rstd.data(), N, C, grads.dx.data(), partials.data());
    check_launch(op);
  }
  partials.total(0, C, grads.dgamma);
  partials.total(C, C, grads.dbeta);
  return grads;
}

RMSNormForward rmsnorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps) {
  const char* op = "rmsnorm_forward";
  check_rows(op, "x", x);
  const int64_t N = x.size(0), C = x.size(1);
  check_vector(op, "gamma", gamma, C);
  if (beta.defined()) check_vector(op, "beta", beta, C);
  NL_CHECK(eps >= 0.0f, op, ": eps must be >= 0, got ", eps);
  RMSNormForward out{empty({N, C}), empty({N})};
  if (N == 0) return out;
  rmsnorm_forward_kernel<<<(unsigned)N, row_threads(C), cache_bytes(C)>>>(
      x.data(), gamma.data(), beta.defined() ? beta.data() : nullptr, eps, C, cache_bytes(C) > 0, out.y.data(),
      out.rstd.data());
  check_launch(op);
  return out;
}

RMSNormGrads rmsnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd,
                              bool with_dbeta) {
  const char* op = "rmsnorm_backward";
  check_rows(op, "x", x);
  check_rows(op, "dy", dy);
  check_same_shape(op, "dy", dy, x);
  const int64_t N = x.size(0), C = x.size(1);
  check_vector(op, "gamma", gamma, C);
  check_vector(op, "rstd", rstd, N);
  RMSNormGrads grads{empty({N, C}), empty({C}), with_dbeta ? empty({C}) : Tensor()};
  Partials partials(N, 2 * C);
  if (N > 0) {
    rmsnorm_backward_kernel<<<chunks_for(N), row_threads(C)>>>(dy.data(), x.data(), gamma.data(), rstd.data(), N, C,
                                                               with_dbeta, grads.dx.data(), partials.data());
    check_launch(op);
  }
  partials.total(0, C, grads.dgamma);
  if (with_dbeta) partials.total(C, C, grads.dbeta);
  return grads;
}

Tensor dyt_forward(const Tensor& x, const Tensor& alpha, const Tensor& gamma, const Tensor& beta) {
  const char* op = "dyt_forward";
  check_rows(op, "x", x);
  const int64_t N = x.size(0), C = x.size(1);
  const float* a = scalar_ptr(op, "alpha", alpha);
  check_vector(op, "gamma", gamma, C);
  if (beta.defined()) check_vector(op, "beta", beta, C);
  Tensor y = empty({N, C});
  if (N == 0) return y;
  dyt_forward_kernel<<<grid_for(N * C), kThreads>>>(x.data(), a, gamma.data(), beta.defined() ? beta.data() : nullptr,
                                                    N * C, C, y.data());
  check_launch(op);
  return y;
}

DyTGrads dyt_backward(const Tensor& dy, const Tensor& x, const Tensor& alpha, const Tensor& gamma) {
  const char* op = "dyt_backward";
  check_rows(op, "x", x);
  check_rows(op, "dy", dy);
  check_same_shape(op, "dy", dy, x);
  const int64_t N = x.size(0), C = x.size(1);
  const float* a = scalar_ptr(op, "alpha", alpha);
  check_vector(op, "gamma", gamma, C);
  DyTGrads grads{empty({N, C}), empty({1}), empty({C}), empty({C})};
  Partials partials(N, 2 * C + 1);
  if (N > 0) {
    dyt_backward_kernel<<<chunks_for(N), row_threads(C)>>>(dy.data(), x.data(), a, gamma.data(), N, C,
                                                           grads.dx.data(), partials.data());
    check_launch(op);
  }
  partials.total(0, C, grads.dgamma);
  partials.total(C, C, grads.dbeta);
  partials.total(2 * C, 1, grads.dalpha);
  return grads;
}

BHyTForward bhyt_forward(const Tensor& x, const Tensor& gamma, const Tensor& lambda, float kappa, float eps,
                         bool centred) {
  const char* op = "bhyt_forward";
  check_rows(op, "x", x);
  const int64_t N = x.size(0), C = x.size(1);
  check_vector(op, "gamma", gamma, C);
  const float* lam = scalar_ptr(op, "lambda", lambda);
  NL_CHECK(kappa > 0.0f && eps >= 0.0f, op, ": need kappa > 0 and eps >= 0, got kappa ", kappa, ", eps ", eps);
  BHyTForward out{empty({N, C}), empty({N}), empty({N})};
  if (N == 0) return out;
  bhyt_forward_kernel<<<(unsigned)N, row_threads(C), cache_bytes(C)>>>(x.data(), gamma.data(), lam, kappa, eps,
                                                                      centred, C, cache_bytes(C) > 0, out.y.data(),
                                                                      out.mean.data(), out.sigma.data());
  check_launch(op);
  return out;
}

BHyTGrads bhyt_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& lambda,
                        const Tensor& mean, const Tensor& sigma, float kappa, bool centred) {
  const char* op = "bhyt_backward";
  check_rows(op, "x", x);
  check_rows(op, "dy", dy);
  check_same_shape(op, "dy", dy, x);
  const int64_t N = x.size(0), C = x.size(1);
  check_vector(op, "gamma", gamma, C);
  const float* lam = scalar_ptr(op, "lambda", lambda);
  check_vector(op, "mean", mean, N);
  check_vector(op, "sigma", sigma, N);
  NL_CHECK(kappa > 0.0f, op, ": need kappa > 0, got ", kappa);
  BHyTGrads grads{empty({N, C}), empty({C}), empty({1})};
  Partials partials(N, C + 1);
  if (N > 0) {
    bhyt_backward_kernel<<<chunks_for(N), row_threads(C)>>>(dy.data(), x.data(), gamma.data(), lam, mean.data(),
                                                            sigma.data(), kappa, centred, N, C, grads.dx.data(),
                                                            partials.data());
    check_launch(op);
  }
  partials.total(0, C, grads.dgamma);
  partials.total(C, 1, grads.dlambda);
  return grads;
}

Tensor bhyt_denom_forward(const Tensor& x, const Tensor& denom, const Tensor& gamma, const Tensor& lambda) {
  const char* op = "bhyt_denom_forward";
  check_rows(op, "x", x);
  const int64_t N = x.size(0), C = x.size(1);
  check_vector(op, "denom", denom, N);
  check_vector(op, "gamma", gamma, C);
  const float* lam = scalar_ptr(op, "lambda", lambda);
  Tensor y = empty({N, C});
  if (N == 0) return y;
  bhyt_denom_forward_kernel<<<grid_for(N * C), kThreads>>>(x.data(), denom.data(), gamma.data(), lam, N * C, C,
                                                           y.data());
  check_launch(op);
  return y;
}

BHyTDenomGrads bhyt_denom_backward(const Tensor& dy, const Tensor& x, const Tensor& denom, const Tensor& gamma,
                                   const Tensor& lambda) {
  const char* op = "bhyt_denom_backward";
  check_rows(op, "x", x);
  check_rows(op, "dy", dy);
  check_same_shape(op, "dy", dy, x);
  const int64_t N = x.size(0), C = x.size(1);
  check_vector(op, "denom", denom, N);
  check_vector(op, "gamma", gamma, C);
  const float* lam = scalar_ptr(op, "lambda", lambda);
  BHyTDenomGrads grads{empty({N, C}), empty({N}), empty({C}), empty({1})};
  Partials partials(N, C + 1);
  if (N > 0) {
    bhyt_denom_backward_kernel<<<chunks_for(N), row_threads(C)>>>(dy.data(), x.data(), denom.data(), gamma.data(),
                                                                  lam, N, C, grads.dx.data(), grads.ddenom.data(),
                                                                  partials.data());
    check_launch(op);
  }
  partials.total(0, C, grads.dgamma);
  partials.total(C, 1, grads.dlambda);
  return grads;
}

}  // namespace nl::cuda
