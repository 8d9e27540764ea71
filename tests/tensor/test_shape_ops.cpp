// Joining, splitting and masking (tensor/cpu/shape_ops.cpp): concat, split, the causal
// mask and the dropout mask.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/tensor/tensor_literals.h"
#include "tests/test_util.h"

using Catch::Contains;
using nl::Shape;
using nl::Tensor;
using nl::test::T;

// ---------------------------------------------------------------- concat / split

TEST_CASE("concat along axis 0 and axis 1 by hand", "[ops]") {
  Tensor a = T({1, 2, 3, 4, 5, 6}, {2, 3}), b = T({7, 8, 9}, {1, 3});
  CHECK_CLOSE(nl::concat({a, b}, 0), T({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}), 0, 0);
  Tensor c = T({10, 20}, {2, 1});
  CHECK_CLOSE(nl::concat({a, c}, 1), T({1, 2, 3, 10, 4, 5, 6, 20}, {2, 4}), 0, 0);
  CHECK_CLOSE(nl::concat({c, a, c}, -1), T({10, 1, 2, 3, 10, 20, 4, 5, 6, 20}, {2, 5}), 0, 0);
  CHECK_CLOSE(nl::concat({a}, 0), a, 0, 0);
}

TEST_CASE("concat along the middle axis of 3-D tensors", "[ops]") {
  Tensor a = T({0, 1, 2, 3}, {2, 1, 2}), b = T({10, 11, 12, 13, 14, 15, 16, 17}, {2, 2, 2});
  CHECK_CLOSE(nl::concat({a, b}, 1), T({0, 1, 10, 11, 12, 13, 2, 3, 14, 15, 16, 17}, {2, 3, 2}), 0, 0);
}

TEST_CASE("concat reads non-contiguous parts and accepts empty ones", "[ops]") {
  Tensor t = T({1, 2, 3, 4, 5, 6}, {3, 2}).transpose(0, 1);  // [[1,3,5],[2,4,6]]
  Tensor s = T({7, 0, 8, 0}, {2, 2}).slice(1, 0, 2, 2);       // [[7],[8]]
  CHECK_CLOSE(nl::concat({t, s}, 1), T({1, 3, 5, 7, 2, 4, 6, 8}, {2, 4}), 0, 0);
  Tensor e = T({9}, {1, 1}).expand({2, 1});
  CHECK_CLOSE(nl::concat({e, t}, 1), T({9, 1, 3, 5, 9, 2, 4, 6}, {2, 4}), 0, 0);
  CHECK_CLOSE(nl::concat({Tensor::zeros({0, 3}), t}, 0), t, 0, 0);
}

TEST_CASE("split returns views of the given sizes", "[ops]") {
  Tensor x = T({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {2, 5});
  auto parts = nl::split(x, {2, 0, 3}, 1);
  REQUIRE(parts.size() == 3);
  CHECK_CLOSE(parts[0], T({0, 1, 5, 6}, {2, 2}), 0, 0);
  CHECK(parts[1].shape() == Shape{2, 0});
  CHECK_CLOSE(parts[2], T({2, 3, 4, 7, 8, 9}, {2, 3}), 0, 0);
  for (const Tensor& p : parts) CHECK(p.shares_storage(x));
  auto rows = nl::split(x, {1, 1}, -2);
  CHECK_CLOSE(rows[1], T({5, 6, 7, 8, 9}, {1, 5}), 0, 0);
}

TEST_CASE("concat and split round trip", "[ops]") {
  nl::Generator gen(41);
  for (int axis = 0; axis < 3; ++axis) {
    INFO("axis " << axis);
    Shape s1 = {2, 3, 4}, s2 = {2, 3, 4}, s3 = {2, 3, 4};
    s1[axis] = 1;
    s2[axis] = 2;
    s3[axis] = 3;
    Tensor a = gen.normal(s1), b = gen.normal(s2), c = gen.normal(s3);
    Tensor joined = nl::concat({a, b, c}, axis);
    CHECK(joined.size(axis) == 6);
    auto back = nl::split(joined, {1, 2, 3}, axis);
    CHECK_CLOSE(back[0], a, 0, 0);
    CHECK_CLOSE(back[1], b, 0, 0);
    CHECK_CLOSE(back[2], c, 0, 0);
    CHECK_CLOSE(nl::concat(back, axis), joined, 0, 0);
  }
}

TEST_CASE("concat rejects parts that differ outside the axis", "[ops]") {
  Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({2, 4});
  REQUIRE_THROWS_AS(nl::concat({a, b}, 0), nl::Error);
  REQUIRE_THROWS_WITH(nl::concat({a, b}, 0), Contains("concat") && Contains("(2, 3)") && Contains("(2, 4)"));
  REQUIRE_THROWS_WITH(nl::concat({a, Tensor::zeros({2, 3, 1})}, 0), Contains("concat") && Contains("(2, 3, 1)"));
  REQUIRE_THROWS_WITH(nl::concat({}, 0), Contains("concat"));
  REQUIRE_THROWS_WITH(nl::concat({a, a}, 2), Contains("concat") && Contains("2"));
  REQUIRE_THROWS_WITH(nl::concat({a, Tensor::from_ints({1, 2, 3}, {1, 3})}, 0),
                      Contains("concat") && Contains("int32"));
}

TEST_CASE("split rejects sizes that do not add up", "[ops]") {
  Tensor x = Tensor::zeros({2, 5});
  REQUIRE_THROWS_AS(nl::split(x, {2, 2}, 1), nl::Error);
  REQUIRE_THROWS_WITH(nl::split(x, {2, 2}, 1), Contains("split") && Contains("4") && Contains("(2, 5)"));
  REQUIRE_THROWS_WITH(nl::split(x, {3, 3}, 1), Contains("split") && Contains("6") && Contains("(2, 5)"));
  REQUIRE_THROWS_WITH(nl::split(x, {6, -1}, 1), Contains("split") && Contains("-1"));
  REQUIRE_THROWS_WITH(nl::split(x, {1, 1}, 2), Contains("split") && Contains("2"));
}

// ---------------------------------------------------------------- causal mask

TEST_CASE("causal_mask_fill masks the future of a square matrix", "[ops]") {
  Tensor x = T({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  const float m = -INFINITY;
  CHECK_CLOSE(nl::causal_mask_fill(x, m), T({1, m, m, 4, 5, m, 7, 8, 9}, {3, 3}), 0, 0);
  CHECK_CLOSE(nl::causal_mask_fill(x, 0.0f), T({1, 0, 0, 4, 5, 0, 7, 8, 9}, {3, 3}), 0, 0);
  // the input is left alone
  CHECK_CLOSE(x, T({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}), 0, 0);
}

// With S > T the T queries are the last T of S positions: query i sees keys j <= i + S - T.
TEST_CASE("causal_mask_fill with more keys than queries (S > T)", "[ops]") {
  Tensor x = Tensor::ones({2, 4});
  // row 0 sees keys 0..2, row 1 sees 0..3
  CHECK_CLOSE(nl::causal_mask_fill(x, -1.0f), T({1, 1, 1, -1, 1, 1, 1, 1}, {2, 4}), 0, 0);
  Tensor y = Tensor::ones({1, 5});
  CHECK_CLOSE(nl::causal_mask_fill(y, -1.0f), Tensor::ones({1, 5}), 0, 0);
  // the pattern written as a loop
  const int64_t Tq = 3, S = 7;
  Tensor z = nl::causal_mask_fill(Tensor::zeros({Tq, S}), 1.0f);
  for (int64_t i = 0; i < Tq; ++i)
    for (int64_t j = 0; j < S; ++j) CHECK(z.at({i, j}) == (j > i + (S - Tq) ? 1.0f : 0.0f));
}

TEST_CASE("causal_mask_fill masks every matrix of a batch, non-contiguous input included", "[ops]") {
  Tensor x = Tensor::arange(18).reshape({2, 3, 3});
  Tensor y = nl::causal_mask_fill(x, -1.0f);
  CHECK_CLOSE(y, T({0, -1, -1, 3, 4, -1, 6, 7, 8, 9, -1, -1, 12, 13, -1, 15, 16, 17}, {2, 3, 3}), 0, 0);
  // the transposed view of each matrix: masking applies to the logical (T, S) layout
  Tensor t = x.transpose(1, 2);  // t[b, i, j] = x[b, j, i]
  CHECK_CLOSE(nl::causal_mask_fill(t, -1.0f),
              T({0, -1, -1, 1, 4, -1, 2, 5, 8, 9, -1, -1, 10, 13, -1, 11, 14, 17}, {2, 3, 3}), 0, 0);
}

TEST_CASE("causal_mask_fill rejects more queries than keys and 1-D input", "[ops]") {
  REQUIRE_THROWS_WITH(nl::causal_mask_fill(Tensor::zeros({4, 2}), 0.0f), Contains("causal_mask") && Contains("(4, 2)"));
  REQUIRE_THROWS_WITH(nl::causal_mask_fill(Tensor::zeros({4}), 0.0f), Contains("causal_mask") && Contains("(4,)"));
}

// ---------------------------------------------------------------- dropout mask

TEST_CASE("dropout_mask has mean about 1 and zero fraction about p", "[ops]") {
  const float p = 0.3f;
  nl::Generator gen(51);
  Tensor m = nl::dropout_mask({200, 500}, p, gen);
  REQUIRE(m.shape() == Shape{200, 500});
  auto v = m.to_vector();
  int64_t zeros = 0;
  double total = 0;
  bool values_ok = true;
  for (float x : v) {
    if (x == 0.0f) ++zeros;
    else values_ok &= std::fabs(x - 1.0f / (1.0f - p)) < 1e-6f;
    total += x;
  }
  const double n = (double)v.size();
  CHECK(values_ok);
  // n = 1e5: the standard error of the fraction is 0.0015, of the mean 0.0022
  CHECK(std::fabs(zeros / n - p) < 0.01);
  CHECK(std::fabs(total / n - 1.0) < 0.015);
}

TEST_CASE("dropout_mask is deterministic per seed", "[ops]") {
  nl::Generator g1(7), g2(7), g3(8);
  Tensor a = nl::dropout_mask({1000}, 0.5f, g1);
  Tensor b = nl::dropout_mask({1000}, 0.5f, g2);
  Tensor c = nl::dropout_mask({1000}, 0.5f, g3);
  CHECK(a.to_vector() == b.to_vector());
  CHECK(a.to_vector() != c.to_vector());
  // the generator advances: a second draw differs from the first
  CHECK(nl::dropout_mask({1000}, 0.5f, g1).to_vector() != a.to_vector());
}

TEST_CASE("dropout_mask with p = 0 keeps everything, bad p throws", "[ops]") {
  nl::Generator gen(9);
  CHECK_CLOSE(nl::dropout_mask({3, 4}, 0.0f, gen), Tensor::ones({3, 4}), 0, 0);
  REQUIRE_THROWS_WITH(nl::dropout_mask({3}, 1.0f, gen), Contains("dropout") && Contains("1"));
  REQUIRE_THROWS_WITH(nl::dropout_mask({3}, -0.1f, gen), Contains("dropout"));
}
