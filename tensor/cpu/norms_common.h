// What the norm kernels (layernorm.cpp, rmsnorm.cpp, dyt.cpp, bhyt.cpp) share: argument
// checks, double-precision row statistics, and deterministic sums over rows.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tensor/cpu/check.h"
#include "tensor/cpu/column_sums.h"
#include "tensor/tensor.h"
#include "tensor/threads.h"

namespace nl::norms {

// x (N, C): a contiguous float32 matrix on the CPU with at least one channel.
inline void check_rows(const char* op, const char* name, const Tensor& t) {
  NL_CHECK(t.defined(), op, ": ", name, " is undefined (expected float32 (N, C) on cpu)");
  check_cpu_f32(op, t);
  NL_CHECK(t.dim() == 2 && t.size(1) >= 1, op, ": ", name, " must be (N, C) with C >= 1, got ", describe(t));
  NL_CHECK(t.is_contiguous(), op, ": ", name, " ", describe(t), " must be contiguous");
}

// A contiguous float32 vector of `n` elements on the CPU: gamma (C), mean (N), ...
inline void check_vector(const char* op, const char* name, const Tensor& t, int64_t n) {
  NL_CHECK(t.defined(), op, ": ", name, " is undefined (expected float32 (", n, ") on cpu)");
  check_cpu_f32(op, t);
  NL_CHECK(t.dim() == 1 && t.size(0) == n, op, ": ", name, " must be (", n, "), got ", describe(t));
  NL_CHECK(t.is_contiguous(), op, ": ", name, " ", describe(t), " must be contiguous");
}

// A learnable scalar stored as a tensor of one element: alpha (1), lambda (1).
inline float read_scalar(const char* op, const char* name, const Tensor& t) {
  NL_CHECK(t.defined(), op, ": ", name, " is undefined (expected float32 (1) on cpu)");
  check_cpu_f32(op, t);
  NL_CHECK(t.numel() == 1, op, ": ", name, " must hold one element, got ", describe(t));
  return t.data()[0];
}

inline void check_same_shape(const char* op, const char* name, const Tensor& t, const Tensor& x) {
  NL_CHECK(t.shape() == x.shape(), op, ": ", name, " ", describe(t), " must have the shape of x ", describe(x));
}

// mu = (1/C) sum x_c, summed in double.
inline double row_mean(const float* x, int64_t C) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int64_t c = 0; c < C; ++c) s += x[c];
  return s / (double)C;
}

// s^2 = (1/C) sum (x_c - mu)^2 about an already known mean: the second of two passes,
// which never subtracts two large sums (E[x^2] - mu^2 would lose every digit of a row
// with mean 1e3 and std 1e-1 in float, and half of them in double).
inline double row_var(const float* x, int64_t C, double mu) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int64_t c = 0; c < C; ++c) {
    const double d = (double)x[c] - mu;
    s += d * d;
  }
  return s / (double)C;
}

// Sums over rows that come out bit-identical for any thread count. The rows are split
// into a fixed number of contiguous chunks (it depends on N only); each chunk adds its
// rows' contributions, in row order, into its own `width` double accumulators; total()
// then adds the chunks in chunk order. Rows inside a chunk run on one thread, chunks
// run in parallel.
class RowChunks {
 public:
  RowChunks(int64_t rows, int64_t width)
      : rows_(rows), width_(width), chunks_(std::min<int64_t>(rows, kMaxChunks)),
        partials_((size_t)(chunks_ * width), 0.0) {}
  int64_t chunks() const { return chunks_; }
  int64_t begin(int64_t k) const { return k * rows_ / chunks_; }
  int64_t end(int64_t k) const { return (k + 1) * rows_ / chunks_; }
  double* partial(int64_t k) { return partials_.data() + k * width_; }

  // out[j] = sum over chunks k of partial(k)[first + j], j < count, in chunk order; a
  // block of columns at a time, so that each chunk's partials are read in a row.
  void total(int64_t first, int64_t count, float* out) const {
    cpu::for_column_blocks(count, count * chunks_ > kParallelGrain, [&](int64_t j0, int64_t j1, double* s) {
      for (int64_t k = 0; k < chunks_; ++k) {
        const double* p = partials_.data() + k * width_ + first;
        for (int64_t j = j0; j < j1; ++j) s[j - j0] += p[j];
      }
      for (int64_t j = j0; j < j1; ++j) out[j] = (float)s[j - j0];
    });
  }

 private:
  static constexpr int64_t kMaxChunks = 64;  // enough to keep 16+ threads busy
  int64_t rows_, width_, chunks_;
  std::vector<double> partials_;
};

}  // namespace nl::norms
