// Tests of the output noise stability and the logit variance (studies/instruments/stability.h)
// on maps and logits whose answers are known in closed form.
#include <catch2/catch.hpp>

#include <cmath>

#include "studies/instruments/stability.h"
#include "tests/studies/known_matrices.h"

using namespace nl;
using Catch::Contains;

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

TEST_CASE("noise stability of c times an orthogonal map is c at every eps; of a constant map 0", "[stability]") {
  // ||d (c Q)|| = c ||d|| for every d: every draw gives c, the standard error is 0
  const int64_t d = 10;
  Generator gen(3);
  std::vector<double> q = nl::test::random_orthonormal(d, d, gen), q2 = q, q05 = q;
  for (double& v : q2) v *= 2.0;
  for (double& v : q05) v *= 0.5;
  const Tensor e = gen.normal({6, d});
  auto f = [&](const Tensor& x) { return std::vector<Tensor>{times(x, q2, d), times(x, q05, d), Tensor::ones({3})}; };
  const auto s = noise_stability(f, e, {0.01, 0.1}, 4, 9);
  REQUIRE(s.size() == 2);
  for (const auto& per_eps : s) {
    REQUIRE(per_eps.size() == 3);
    CHECK(per_eps[0].mean == Approx(2.0).epsilon(1e-4));
    CHECK(per_eps[1].mean == Approx(0.5).epsilon(1e-4));
    CHECK(per_eps[0].std_error < 1e-4);
    CHECK(per_eps[2].mean == 0.0);
    CHECK(per_eps[2].std_error == 0.0);
  }
  CHECK_THROWS_WITH(noise_stability(f, e, {0.0}, 4, 9), Contains("every eps must be > 0"));
  CHECK_THROWS_WITH(noise_stability(f, e, {0.01}, 0, 9), Contains("at least one draw"));
}

TEST_CASE("noise stability of a diagonal map is the RMS of its diagonal", "[stability]") {
  // d Gaussian and independent per element: E ||d diag(a)||^2 / E ||d||^2 = mean(a^2), and
  // with 20 000 elements the ratio of norms concentrates at sqrt(mean(a^2))
  const int64_t d = 4;
  std::vector<double> w(d * d, 0.0);
  const double a[d] = {0.5, 1.0, 1.5, 2.5};  // mean of squares (0.25 + 1 + 2.25 + 6.25) / 4 = 2.4375
  for (int64_t i = 0; i < d; ++i) w[i * d + i] = a[i];
  Generator gen(4);
  const Tensor e = gen.normal({5000, d});
  const auto s = noise_stability([&](const Tensor& x) { return std::vector<Tensor>{times(x, w, d)}; }, e, {0.01}, 3, 5);
  CHECK(s[0][0].mean == Approx(std::sqrt(2.4375)).epsilon(0.01));
}

TEST_CASE("noise stability's mean and standard error match a known distribution of the ratio", "[stability]") {
  // e has 2 elements and f keeps the first: the ratio is |z0| / ||z|| = |cos theta| with
  // theta uniform, of mean 2 / pi and standard deviation sqrt(1/2 - 4 / pi^2) = 0.30776
  const int draws = 400;
  const Tensor e = Tensor::from_vector({0.3f, -0.2f}, {2});
  auto first = [](const Tensor& x) { return std::vector<Tensor>{Tensor::from_vector({x.to_vector()[0]}, {1})}; };
  const NoiseStability s = noise_stability(first, e, {0.1}, draws, 17)[0][0];
  const double sd = std::sqrt(0.5 - 4.0 / (M_PI * M_PI)), se = sd / std::sqrt((double)draws);
  INFO("mean " << s.mean << " (expected " << 2 / M_PI << " +- " << se << "), standard error " << s.std_error);
  CHECK(std::fabs(s.mean - 2.0 / M_PI) < 4 * se);
  // the sample standard deviation of 400 draws is within 10 % of the true one (its own
  // relative spread is about 1 / sqrt(2 * 400) = 3.5 %, less for this bounded ratio)
  CHECK(s.std_error == Approx(se).epsilon(0.1));
}

TEST_CASE("logit variance is the variance over the vocabulary, averaged over positions", "[stability]") {
  // by hand: [1 2 3 4] -> mean 2.5, (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25; [c c c c] -> 0;
  // [0 0 0 4] -> mean 1, (1 + 1 + 1 + 9) / 4 = 3; [-2 2 -2 2] -> 4. Average 8.25 / 4.
  const Tensor logits = Tensor::from_vector({1, 2, 3, 4, 7, 7, 7, 7, 0, 0, 0, 4, -2, 2, -2, 2}, {2, 2, 4});
  CHECK(logit_variance(logits) == Approx(8.25 / 4).epsilon(1e-12));
  // an offset per position changes neither the softmax nor the logit variance
  const Tensor shifted = Tensor::from_vector({11, 12, 13, 14, -3, -3, -3, -3, 5, 5, 5, 9, 0, 4, 0, 4}, {4, 4});
  CHECK(logit_variance(shifted) == Approx(8.25 / 4).epsilon(1e-12));
  CHECK_THROWS_WITH(logit_variance(Tensor()), Contains("float32 logits"));
}
