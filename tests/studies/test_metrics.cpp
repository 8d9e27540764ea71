#include <catch2/catch.hpp>

#include <cmath>

#include "tensor/random.h"
#include "studies/instruments/metrics.h"

using namespace nl;

namespace {

// A random (d x d) orthogonal matrix by Gram-Schmidt on Gaussian columns.
std::vector<double> random_orthogonal(int64_t d, Generator& gen) {
  std::vector<double> q(d * d);
  for (auto& v : q) v = gen.normal();
  for (int64_t c = 0; c < d; ++c) {
    for (int64_t p = 0; p < c; ++p) {
      double dot = 0;
      for (int64_t r = 0; r < d; ++r) dot += q[r * d + c] * q[r * d + p];
      for (int64_t r = 0; r < d; ++r) q[r * d + c] -= dot * q[r * d + p];
    }
    double norm = 0;
    for (int64_t r = 0; r < d; ++r) norm += q[r * d + c] * q[r * d + c];
    for (int64_t r = 0; r < d; ++r) q[r * d + c] /= std::sqrt(norm);
  }
  return q;
}

// X = U diag(s) V^T with random orthogonal U (n x n) and V (d x d), n >= d.
Tensor with_singular_values(const std::vector<double>& s, int64_t n, int64_t d, uint64_t seed) {
  Generator gen(seed);
  auto u = random_orthogonal(n, gen), v = random_orthogonal(d, gen);
  std::vector<float> x(n * d, 0.0f);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < d; ++c) {
      double acc = 0;
      for (size_t k = 0; k < s.size(); ++k) acc += u[r * n + k] * s[k] * v[c * d + k];
      x[r * d + c] = (float)acc;
    }
  return Tensor::from_vector(x, {n, d});
}

}  // namespace

TEST_CASE("effective rank of a matrix with k equal singular values is k", "[metrics]") {
  for (int k : {1, 3, 7}) {
    std::vector<double> s(k, 2.5);
    Tensor x = with_singular_values(s, 24, 12, 100 + k);
    CHECK(effective_rank(x) == Approx((double)k).epsilon(1e-4));
  }
}

TEST_CASE("singular values of a rotated diagonal matrix are recovered", "[metrics]") {
  std::vector<double> s = {5.0, 3.0, 1.0, 0.5};
  Tensor x = with_singular_values(s, 10, 6, 7);
  auto got = singular_values(x);
  REQUIRE(got.size() == 6);
  for (size_t i = 0; i < s.size(); ++i) CHECK(got[i] == Approx(s[i]).epsilon(1e-4));
  CHECK(got[4] < 1e-3);
  CHECK(got[5] < 1e-3);
  // entropy of p = s / sum(s) computed by hand: sum 9.5
  double h = 0;
  for (double v : s) h -= v / 9.5 * std::log(v / 9.5);
  CHECK(effective_rank(x) == Approx(std::exp(h)).epsilon(1e-3));
}

TEST_CASE("saturation fractions match the Gaussian tails of NORMS.md", "[metrics]") {
  // For x ~ N(0, 1): P(|alpha x| > 2) = 2 (1 - Phi(2 / alpha)):
  // alpha 0.5 -> 6.3e-5, alpha 1 -> 0.0455, alpha 2 -> 0.3173 (NORMS.md).
  Generator gen(2024);
  const int64_t n = 4000000;
  Tensor x = gen.normal({n});
  struct Case { float alpha; double expect; };
  for (Case c : {Case{0.5f, 6.334e-5}, Case{1.0f, 0.04550}, Case{2.0f, 0.31731}}) {
    std::vector<float> v = x.to_vector();
    for (float& e : v) e *= c.alpha;
    auto f = saturation_fractions(Tensor::from_vector(v, {n}));
    const double sigma = std::sqrt(c.expect * (1 - c.expect) / (double)n);
    INFO("alpha " << c.alpha << ": measured " << f[1] << ", expected " << c.expect);
    CHECK(std::fabs(f[1] - c.expect) < 5 * sigma);
  }
  // thresholds 1 and 3 at alpha 1: 0.3173 and 0.0027
  auto f = saturation_fractions(x);
  CHECK(std::fabs(f[0] - 0.31731) < 5 * std::sqrt(0.31731 * 0.68269 / n));
  CHECK(std::fabs(f[2] - 0.0026998) < 5 * std::sqrt(0.0027 / n));
}

namespace {

// f(e) = e W for e (N, d) and W (d, d) row-major in double.
Tensor times(const Tensor& e, const std::vector<double>& w, int64_t d) {
  const std::vector<float> v = e.to_vector();
  const int64_t n = (int64_t)v.size() / d;
  std::vector<float> out(n * d, 0.0f);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < d; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < d; ++k) acc += v[r * d + k] * w[k * d + j];
      out[r * d + j] = (float)acc;
    }
  return Tensor::from_vector(out, e.shape());
}

}  // namespace

TEST_CASE("noise sensitivity of c times an orthogonal map is c; of a constant map 0", "[metrics]") {
  // ||d (c Q)|| = c ||d|| for every d, so every draw gives exactly c
  const int64_t d = 10;
  Generator gen(3);
  std::vector<double> q = random_orthogonal(d, gen), q2 = q, q05 = q;
  for (double& v : q2) v *= 2.0;
  for (double& v : q05) v *= 0.5;
  Tensor e = gen.normal({6, d});
  auto f = [&](const Tensor& x) { return std::vector<Tensor>{times(x, q2, d), times(x, q05, d), Tensor::ones({3})}; };
  auto s = noise_sensitivity(f, e, 0.01f, 4, 9);
  REQUIRE(s.size() == 3);
  CHECK(s[0] == Approx(2.0).epsilon(1e-3));
  CHECK(s[1] == Approx(0.5).epsilon(1e-3));
  CHECK(s[2] == 0.0);
  CHECK_THROWS_WITH(noise_sensitivity(f, e, 0.0f, 4, 9), Catch::Contains("size > 0"));
}

TEST_CASE("noise sensitivity of a diagonal map is the RMS of its diagonal", "[metrics]") {
  // d uniform and independent per element: E ||d diag(a)||^2 / E ||d||^2 = mean(a^2), and
  // with 20 000 elements the ratio of norms concentrates at sqrt(mean(a^2)) = sqrt(2.5)
  const int64_t d = 4;
  std::vector<double> w(d * d, 0.0);
  const double a[d] = {0.5, 1.0, 1.5, 2.5};  // mean of squares (0.25 + 1 + 2.25 + 6.25) / 4 = 2.4375
  for (int64_t i = 0; i < d; ++i) w[i * d + i] = a[i];
  Generator gen(4);
  Tensor e = gen.normal({5000, d});
  auto s = noise_sensitivity([&](const Tensor& x) { return std::vector<Tensor>{times(x, w, d)}; }, e, 0.01f, 3, 5);
  CHECK(s[0] == Approx(std::sqrt(2.4375)).epsilon(0.01));
}
