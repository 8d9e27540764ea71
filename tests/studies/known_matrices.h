// Matrices with a prescribed spectrum for the tests of the spectral instruments
// (test_spectra.cpp, test_power_law.cpp, test_stability.cpp): X = U diag(s) V^T with
// random orthonormal columns U, V from the QR decomposition of Gaussian matrices
// (LAPACK's dgeqrf + dorgqr: another routine than the SVD under test).
#pragma once
#include <cblas.h>
#include <lapacke.h>

#include <catch2/catch.hpp>

#include <vector>

#include "tensor/random.h"
#include "tensor/tensor.h"
#include "tensor/threads.h"

namespace nl::test {

// An (n x k) row-major matrix with orthonormal columns, k <= n. `centred`: every column is
// also orthogonal to the all-ones vector (k < n), from Gaussian columns centred first.
inline std::vector<double> random_orthonormal(int64_t n, int64_t k, Generator& gen, bool centred = false) {
  REQUIRE(k <= (centred ? n - 1 : n));
  std::vector<double> q(n * k);
  for (auto& v : q) v = gen.normal();
  if (centred)
    for (int64_t c = 0; c < k; ++c) {
      double mean = 0;
      for (int64_t r = 0; r < n; ++r) mean += q[r * k + c] / (double)n;
      for (int64_t r = 0; r < n; ++r) q[r * k + c] -= mean;
    }
  std::vector<double> tau(k);
  ScopedThreads one_thread(1);  // the QR's many small BLAS calls: see singular_values
  REQUIRE(LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, n, k, q.data(), k, tau.data()) == 0);
  REQUIRE(LAPACKE_dorgqr(LAPACK_ROW_MAJOR, n, k, k, q.data(), k, tau.data()) == 0);
  return q;
}

// X = U diag(s) V^T (n x d, row-major, in double) with U (n x r) and V (d x r) random
// orthonormal, r = s.size() <= min(n, d). `centred`: U's columns are orthogonal to the
// ones vector, so every column of X has mean zero over the rows.
inline std::vector<double> with_singular_values(const std::vector<double>& s, int64_t n, int64_t d, uint64_t seed,
                                                bool centred = false) {
  Generator gen(seed);
  const int64_t r = (int64_t)s.size();
  std::vector<double> u = random_orthonormal(n, r, gen, centred), v = random_orthonormal(d, r, gen);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < r; ++k) u[i * r + k] *= s[k];
  std::vector<double> x(n * d, 0.0);
  ScopedThreads one_thread(1);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)d, (int)r, 1.0, u.data(), (int)r, v.data(),
              (int)r, 0.0, x.data(), (int)d);
  return x;
}

inline Tensor to_tensor(const std::vector<double>& x, int64_t n, int64_t d) {
  return Tensor::from_vector(std::vector<float>(x.begin(), x.end()), {n, d});
}

}  // namespace nl::test
