// Reductions (tensor/cpu/reduce.cpp): sum, mean, max and var over one, several or all
// axes, with and without keepdim, on contiguous and non-contiguous inputs, against
// hand-derived values on x = arange(24).reshape(2, 3, 4) and a naive loop on random data.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/tensor/tensor_literals.h"
#include "tests/test_util.h"

using Catch::Contains;
using nl::Shape;
using nl::Tensor;
using nl::test::T;

namespace {

// x[a, j, k] = 12 a + 4 j + k
Tensor x234() {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = (float)i;
  return T(v, {2, 3, 4});
}

}  // namespace

// ---------------------------------------------------------------- sum

TEST_CASE("sum over all axes", "[ops]") {
  Tensor x = x234();
  Tensor s = nl::sum(x);
  CHECK(s.dim() == 0);
  CHECK(s.item() == 276.0f);  // 23 * 24 / 2
  Tensor k = nl::sum(x, {}, true);
  CHECK(k.shape() == Shape{1, 1, 1});
  CHECK(k.item() == 276.0f);
  CHECK_CLOSE(nl::sum(x, {0, 1, 2}), Tensor::scalar(276.0f), 0, 0);
}

TEST_CASE("sum over a single axis, each axis, with and without keepdim", "[ops]") {
  Tensor x = x234();
  // axis 0: x[0] + x[1] = 2i + 12 for i = 0..11
  std::vector<float> s0;
  for (int i = 0; i < 12; ++i) s0.push_back(2.0f * i + 12.0f);
  CHECK_CLOSE(nl::sum(x, {0}), T(s0, {3, 4}), 0, 0);
  CHECK_CLOSE(nl::sum(x, {0}, true), T(s0, {1, 3, 4}), 0, 0);
  // axis 1: sum_j (12a + 4j + k) = 36a + 12 + 3k
  Tensor s1 = T({12, 15, 18, 21, 48, 51, 54, 57}, {2, 4});
  CHECK_CLOSE(nl::sum(x, {1}), s1, 0, 0);
  CHECK_CLOSE(nl::sum(x, {1}, true), s1.reshape({2, 1, 4}), 0, 0);
  CHECK_CLOSE(nl::sum(x, {-2}), s1, 0, 0);
  // axis 2: row r = 3a + j sums 16 r + 6
  Tensor s2 = T({6, 22, 38, 54, 70, 86}, {2, 3});
  CHECK_CLOSE(nl::sum(x, {2}), s2, 0, 0);
  CHECK_CLOSE(nl::sum(x, {-1}, true), s2.reshape({2, 3, 1}), 0, 0);
}

TEST_CASE("sum over several axes", "[ops]") {
  Tensor x = x234();
  // axes {0, 2}: (16 j + 6) + (16 (j + 3) + 6) = 32 j + 60
  CHECK_CLOSE(nl::sum(x, {0, 2}), T({60, 92, 124}, {3}), 0, 0);
  CHECK_CLOSE(nl::sum(x, {2, 0}, true), T({60, 92, 124}, {1, 3, 1}), 0, 0);
  // leading axes {0, 1}: sum over a, j of 12a + 4j + k = 36 + 24 + 6k
  CHECK_CLOSE(nl::sum(x, {0, 1}), T({60, 66, 72, 78}, {4}), 0, 0);
  CHECK_CLOSE(nl::sum(x, {1, 0}, true), T({60, 66, 72, 78}, {1, 1, 4}), 0, 0);
  // trailing axes {1, 2}: 6 * 4 * 3 / 2 ... row a: sum of 12 consecutive from 12a = 144a + 66
  CHECK_CLOSE(nl::sum(x, {1, 2}), T({66, 210}, {2}), 0, 0);
}

TEST_CASE("sum reads non-contiguous inputs", "[ops]") {
  Tensor x = x234();
  Tensor t = x.permute({2, 0, 1});  // t[k, a, j] = x[a, j, k]
  REQUIRE_FALSE(t.is_contiguous());
  CHECK_CLOSE(nl::sum(t, {0}), T({6, 22, 38, 54, 70, 86}, {2, 3}), 0, 0);
  CHECK_CLOSE(nl::sum(t, {1, 2}), T({60, 66, 72, 78}, {4}), 0, 0);
  CHECK_CLOSE(nl::sum(t), Tensor::scalar(276.0f), 0, 0);
  // sliced with a step: x[:, :, 0::2] = 12a + 4j + {0, 2}; over axis 2: 24a + 8j + 2
  Tensor s = x.slice(2, 0, 4, 2);
  CHECK_CLOSE(nl::sum(s, {2}), T({2, 10, 18, 26, 34, 42}, {2, 3}), 0, 0);
  CHECK_CLOSE(nl::sum(s, {0}), T({12, 16, 20, 24, 28, 32}, {3, 2}), 0, 0);
  // expanded: (3,1) -> (3,4), each row sums 4x
  Tensor e = T({1, 2, 3}, {3, 1}).expand({3, 4});
  CHECK_CLOSE(nl::sum(e, {1}), T({4, 8, 12}, {3}), 0, 0);
  CHECK_CLOSE(nl::sum(e, {0}), T({6, 6, 6, 6}, {4}), 0, 0);
}

TEST_CASE("sum over leading and other axes matches a naive loop on random data", "[ops]") {
  nl::Generator gen(3);
  // wide enough for the column-blocked path (more than one block of 256)
  const int64_t A = 7, B = 5, C = 600;
  Tensor x = gen.normal({A, B, C});
  std::vector<float> v = x.to_vector();
  std::vector<double> over0(B * C, 0), over2(A * B, 0), over01(C, 0);
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c) {
        double e = v[(a * B + b) * C + c];
        over0[b * C + c] += e;
        over2[a * B + b] += e;
        over01[c] += e;
      }
  auto to_tensor = [](const std::vector<double>& d, const Shape& s) {
    return Tensor::from_vector(std::vector<float>(d.begin(), d.end()), s);
  };
  CHECK_CLOSE(nl::sum(x, {0}), to_tensor(over0, {B, C}), 1e-5, 1e-5);
  CHECK_CLOSE(nl::sum(x, {2}), to_tensor(over2, {A, B}), 1e-5, 1e-5);
  CHECK_CLOSE(nl::sum(x, {0, 1}), to_tensor(over01, {C}), 1e-5, 1e-5);
  CHECK_CLOSE(nl::mean(x, {0, 1}, true), nl::mul_scalar(to_tensor(over01, {1, 1, C}), 1.0f / (A * B)), 1e-5, 1e-6);
}

// ---------------------------------------------------------------- mean

TEST_CASE("mean over single, several and all axes", "[ops]") {
  Tensor x = x234();
  CHECK_CLOSE(nl::mean(x), Tensor::scalar(11.5f), 0, 0);
  CHECK_CLOSE(nl::mean(x, {}, true), T({11.5f}, {1, 1, 1}), 0, 0);
  // axis 2: row r averages to 4r + 1.5
  CHECK_CLOSE(nl::mean(x, {2}), T({1.5f, 5.5f, 9.5f, 13.5f, 17.5f, 21.5f}, {2, 3}), 1e-7, 0);
  // axis 0: (2i + 12) / 2 = i + 6
  std::vector<float> m0;
  for (int i = 0; i < 12; ++i) m0.push_back(i + 6.0f);
  CHECK_CLOSE(nl::mean(x, {0}, true), T(m0, {1, 3, 4}), 1e-7, 0);
  // axes {0, 2}: (32 j + 60) / 8 = 4 j + 7.5
  CHECK_CLOSE(nl::mean(x, {0, 2}), T({7.5f, 11.5f, 15.5f}, {3}), 1e-7, 0);
  CHECK_CLOSE(nl::mean(x.transpose(0, 2), {0}), T({1.5f, 13.5f, 5.5f, 17.5f, 9.5f, 21.5f}, {3, 2}), 1e-7, 0);
}

// ---------------------------------------------------------------- max

TEST_CASE("max over single, several and all axes", "[ops]") {
  Tensor x = x234();
  CHECK_CLOSE(nl::max(x), Tensor::scalar(23.0f), 0, 0);
  CHECK_CLOSE(nl::max(x, {1}), T({8, 9, 10, 11, 20, 21, 22, 23}, {2, 4}), 0, 0);
  CHECK_CLOSE(nl::max(x, {1}, true), T({8, 9, 10, 11, 20, 21, 22, 23}, {2, 1, 4}), 0, 0);
  CHECK_CLOSE(nl::max(x, {0, 2}), T({15, 19, 23}, {3}), 0, 0);
  CHECK_CLOSE(nl::max(x, {-1}), T({3, 7, 11, 15, 19, 23}, {2, 3}), 0, 0);
}

TEST_CASE("max finds the maximum wherever it sits, negative rows included", "[ops]") {
  Tensor m = T({3, -1, 7, 2, -5, -2, -9, -3, 0.5f, 4, 4, 1}, {3, 4});
  CHECK_CLOSE(nl::max(m, {1}), T({7, -2, 4}, {3}), 0, 0);
  CHECK_CLOSE(nl::max(m, {0}), T({3, 4, 7, 2}, {4}), 0, 0);
  CHECK_CLOSE(nl::max(T({-3, -1, -2}, {3})), Tensor::scalar(-1.0f), 0, 0);
  CHECK_CLOSE(nl::max(m.transpose(0, 1), {0}), T({7, -2, 4}, {3}), 0, 0);
  CHECK_CLOSE(nl::max(T({-INFINITY, -INFINITY}, {2})), Tensor::scalar(-INFINITY), 0, 0);
}

TEST_CASE("max propagates NaN", "[ops]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor m = T({1, nan, 3, 4, 5, 6}, {2, 3});
  Tensor r = nl::max(m, {1});
  CHECK(std::isnan(r.at({0})));
  CHECK(r.at({1}) == 6.0f);
  CHECK(std::isnan(nl::max(m).item()));
  Tensor c = nl::max(m, {0});
  CHECK(c.at({0}) == 4.0f);
  CHECK(std::isnan(c.at({1})));
  CHECK(c.at({2}) == 6.0f);
  // NaN first or last in the row
  CHECK(std::isnan(nl::max(T({nan, 1, 2}, {3})).item()));
  CHECK(std::isnan(nl::max(T({1, 2, nan}, {3})).item()));
}

// ---------------------------------------------------------------- var

// [1, 2, 3, 4]: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5
TEST_CASE("var with correction 0 and 1 by hand", "[ops]") {
  Tensor v = T({1, 2, 3, 4}, {4});
  CHECK_CLOSE(nl::var(v, {}, false, 1), Tensor::scalar(5.0f / 3.0f), 1e-6, 0);
  CHECK_CLOSE(nl::var(v, {}, false, 0), Tensor::scalar(1.25f), 1e-6, 0);
  CHECK_CLOSE(nl::var(v), Tensor::scalar(5.0f / 3.0f), 1e-6, 0);  // unbiased by default
  CHECK_CLOSE(nl::var(T({7, 7, 7}, {3}), {}, false, 0), Tensor::scalar(0.0f), 0, 0);
}

TEST_CASE("var over single, several and all axes", "[ops]") {
  Tensor x = x234();
  // axis 2: 4 consecutive numbers, ss = 5
  CHECK_CLOSE(nl::var(x, {2}, false, 1), Tensor::full({2, 3}, 5.0f / 3.0f), 1e-6, 0);
  CHECK_CLOSE(nl::var(x, {2}, true, 0), Tensor::full({2, 3, 1}, 1.25f), 1e-6, 0);
  // axis 1: k, k+4, k+8 -> ss = 32
  CHECK_CLOSE(nl::var(x, {1}, false, 1), Tensor::full({2, 4}, 16.0f), 1e-6, 0);
  CHECK_CLOSE(nl::var(x, {1}, false, 0), Tensor::full({2, 4}, 32.0f / 3.0f), 1e-6, 0);
  // axis 0: i, i+12 -> ss = 72
  CHECK_CLOSE(nl::var(x, {0}, true, 1), Tensor::full({1, 3, 4}, 72.0f), 1e-6, 0);
  CHECK_CLOSE(nl::var(x, {0}, false, 0), Tensor::full({3, 4}, 36.0f), 1e-6, 0);
  // all 24: biased (n^2 - 1) / 12, unbiased n (n + 1) / 12
  CHECK_CLOSE(nl::var(x, {}, false, 0), Tensor::scalar(575.0f / 12.0f), 1e-6, 0);
  CHECK_CLOSE(nl::var(x, {}, true, 1), T({50.0f}, {1, 1, 1}), 1e-6, 0);
  // axes {1, 2}: 12 consecutive numbers, ss = sum (i - 5.5)^2 = 143
  CHECK_CLOSE(nl::var(x, {1, 2}, false, 1), Tensor::full({2}, 13.0f), 1e-6, 0);
  CHECK_CLOSE(nl::var(x, {2, 1}, false, 0), Tensor::full({2}, 143.0f / 12.0f), 1e-6, 0);
  // non-contiguous: axis 0 of the transposed tensor is axis 2 of x
  CHECK_CLOSE(nl::var(x.transpose(0, 2), {0}, false, 1), Tensor::full({3, 2}, 5.0f / 3.0f), 1e-6, 0);
}

TEST_CASE("var stays accurate with a large mean", "[ops]") {
  // two-pass (or shifted) variance: 1e4 + {1, 2, 3, 4} has the variance of {1, 2, 3, 4}
  CHECK_CLOSE(nl::var(T({10001, 10002, 10003, 10004}, {4}), {}, false, 0), Tensor::scalar(1.25f), 1e-4, 0);
}

// ---------------------------------------------------------------- sum_to

TEST_CASE("sum_to sums a broadcast result back to its shape", "[ops]") {
  Tensor g = T({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_CLOSE(nl::sum_to(g, {3}), T({5, 7, 9}, {3}), 0, 0);
  CHECK_CLOSE(nl::sum_to(g, {1, 3}), T({5, 7, 9}, {1, 3}), 0, 0);
  CHECK_CLOSE(nl::sum_to(g, {2, 1}), T({6, 15}, {2, 1}), 0, 0);
  CHECK_CLOSE(nl::sum_to(g, {}), Tensor::scalar(21.0f), 0, 0);
  CHECK_CLOSE(nl::sum_to(g, {1, 1}), T({21}, {1, 1}), 0, 0);
  CHECK_CLOSE(nl::sum_to(g, {2, 3}), g, 0, 0);
  // (2,3,4) -> (3,1): over a and k, 16 j + 6 + 16 (j + 3) + 6 = 32 j + 60
  CHECK_CLOSE(nl::sum_to(x234(), {3, 1}), T({60, 92, 124}, {3, 1}), 0, 0);
  CHECK_CLOSE(nl::sum_to(x234(), {2, 1, 4}), T({12, 15, 18, 21, 48, 51, 54, 57}, {2, 1, 4}), 0, 0);
  CHECK_CLOSE(nl::sum_to(g.transpose(0, 1), {3, 1}), T({5, 7, 9}, {3, 1}), 0, 0);
}

// ---------------------------------------------------------------- errors

TEST_CASE("sum and the other reductions reject bad axes", "[ops]") {
  Tensor x = Tensor::zeros({2, 3});
  REQUIRE_THROWS_AS(nl::sum(x, {2}), nl::Error);
  REQUIRE_THROWS_WITH(nl::sum(x, {2}), Contains("sum") && Contains("axis 2"));
  REQUIRE_THROWS_WITH(nl::mean(x, {-3}), Contains("mean") && Contains("-3"));
  REQUIRE_THROWS_WITH(nl::max(x, {5}), Contains("max") && Contains("5"));
  REQUIRE_THROWS_WITH(nl::var(x, {2}), Contains("var") && Contains("2"));
  REQUIRE_THROWS_WITH(nl::sum(x, {1, -1}), Contains("sum") && Contains("twice") && Contains("(2, 3)"));
}

TEST_CASE("var rejects too few elements for the correction", "[ops]") {
  REQUIRE_THROWS_WITH(nl::var(Tensor::zeros({3, 1}), {1}, false, 1), Contains("var") && Contains("(3, 1)"));
  CHECK_NOTHROW(nl::var(Tensor::zeros({3, 1}), {1}, false, 0));
}

TEST_CASE("max and mean reject an empty reduction", "[ops]") {
  REQUIRE_THROWS_WITH(nl::max(Tensor::zeros({2, 0}), {1}), Contains("max") && Contains("(2, 0)"));
  REQUIRE_THROWS_WITH(nl::mean(Tensor::zeros({2, 0}), {1}), Contains("mean") && Contains("(2, 0)"));
  // an empty sum is 0
  CHECK_CLOSE(nl::sum(Tensor::zeros({2, 0}), {1}), Tensor::zeros({2}), 0, 0);
}

TEST_CASE("sum_to rejects a shape the input was not broadcast from", "[ops]") {
  REQUIRE_THROWS_WITH(nl::sum_to(Tensor::zeros({2, 3}), {4}), Contains("sum_to") && Contains("(2, 3)") &&
                                                                   Contains("(4,)"));
  REQUIRE_THROWS_WITH(nl::sum_to(Tensor::zeros({3}), {2, 3}), Contains("sum_to"));
}

TEST_CASE("sum and the other reductions reject int32 inputs", "[ops]") {
  Tensor i = Tensor::from_ints({1, 2}, {2});
  REQUIRE_THROWS_WITH(nl::sum(i), Contains("sum") && Contains("int32"));
  REQUIRE_THROWS_WITH(nl::mean(i), Contains("mean") && Contains("int32"));
  REQUIRE_THROWS_WITH(nl::max(i), Contains("max") && Contains("int32"));
  REQUIRE_THROWS_WITH(nl::var(i), Contains("var") && Contains("int32"));
}
