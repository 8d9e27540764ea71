// Elementwise kernels (tensor/cpu/elementwise.cpp) against values worked out by hand,
// or by a naive broadcasting loop written here, over every broadcast pattern and over
// non-contiguous inputs (transposed, sliced with a step, expanded).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
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

// A row-major tensor 0, 1, ..., n-1 of this shape, built without any view op.
Tensor iota(const Shape& s, float start = 0.0f, float step = 1.0f) {
  std::vector<float> v((size_t)nl::numel_of(s));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * (float)i;
  return Tensor::from_vector(v, s);
}

// NumPy broadcasting written out by hand: align trailing dims, map each output index
// to the operand index (0 along a dim of size 1). Operands given as row-major data.
std::vector<float> naive_broadcast(const std::vector<float>& a, const Shape& sa, const std::vector<float>& b,
                                   const Shape& sb, const Shape& out, const std::function<float(float, float)>& f) {
  const size_t n = out.size();
  auto offset = [&](const std::vector<int64_t>& idx, const Shape& s) {
    int64_t off = 0;
    const size_t lead = n - s.size();
    for (size_t d = 0; d < s.size(); ++d) off = off * s[d] + (s[d] == 1 ? 0 : idx[lead + d]);
    return off;
  };
  std::vector<float> r((size_t)nl::numel_of(out));
  std::vector<int64_t> idx(n, 0);
  for (size_t k = 0; k < r.size(); ++k) {
    int64_t rem = (int64_t)k;
    for (int d = (int)n - 1; d >= 0; --d) {
      idx[d] = rem % out[d];
      rem /= out[d];
    }
    r[k] = f(a[offset(idx, sa)], b[offset(idx, sb)]);
  }
  return r;
}

struct BinaryOp {
  const char* name;
  Tensor (*kernel)(const Tensor&, const Tensor&);
  std::function<float(float, float)> f;
};

std::vector<BinaryOp> binary_ops() {
  return {{"add", nl::add, [](float x, float y) { return x + y; }},
          {"sub", nl::sub, [](float x, float y) { return x - y; }},
          {"mul", nl::mul, [](float x, float y) { return x * y; }},
          {"div", nl::div, [](float x, float y) { return x / y; }}};
}

}  // namespace

// ---------------------------------------------------------------- hand-derived broadcasts

TEST_CASE("add broadcasts (2,3) + (3) by hand", "[ops]") {
  Tensor a = T({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = T({10, 20, 30}, {3});
  CHECK_CLOSE(nl::add(a, b), T({11, 22, 33, 14, 25, 36}, {2, 3}), 0, 0);
  CHECK_CLOSE(nl::add(b, a), T({11, 22, 33, 14, 25, 36}, {2, 3}), 0, 0);
}

TEST_CASE("add broadcasts (2,1) + (1,3) to an outer sum", "[ops]") {
  Tensor a = T({1, 2}, {2, 1});
  Tensor b = T({10, 20, 30}, {1, 3});
  CHECK_CLOSE(nl::add(a, b), T({11, 21, 31, 12, 22, 32}, {2, 3}), 0, 0);
}

TEST_CASE("sub broadcasts with the small operand on either side", "[ops]") {
  Tensor big = T({10, 20, 30, 40, 50, 60}, {2, 3});
  Tensor row = T({1, 2, 3}, {3});
  CHECK_CLOSE(nl::sub(big, row), T({9, 18, 27, 39, 48, 57}, {2, 3}), 0, 0);
  CHECK_CLOSE(nl::sub(row, big), T({-9, -18, -27, -39, -48, -57}, {2, 3}), 0, 0);
  Tensor col = T({1, 2}, {2, 1});
  CHECK_CLOSE(nl::sub(col, big), T({-9, -19, -29, -38, -48, -58}, {2, 3}), 0, 0);
}

TEST_CASE("div broadcasts with the small operand on either side", "[ops]") {
  Tensor big = T({1, 2, 4, 8, 16, 32}, {2, 3});
  Tensor row = T({1, 2, 4}, {3});
  CHECK_CLOSE(nl::div(big, row), T({1, 1, 1, 8, 8, 8}, {2, 3}), 0, 0);
  CHECK_CLOSE(nl::div(row, big), T({1, 1, 1, 0.125f, 0.125f, 0.125f}, {2, 3}), 0, 0);
  CHECK_CLOSE(nl::div(Tensor::scalar(1.0f), T({2, 4}, {2})), T({0.5f, 0.25f}, {2}), 0, 0);
}

TEST_CASE("mul broadcasts (4,1,3) * (2,1) to (4,2,3)", "[ops]") {
  Tensor a = iota({4, 1, 3});  // a[i,0,k] = 3i + k
  Tensor b = T({2, -1}, {2, 1});
  Tensor out = nl::mul(a, b);
  REQUIRE(out.shape() == Shape{4, 2, 3});
  std::vector<float> expected;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) expected.push_back((float)(3 * i + k) * (j == 0 ? 2.0f : -1.0f));
  CHECK_CLOSE(out, T(expected, {4, 2, 3}), 0, 0);
  CHECK_CLOSE(nl::mul(b, a), T(expected, {4, 2, 3}), 0, 0);
}

TEST_CASE("mul broadcasts a 0-d scalar against a matrix", "[ops]") {
  Tensor s = Tensor::scalar(3.0f);
  Tensor m = T({1, 2, 3, 4}, {2, 2});
  CHECK_CLOSE(nl::mul(s, m), T({3, 6, 9, 12}, {2, 2}), 0, 0);
  CHECK_CLOSE(nl::mul(m, s), T({3, 6, 9, 12}, {2, 2}), 0, 0);
  CHECK_CLOSE(nl::add(s, Tensor::scalar(4.0f)), Tensor::scalar(7.0f), 0, 0);
  CHECK(nl::add(s, Tensor::scalar(4.0f)).dim() == 0);
  // a (1,1) tensor broadcasts like a scalar but keeps its dims
  CHECK_CLOSE(nl::sub(m, T({1}, {1, 1})), T({0, 1, 2, 3}, {2, 2}), 0, 0);
}

TEST_CASE("add broadcasts in every pattern, all four ops, against a naive loop", "[ops]") {
  struct Pattern { Shape a, b, out; };
  std::vector<Pattern> patterns = {
      {{2, 3}, {2, 3}, {2, 3}},       {{2, 3}, {3}, {2, 3}},          {{3}, {2, 3}, {2, 3}},
      {{2, 1}, {1, 3}, {2, 3}},       {{4, 1, 3}, {2, 1}, {4, 2, 3}}, {{2, 1}, {4, 1, 3}, {4, 2, 3}},
      {{}, {2, 3}, {2, 3}},           {{2, 3}, {}, {2, 3}},           {{3, 1}, {2, 3, 4}, {2, 3, 4}},
      {{2, 3, 4}, {1, 3, 1}, {2, 3, 4}}, {{5, 1, 1}, {1, 4, 2}, {5, 4, 2}}, {{1}, {1}, {1}},
      {{300, 2}, {2}, {300, 2}},      {{70, 1, 50}, {1, 60, 50}, {70, 60, 50}}};
  nl::Generator gen(11);
  for (const auto& p : patterns) {
    Tensor a = gen.uniform(p.a, 0.5f, 2.0f), b = gen.uniform(p.b, 0.5f, 2.0f);
    for (const auto& op : binary_ops()) {
      INFO(op.name << " " << nl::to_string(p.a) << " with " << nl::to_string(p.b));
      Tensor out = op.kernel(a, b);
      REQUIRE(out.shape() == p.out);
      CHECK_CLOSE(out, T(naive_broadcast(a.to_vector(), p.a, b.to_vector(), p.b, p.out, op.f), p.out), 1e-6, 0);
    }
  }
}

// ---------------------------------------------------------------- non-contiguous inputs

TEST_CASE("add reads a transposed input through its strides", "[ops]") {
  Tensor x = iota({2, 3}).transpose(0, 1);  // (3,2): [[0,3],[1,4],[2,5]]
  REQUIRE_FALSE(x.is_contiguous());
  CHECK_CLOSE(nl::add(x, Tensor::full({3, 2}, 10.0f)), T({10, 13, 11, 14, 12, 15}, {3, 2}), 0, 0);
  CHECK_CLOSE(nl::add(Tensor::full({3, 2}, 10.0f), x), T({10, 13, 11, 14, 12, 15}, {3, 2}), 0, 0);
  // both operands transposed, plus a broadcast row
  CHECK_CLOSE(nl::mul(x, x), T({0, 9, 1, 16, 4, 25}, {3, 2}), 0, 0);
  CHECK_CLOSE(nl::sub(x, T({1, 2}, {2})), T({-1, 1, 0, 2, 1, 3}, {3, 2}), 0, 0);
}

TEST_CASE("mul reads an input sliced with a step", "[ops]") {
  Tensor x = iota({10}).slice(0, 1, 10, 3);  // 1, 4, 7
  REQUIRE(x.shape() == Shape{3});
  CHECK_CLOSE(nl::mul(x, T({1, 2, 3}, {3})), T({1, 8, 21}, {3}), 0, 0);
  Tensor m = iota({4, 6}).slice(1, 0, 6, 2).slice(0, 1, 4, 2);  // rows 1, 3; cols 0, 2, 4
  REQUIRE(m.shape() == Shape{2, 3});
  CHECK_CLOSE(nl::add(m, T({100, 200, 300}, {3})), T({106, 208, 310, 118, 220, 322}, {2, 3}), 0, 0);
  CHECK_CLOSE(nl::div(T({6, 8, 10, 18, 20, 22}, {2, 3}), m), T({1, 1, 1, 1, 1, 1}, {2, 3}), 0, 0);
}

TEST_CASE("sub reads expanded (stride 0) inputs", "[ops]") {
  Tensor col = T({1, 2, 3}, {3, 1}).expand({3, 4});
  Tensor row = T({10, 20, 30, 40}, {1, 4}).expand({3, 4});
  CHECK_CLOSE(nl::sub(row, col), T({9, 19, 29, 39, 8, 18, 28, 38, 7, 17, 27, 37}, {3, 4}), 0, 0);
  // expanded operand broadcast further
  CHECK_CLOSE(nl::add(col, T({0, 100, 200, 300}, {4})),
              T({1, 101, 201, 301, 2, 102, 202, 302, 3, 103, 203, 303}, {3, 4}), 0, 0);
}

TEST_CASE("exp and the other unary ops read non-contiguous inputs", "[ops]") {
  Tensor x = T({0, 1, 2, 3, 4, 5}, {2, 3}).transpose(0, 1);  // [[0,3],[1,4],[2,5]]
  std::vector<float> e;
  for (float v : {0, 3, 1, 4, 2, 5}) e.push_back(std::exp(v));
  CHECK_CLOSE(nl::exp(x), T(e, {3, 2}), 1e-6, 0);
  CHECK_CLOSE(nl::neg(x), T({0, -3, -1, -4, -2, -5}, {3, 2}), 0, 0);
  CHECK_CLOSE(nl::mul_scalar(x, 2.0f), T({0, 6, 2, 8, 4, 10}, {3, 2}), 0, 0);
  Tensor s = iota({8}).slice(0, 0, 8, 4);  // 0, 4
  CHECK_CLOSE(nl::sqrt(s), T({0, 2}, {2}), 0, 0);
  Tensor ex = T({-1, 2}, {2, 1}).expand({2, 3});
  CHECK_CLOSE(nl::relu(ex), T({0, 0, 0, 2, 2, 2}, {2, 3}), 0, 0);
}

// ---------------------------------------------------------------- scalar ops and in-place ops

TEST_CASE("add_scalar, mul_scalar and pow_scalar at known points", "[ops]") {
  Tensor x = T({1, 4, 9}, {3});
  CHECK_CLOSE(nl::add_scalar(x, -1.5f), T({-0.5f, 2.5f, 7.5f}, {3}), 0, 0);
  CHECK_CLOSE(nl::mul_scalar(x, -2.0f), T({-2, -8, -18}, {3}), 0, 0);
  CHECK_CLOSE(nl::pow_scalar(x, 0.5f), T({1, 2, 3}, {3}), 1e-6, 0);
  CHECK_CLOSE(nl::pow_scalar(x, 2.0f), T({1, 16, 81}, {3}), 1e-6, 0);
  CHECK_CLOSE(nl::pow_scalar(x, -1.0f), T({1, 0.25f, 1.0f / 9.0f}, {3}), 1e-6, 0);
  CHECK_CLOSE(nl::pow_scalar(T({-2, 3}, {2}), 3.0f), T({-8, 27}, {2}), 1e-6, 0);
  CHECK_CLOSE(nl::pow_scalar(x, 0.0f), T({1, 1, 1}, {3}), 0, 0);
}

TEST_CASE("add_ adds a broadcast source in place", "[ops]") {
  Tensor dst = T({1, 2, 3, 4, 5, 6}, {2, 3});
  const float* before = dst.data();
  nl::add_(dst, T({10, 20, 30}, {3}));
  CHECK(dst.data() == before);
  CHECK_CLOSE(dst, T({11, 22, 33, 14, 25, 36}, {2, 3}), 0, 0);
  nl::add_(dst, dst.clone());
  CHECK_CLOSE(dst, T({22, 44, 66, 28, 50, 72}, {2, 3}), 0, 0);
}

TEST_CASE("add_ writes through a non-contiguous destination view", "[ops]") {
  Tensor base = Tensor::zeros({2, 3});
  Tensor view = base.transpose(0, 1);  // (3,2)
  nl::add_(view, T({1, 2}, {2}));
  CHECK_CLOSE(base, T({1, 1, 1, 2, 2, 2}, {2, 3}), 0, 0);
  Tensor strip = base.slice(1, 0, 3, 2);  // columns 0 and 2
  nl::add_(strip, T({10, 20, 30, 40}, {2, 2}));
  CHECK_CLOSE(base, T({11, 1, 21, 32, 2, 42}, {2, 3}), 0, 0);
}

TEST_CASE("axpy_ adds a scaled source in place", "[ops]") {
  Tensor dst = T({1, 2, 3}, {3});
  nl::axpy_(dst, -2.0f, T({1, 1, 0.5f}, {3}));
  CHECK_CLOSE(dst, T({-1, 0, 2}, {3}), 0, 0);
  Tensor d2 = Tensor::zeros({3, 2});
  nl::axpy_(d2, 0.5f, iota({2, 3}).transpose(0, 1));  // a non-contiguous source
  CHECK_CLOSE(d2, T({0, 1.5f, 0.5f, 2, 1, 2.5f}, {3, 2}), 0, 0);
}

// ---------------------------------------------------------------- unary maps at known points

TEST_CASE("neg exp log sqrt rsqrt at known points", "[ops]") {
  const float e = 2.718281828459045f;
  CHECK_CLOSE(nl::neg(T({1, -2, 0}, {3})), T({-1, 2, 0}, {3}), 0, 0);
  CHECK_CLOSE(nl::exp(T({0, 1, -1, 2}, {4})), T({1, e, 1 / e, 7.38905609893065f}, {4}), 1e-6, 0);
  CHECK_CLOSE(nl::log(T({1, e, 0.5f, 100}, {4})), T({0, 1, -0.6931471805599453f, 4.605170185988092f}, {4}), 1e-6,
              1e-7);
  CHECK_CLOSE(nl::log(T({0}, {1})), T({-INFINITY}, {1}), 0, 0);
  CHECK(std::isnan(nl::log(T({-1}, {1})).item()));
  CHECK_CLOSE(nl::sqrt(T({4, 2.25f, 0}, {3})), T({2, 1.5f, 0}, {3}), 1e-7, 0);
  CHECK_CLOSE(nl::rsqrt(T({4, 0.25f, 100}, {3})), T({0.5f, 2, 0.1f}, {3}), 1e-6, 0);
  CHECK_CLOSE(nl::rsqrt(T({0}, {1})), T({INFINITY}, {1}), 0, 0);
}

TEST_CASE("tanh and relu at known points", "[ops]") {
  CHECK_CLOSE(nl::tanh(T({0, 1, -0.5f, 20}, {4})), T({0, 0.7615941559557649f, -0.46211715726000974f, 1}, {4}), 1e-6,
              1e-7);
  CHECK_CLOSE(nl::relu(T({-1, 0, 2.5f, -0.001f}, {4})), T({0, 0, 2.5f, 0}, {4}), 0, 0);
}

// erf(1) = 0.8427007929497149, erf(-0.5) = -0.5204998778130465, erf(3) = 0.9999779095030014
TEST_CASE("erf at known points, odd", "[ops]") {
  CHECK_CLOSE(nl::erf(T({0, 1, -0.5f, 3, -30}, {5})),
              T({0, 0.8427007929497149f, -0.5204998778130465f, 0.9999779095030014f, -1}, {5}), 1e-6, 1e-7);
}

// gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). At x = 1:
//   u = 0.7978845608 * 1.044715 = 0.8335625..., tanh(u) = 0.6823840..., gelu = 0.5 * 1.6823840 = 0.8411920
// gelu(x) - gelu(-x) = x, so gelu(-1) = 0.8411920 - 1 = -0.1588080.
TEST_CASE("gelu uses the tanh approximation", "[ops]") {
  Tensor x = T({0, 1, -1, 2, 0.5f, -3}, {6});
  Tensor expected = T({0, 0.8411919906082768f, -0.15880800939172324f, 1.954597694087775f, 0.34571400982514394f,
                       -0.0036373920817729943f},
                      {6});
  CHECK_CLOSE(nl::gelu(x), expected, 1e-5, 1e-7);
  // the exact (erf) gelu differs at 1 by 1.5e-4: make sure that is not what was built
  CHECK(std::fabs(nl::gelu(T({1}, {1})).item() - 0.8413447460685429f) > 1e-4);
}

// silu(x) = x / (1 + e^-x): silu(1) = 1 / (1 + 1/e) = 0.7310586
TEST_CASE("silu at known points", "[ops]") {
  CHECK_CLOSE(nl::silu(T({0, 1, -1, 2}, {4})),
              T({0, 0.7310585786300049f, -0.2689414213699951f, 1.7615941559557646f}, {4}), 1e-6, 1e-7);
}

// gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2): at 1,
// 0.8411920 + 0.5 * (1 - 0.4656480) * 0.9049066 = 1.0829641; at 0 it is 0.5.
TEST_CASE("gelu_backward at known points", "[ops]") {
  Tensor x = T({0, 1, -1, 2, 0.5f, -3}, {6});
  Tensor dy = T({1, 1, 1, 2, -1, 1}, {6});
  Tensor expected = T({0.5f, 1.0829640837983767f, -0.08296408385288778f, 2 * 1.086099256641937f,
                       -0.8673699034844606f, -0.01158416664437563f},
                      {6});
  CHECK_CLOSE(nl::gelu_backward(x, dy), expected, 1e-5, 1e-7);
}

// silu'(x) = s (1 + x (1 - s)), s = sigmoid(x): at 0 it is 0.5, at 1 0.9276705
TEST_CASE("silu_backward at known points", "[ops]") {
  Tensor x = T({0, 1, -1, 2}, {4});
  Tensor dy = T({2, 1, 1, -1}, {4});
  CHECK_CLOSE(nl::silu_backward(x, dy), T({1, 0.9276705118714869f, 0.07232948812851325f, -1.0907842487848955f}, {4}),
              1e-5, 1e-7);
}

TEST_CASE("relu_backward passes the gradient where x > 0 only", "[ops]") {
  CHECK_CLOSE(nl::relu_backward(T({-1, 0, 2, 1e-6f}, {4}), T({3, 4, 5, 6}, {4})), T({0, 0, 5, 6}, {4}), 0, 0);
}

TEST_CASE("tanh_backward uses the saved output", "[ops]") {
  // y = tanh(x) given: dx = dy (1 - y^2)
  CHECK_CLOSE(nl::tanh_backward(T({0.5f, 0, -0.9f}, {3}), T({2, 3, 1}, {3})), T({1.5f, 3, 0.19f}, {3}), 1e-6, 1e-7);
}

TEST_CASE("equal_mask marks equal elements with broadcasting", "[ops]") {
  CHECK_CLOSE(nl::equal_mask(T({1, 2, 3}, {3}), T({1, 0, 3}, {3})), T({1, 0, 1}, {3}), 0, 0);
  Tensor m = T({1, 5, 3, 4, 2, 4}, {2, 3});
  CHECK_CLOSE(nl::equal_mask(m, T({5, 4}, {2, 1})), T({0, 1, 0, 1, 0, 1}, {2, 3}), 0, 0);
  CHECK_CLOSE(nl::equal_mask(T({NAN}, {1}), T({NAN}, {1})), T({0}, {1}), 0, 0);
}

// ---------------------------------------------------------------- errors

TEST_CASE("add and the other binary ops reject shapes that do not broadcast", "[ops]") {
  Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({4});
  REQUIRE_THROWS_AS(nl::add(a, b), nl::Error);
  REQUIRE_THROWS_WITH(nl::add(a, b), Contains("add") && Contains("(2, 3)") && Contains("(4,)"));
  REQUIRE_THROWS_WITH(nl::sub(a, b), Contains("sub") && Contains("(2, 3)") && Contains("(4,)"));
  REQUIRE_THROWS_WITH(nl::mul(a, b), Contains("mul") && Contains("(2, 3)") && Contains("(4,)"));
  REQUIRE_THROWS_WITH(nl::div(a, b), Contains("div") && Contains("(2, 3)") && Contains("(4,)"));
  REQUIRE_THROWS_WITH(nl::add(Tensor::zeros({4, 1, 3}), Tensor::zeros({2, 2})),
                      Contains("add") && Contains("(4, 1, 3)") && Contains("(2, 2)"));
  REQUIRE_THROWS_WITH(nl::equal_mask(a, b), Contains("equal_mask") && Contains("(2, 3)"));
}

TEST_CASE("add_ and axpy_ reject mismatched shapes", "[ops]") {
  Tensor dst = Tensor::zeros({3});
  // src (2,3) would broadcast dst to a bigger shape: it cannot be added into dst
  REQUIRE_THROWS_WITH(nl::add_(dst, Tensor::zeros({2, 3})), Contains("add_") && Contains("(2, 3)"));
  REQUIRE_THROWS_WITH(nl::axpy_(dst, 1.0f, Tensor::zeros({4})), Contains("axpy_") && Contains("(3,)") &&
                                                                     Contains("(4,)"));
}

TEST_CASE("add and the unary ops reject int32 inputs", "[ops]") {
  Tensor i = Tensor::from_ints({1, 2, 3}, {3});
  Tensor f = Tensor::zeros({3});
  REQUIRE_THROWS_WITH(nl::add(i, f), Contains("add") && Contains("int32") && Contains("(3,)"));
  REQUIRE_THROWS_WITH(nl::mul(f, i), Contains("mul") && Contains("int32"));
  REQUIRE_THROWS_WITH(nl::exp(i), Contains("exp") && Contains("int32"));
  REQUIRE_THROWS_WITH(nl::gelu(i), Contains("gelu") && Contains("int32"));
  REQUIRE_THROWS_WITH(nl::mul_scalar(i, 2.0f), Contains("mul_scalar") && Contains("int32"));
}

TEST_CASE("gelu_backward and the other backward maps reject mismatched shapes", "[ops]") {
  Tensor x = Tensor::zeros({2}), dy = Tensor::zeros({3});
  REQUIRE_THROWS_WITH(nl::gelu_backward(x, dy), Contains("gelu_backward") && Contains("(2,)") && Contains("(3,)"));
  REQUIRE_THROWS_WITH(nl::silu_backward(x, dy), Contains("silu_backward") && Contains("(2,)"));
  REQUIRE_THROWS_WITH(nl::relu_backward(x, dy), Contains("relu_backward") && Contains("(2,)"));
  REQUIRE_THROWS_WITH(nl::tanh_backward(x, dy), Contains("tanh_backward") && Contains("(2,)"));
}
