#include <catch2/catch.hpp>

#include <cmath>

#include "tensor/random.h"
#include "studies/instruments/metrics.h"

using namespace nl;

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
