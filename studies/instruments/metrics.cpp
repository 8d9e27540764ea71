#include "studies/instruments/metrics.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"

namespace nl {

std::array<double, 3> saturation_fractions(const Tensor& arg) {
  NL_CHECK(arg.dtype() == DType::F32 && arg.numel() > 0, "saturation_fractions: needs a non-empty float32 tensor, got ",
           describe(arg));
  std::vector<float> v = arg.to_vector();
  int64_t above[3] = {0, 0, 0};
  for (float x : v) {
    const float a = std::fabs(x);
    above[0] += a > 1.0f;
    above[1] += a > 2.0f;
    above[2] += a > 3.0f;
  }
  const double n = (double)v.size();
  return {above[0] / n, above[1] / n, above[2] / n};
}

// Eigenvalues of the symmetric matrix a (d x d, row-major, destroyed) by cyclic Jacobi:
// each rotation zeroes one off-diagonal pair; sweeps repeat until the off-diagonal mass
// is negligible against the diagonal's.
static std::vector<double> symmetric_eigenvalues(std::vector<double>& a, int64_t d) {
  auto off_norm = [&] {
    double s = 0;
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = i + 1; j < d; ++j) s += a[i * d + j] * a[i * d + j];
    return s;
  };
  double total = 0;
  for (double x : a) total += x * x;
  for (int sweep = 0; sweep < 100 && off_norm() > 1e-24 * std::max(total, 1e-300); ++sweep) {
    for (int64_t p = 0; p < d; ++p)
      for (int64_t q = p + 1; q < d; ++q) {
        const double apq = a[p * d + q];
        if (std::fabs(apq) < 1e-300) continue;
        // the rotation angle that makes the (p, q) entry zero
        const double theta = (a[q * d + q] - a[p * d + p]) / (2.0 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        for (int64_t k = 0; k < d; ++k) {  // columns p and q
          const double akp = a[k * d + p], akq = a[k * d + q];
          a[k * d + p] = c * akp - s * akq;
          a[k * d + q] = s * akp + c * akq;
        }
        for (int64_t k = 0; k < d; ++k) {  // rows p and q
          const double apk = a[p * d + k], aqk = a[q * d + k];
          a[p * d + k] = c * apk - s * aqk;
          a[q * d + k] = s * apk + c * aqk;
        }
      }
  }
  std::vector<double> eig(d);
  for (int64_t i = 0; i < d; ++i) eig[i] = a[i * d + i];
  return eig;
}

std::vector<double> singular_values(const Tensor& x) {
  NL_CHECK(x.dim() == 2 && x.dtype() == DType::F32, "singular_values: needs a float32 matrix (n, d), got ", describe(x));
  const int64_t n = x.size(0), d = x.size(1);
  std::vector<float> v = x.to_vector();
  std::vector<double> gram(d * d, 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < d; ++i) {
      const double xi = v[r * d + i];
      for (int64_t j = 0; j < d; ++j) gram[i * d + j] += xi * v[r * d + j];
    }
  std::vector<double> eig = symmetric_eigenvalues(gram, d);
  for (double& e : eig) e = std::sqrt(std::max(e, 0.0));
  std::sort(eig.rbegin(), eig.rend());
  return eig;
}

double effective_rank(const Tensor& x) {
  std::vector<double> s = singular_values(x);
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

static double distance(const Tensor& a, const Tensor& b) {
  NL_CHECK(a.shape() == b.shape(), "noise_sensitivity: f returned ", describe(b), " for the perturbed input but ",
           describe(a), " for e");
  const std::vector<float> va = a.to_vector(), vb = b.to_vector();
  double s = 0;
  for (size_t i = 0; i < va.size(); ++i) s += ((double)vb[i] - va[i]) * ((double)vb[i] - va[i]);
  return std::sqrt(s);
}

std::vector<double> noise_sensitivity(const std::function<std::vector<Tensor>(const Tensor&)>& f, const Tensor& e,
                                      float size, int trials, uint64_t seed) {
  NL_CHECK(size > 0 && trials > 0, "noise_sensitivity: needs size > 0 and trials > 0, got ", size, " and ", trials);
  const std::vector<Tensor> clean = f(e);
  std::vector<double> mean(clean.size(), 0.0);
  Generator gen(seed);
  for (int t = 0; t < trials; ++t) {
    const Tensor d = gen.uniform(e.shape(), -size, size);
    const std::vector<Tensor> noisy = f(add(e, d));
    NL_CHECK(noisy.size() == clean.size(), "noise_sensitivity: f returned ", noisy.size(), " tensors, then ",
             clean.size());
    const double d_norm = distance(Tensor::zeros(d.shape()), d);
    for (size_t k = 0; k < clean.size(); ++k) mean[k] += distance(clean[k], noisy[k]) / d_norm / trials;
  }
  return mean;
}

}  // namespace nl
