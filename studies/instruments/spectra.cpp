#include "studies/instruments/spectra.h"

#include <lapacke.h>

#include <algorithm>
#include <cmath>

#include "tensor/threads.h"

namespace nl {

std::vector<double> singular_values(std::vector<double> a, int64_t rows, int64_t cols) {
  NL_CHECK(rows > 0 && cols > 0 && (int64_t)a.size() == rows * cols, "singular_values: needs a ", rows, " x ", cols,
           " matrix of ", rows * cols, " entries, got ", a.size());
  for (double v : a) NL_CHECK(std::isfinite(v), "singular_values: the matrix has a non-finite entry (", v, ")");
  // The row-major (rows x cols) array is the column-major (cols x rows) matrix A^T,
  // which has the same singular values: LAPACK reads it in place, with no transposed copy.
  const lapack_int m = (lapack_int)cols, n = (lapack_int)rows;
  std::vector<double> s((size_t)std::min(m, n));
  double unused_u = 0, unused_vt = 0;  // jobz 'N': no singular vectors
  // One thread: LAPACK's SVD runs on many small BLAS calls (a Householder reflection
  // each), and a pool woken for each of them costs more than it saves at these sizes,
  // ruinously so beside other jobs (measured on the 2-core machine under load: a
  // 2048 x 128 decomposition took 10 ms on one thread, 150 ms on two).
  ScopedThreads one_thread(1);
  const lapack_int info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', m, n, a.data(), m, s.data(), &unused_u, 1,
                                         &unused_vt, 1);
  NL_CHECK(info == 0, "singular_values: LAPACKE_dgesdd failed on a ", rows, " x ", cols, " matrix (info ", info, ")");
  std::sort(s.rbegin(), s.rend());  // dgesdd returns them descending already; this makes it a promise
  return s;
}

std::vector<double> singular_values(const Tensor& x) {
  NL_CHECK(x.defined() && x.dim() == 2 && x.dtype() == DType::F32,
           "singular_values: needs a float32 matrix (n, d), got ", describe(x));
  const std::vector<float> v = x.to_vector();
  return singular_values(std::vector<double>(v.begin(), v.end()), x.size(0), x.size(1));
}

double effective_rank(const std::vector<double>& s) {
  double total = 0;
  for (double v : s) total += v;
  NL_CHECK(total > 0, "effective_rank: the matrix is zero");
  double h = 0;
  for (double v : s)
    if (v > 0) {
      const double p = v / total;
      h -= p * std::log(p);
    }
  return std::exp(h);
}

double effective_rank(const Tensor& x) { return effective_rank(singular_values(x)); }

double centred_effective_rank(const Tensor& x) {
  NL_CHECK(x.defined() && x.dim() == 2 && x.dtype() == DType::F32,
           "centred_effective_rank: needs a float32 matrix (n, d), got ", describe(x));
  const int64_t n = x.size(0), d = x.size(1);
  const std::vector<float> v = x.to_vector();
  std::vector<double> mean(d, 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < d; ++c) mean[c] += v[r * d + c];
  for (double& m : mean) m /= (double)n;
  std::vector<double> centred(v.size());
  double spread = 0, size = 0;  // squared norms of the centred and of the given matrix
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < d; ++c) {
      const double e = v[r * d + c] - mean[c];
      centred[r * d + c] = e;
      spread += e * e;
      size += (double)v[r * d + c] * v[r * d + c];
    }
  // identical rows leave only the rounding of their mean: no spread to have a rank
  NL_CHECK(spread > 1e-20 * size && spread > 0, "centred_effective_rank: every row of the ", n, " x ", d,
           " matrix is the same");
  return effective_rank(singular_values(std::move(centred), n, d));
}

}  // namespace nl
