// Tests of the singular values (LAPACK) and effective ranks of studies/instruments/spectra.h
// on matrices whose spectrum is known by construction (tests/studies/known_matrices.h).
#include <catch2/catch.hpp>

#include <cmath>

#include "studies/instruments/spectra.h"
#include "tests/studies/known_matrices.h"

using namespace nl;
using nl::test::to_tensor;
using nl::test::with_singular_values;
using Catch::Contains;

namespace {

// The largest |got - want| / want over the prescribed values, and the largest got past them.
struct SpectrumError {
  double rel = 0, rest = 0;
};
SpectrumError spectrum_error(const std::vector<double>& got, const std::vector<double>& want) {
  SpectrumError e;
  for (size_t i = 0; i < got.size(); ++i) {
    if (i < want.size())
      e.rel = std::max(e.rel, std::fabs(got[i] - want[i]) / want[i]);
    else
      e.rest = std::max(e.rest, got[i]);
  }
  return e;
}

}  // namespace

TEST_CASE("singular values of U diag(s) V^T are s, for tall, wide and large matrices", "[spectra]") {
  const std::vector<double> s = {9.0, 5.0, 3.0, 1.0, 0.5, 1e-3};
  struct Case { int64_t n, d; };
  for (Case c : {Case{40, 12}, Case{12, 40}, Case{6, 6}}) {
    const std::vector<double> x = with_singular_values(s, c.n, c.d, 7);
    const std::vector<double> got = singular_values(x, c.n, c.d);
    REQUIRE(got.size() == (size_t)std::min(c.n, c.d));
    const SpectrumError e = spectrum_error(got, s);
    INFO(c.n << " x " << c.d << ": max relative error " << e.rel << ", largest of the zero ones " << e.rest);
    CHECK(e.rel < 1e-10);
    CHECK(e.rest < 1e-12);
    // the float32 path: entries rounded to 24 bits move the singular values by ~1e-7 * 9
    const SpectrumError ef = spectrum_error(singular_values(to_tensor(x, c.n, c.d)), s);
    INFO("float32: " << ef.rel << ", " << ef.rest);
    CHECK(ef.rel < 1e-3);  // the 1e-3 singular value carries the absolute error 1e-6
    CHECK(ef.rest < 1e-5);
  }
  // 1024 x 512, singular values spread over four decades, largest first
  std::vector<double> big(512);
  for (int i = 0; i < 512; ++i) big[i] = std::pow(10.0, 2.0 - 4.0 * i / 511.0);
  const SpectrumError e = spectrum_error(singular_values(with_singular_values(big, 1024, 512, 8), 1024, 512), big);
  INFO("1024 x 512: max relative error " << e.rel);
  CHECK(e.rel < 1e-9);
}

TEST_CASE("singular values of a vector are its norm; bad matrices are refused", "[spectra]") {
  const std::vector<double> v = {3.0, 0.0, -4.0};
  CHECK(singular_values(v, 1, 3)[0] == Approx(5.0).epsilon(1e-14));
  CHECK(singular_values(v, 3, 1)[0] == Approx(5.0).epsilon(1e-14));
  CHECK_THROWS_WITH(singular_values({1.0, NAN}, 1, 2), Contains("non-finite"));
  CHECK_THROWS_WITH(singular_values({1.0, 2.0}, 2, 2), Contains("2 x 2 matrix of 4 entries, got 2"));
  CHECK_THROWS_WITH(singular_values(Tensor::ones({3})), Contains("float32 matrix"));
}

TEST_CASE("effective rank of a matrix with k equal singular values is k", "[spectra]") {
  for (int k : {1, 3, 7}) {
    std::vector<double> s(k, 2.5);
    CHECK(effective_rank(to_tensor(with_singular_values(s, 24, 12, 100 + k), 24, 12)) ==
          Approx((double)k).epsilon(1e-4));
  }
}

TEST_CASE("effective rank is exp of the entropy of the normalised singular values", "[spectra]") {
  const std::vector<double> s = {5.0, 3.0, 1.0, 0.5};
  // entropy of p = s / sum(s) by hand: sum 9.5
  double h = 0;
  for (double v : s) h -= v / 9.5 * std::log(v / 9.5);
  CHECK(effective_rank(s) == Approx(std::exp(h)).epsilon(1e-14));
  CHECK(effective_rank(to_tensor(with_singular_values(s, 10, 6, 7), 10, 6)) == Approx(std::exp(h)).epsilon(1e-4));
  CHECK(effective_rank(std::vector<double>{4.0, 0.0, 0.0}) == 1.0);
  CHECK_THROWS_WITH(effective_rank(std::vector<double>{0.0, 0.0}), Contains("the matrix is zero"));
}

TEST_CASE("centred effective rank: a common offset is not a direction", "[spectra]") {
  // X has zero column means (U orthogonal to the ones vector) and k equal singular values;
  // X + 1 c^T adds the same vector c to every row
  const int64_t n = 64, d = 16;
  for (int k : {1, 4, 9}) {
    std::vector<double> x = with_singular_values(std::vector<double>(k, 1.5), n, d, 200 + k, /*centred=*/true);
    const Tensor plain = to_tensor(x, n, d);
    Generator gen(300 + k);
    std::vector<double> c(d);
    for (auto& v : c) v = 0.3 * gen.normal();
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < d; ++j) x[r * d + j] += c[j];
    const Tensor offset = to_tensor(x, n, d);
    INFO("k " << k << ": centred " << centred_effective_rank(offset) << ", uncentred " << effective_rank(offset));
    CHECK(centred_effective_rank(plain) == Approx((double)k).epsilon(1e-4));
    CHECK(centred_effective_rank(offset) == Approx((double)k).epsilon(1e-4));
    // the uncentred rank counts the offset: the test can tell the two apart
    CHECK(std::fabs(effective_rank(offset) - k) > 0.2);
  }
  CHECK_THROWS_WITH(centred_effective_rank(Tensor::full({5, 3}, 0.7f)),
                    Contains("every row of the 5 x 3 matrix is the same"));
}
