// Softmax and log-softmax over the last axis (tensor/cpu/softmax.cpp), and their
// backward kernels against the Jacobian written out in a naive loop.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/tensor/tensor_literals.h"
#include "tests/test_util.h"

using Catch::Contains;
using nl::Shape;
using nl::Tensor;
using nl::test::T;
using nl::test::to_tensor;

namespace {

// Row-wise softmax in double, written out here.
std::vector<double> naive_softmax(const std::vector<float>& x, int64_t C) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / C; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < C; ++j) m = std::max(m, (double)x[r * C + j]);
    for (int64_t j = 0; j < C; ++j) s += std::exp((double)x[r * C + j] - m);
    for (int64_t j = 0; j < C; ++j) y[r * C + j] = std::exp((double)x[r * C + j] - m) / s;
  }
  return y;
}

// A backward test's case: x and dy (R, C) drawn from gen in that order, and the
// expected dx = J^T dy by loops over each row's Jacobian, where jacobian(p, i, j) is
// d out_i / d x_j of a row whose softmax is p (the row's C values).
struct JacobianCase {
  Tensor x, dy, dx;
};

JacobianCase jacobian_case(nl::Generator& gen, int64_t R, int64_t C,
                           const std::function<double(const double* p, int64_t i, int64_t j)>& jacobian) {
  JacobianCase k;
  k.x = gen.normal({R, C});
  k.dy = gen.normal({R, C});
  auto p = naive_softmax(k.x.to_vector(), C);
  auto g = k.dy.to_vector();
  std::vector<double> dx(R * C, 0);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t j = 0; j < C; ++j)
      for (int64_t i = 0; i < C; ++i) dx[r * C + j] += g[r * C + i] * jacobian(&p[r * C], i, j);
  k.dx = to_tensor(dx, {R, C});
  return k;
}

}  // namespace

TEST_CASE("softmax of [1, 2, 3] by hand", "[ops]") {
  // e^i / (e + e^2 + e^3)
  Tensor y = nl::softmax(T({1, 2, 3}, {3}));
  CHECK_CLOSE(y, T({0.09003057317038046f, 0.24472847105479767f, 0.6652409557748219f}, {3}), 1e-6, 0);
  // log_softmax = x - log(e^0 + e^1 + e^2) for [0, 1, 2]
  CHECK_CLOSE(nl::log_softmax(T({0, 1, 2}, {3})), T({-2.40760596444438f, -1.40760596444438f, -0.40760596444438f}, {3}),
              1e-6, 0);
  // equal logits: uniform
  CHECK_CLOSE(nl::softmax(T({5, 5, 5, 5}, {1, 4})), Tensor::full({1, 4}, 0.25f), 1e-7, 0);
}

TEST_CASE("softmax rows sum to 1 and match a naive softmax", "[ops]") {
  nl::Generator gen(21);
  Tensor x = gen.normal({2, 5, 7}, 0.0f, 3.0f);
  Tensor y = nl::softmax(x);
  REQUIRE(y.shape() == Shape{2, 5, 7});
  CHECK_CLOSE(nl::sum(y, {-1}), Tensor::ones({2, 5}), 1e-6, 1e-6);
  CHECK_CLOSE(y, to_tensor(naive_softmax(x.to_vector(), 7), {2, 5, 7}), 1e-5, 1e-7);
  for (float v : y.to_vector()) CHECK((v >= 0.0f && v <= 1.0f));
}

TEST_CASE("softmax is shift invariant per row", "[ops]") {
  nl::Generator gen(22);
  Tensor x = gen.normal({3, 6});
  Tensor shifts = T({100, -50, 7}, {3, 1});
  CHECK_CLOSE(nl::softmax(nl::add(x, shifts)), nl::softmax(x), 1e-4, 1e-6);
  CHECK_CLOSE(nl::log_softmax(nl::add(x, shifts)), nl::log_softmax(x), 1e-4, 1e-4);
}

TEST_CASE("softmax of large logits stays finite", "[ops]") {
  Tensor y = nl::softmax(T({1000, 1001, 1002}, {3}));
  CHECK_CLOSE(y, T({0.09003057317038046f, 0.24472847105479767f, 0.6652409557748219f}, {3}), 1e-5, 0);
  Tensor z = nl::softmax(T({-1000, 0, 1000}, {3}));
  CHECK_CLOSE(z, T({0, 0, 1}, {3}), 0, 1e-30);
}

TEST_CASE("log_softmax of large logits stays finite where log(softmax) does not", "[ops]") {
  Tensor x = T({1000, 0, -1000, 1000, 1001, 1002}, {2, 3});
  Tensor ls = nl::log_softmax(x);
  for (float v : ls.to_vector()) CHECK(std::isfinite(v));
  CHECK_CLOSE(ls, T({0, -1000, -2000, -2.40760596444438f, -1.40760596444438f, -0.40760596444438f}, {2, 3}), 1e-5,
              1e-5);
  // log(softmax) underflows to -inf on the first row: log_softmax must not
  Tensor naive = nl::log(nl::softmax(x));
  CHECK(std::isinf(naive.at({0, 2})));
}

TEST_CASE("log_softmax equals log(softmax) for moderate logits", "[ops]") {
  nl::Generator gen(23);
  Tensor x = gen.normal({4, 9}, 0.0f, 2.0f);
  CHECK_CLOSE(nl::log_softmax(x), nl::log(nl::softmax(x)), 1e-5, 1e-5);
  CHECK_CLOSE(nl::exp(nl::log_softmax(x)), nl::softmax(x), 1e-5, 1e-7);
}

TEST_CASE("softmax reads non-contiguous inputs along their logical last axis", "[ops]") {
  // stored (3, 2), viewed (2, 3): rows are [0, 1, 2] and [1, 2, 3] after the offsets below
  Tensor stored = T({0, 1, 1, 2, 2, 3}, {3, 2});
  Tensor x = stored.transpose(0, 1);  // [[0, 1, 2], [1, 2, 3]]
  std::vector<float> row = {0.09003057317038046f, 0.24472847105479767f, 0.6652409557748219f};
  std::vector<float> two_rows = row;
  two_rows.insert(two_rows.end(), row.begin(), row.end());
  CHECK_CLOSE(nl::softmax(x), T(two_rows, {2, 3}), 1e-6, 0);
  Tensor s = T({0, 9, 1, 9, 2, 9}, {6}).slice(0, 0, 6, 2);  // [0, 1, 2]
  CHECK_CLOSE(nl::softmax(s), T(row, {3}), 1e-6, 0);
}

TEST_CASE("softmax handles -inf entries and all -inf rows", "[ops]") {
  CHECK_CLOSE(nl::softmax(T({0, -INFINITY, 0}, {3})), T({0.5f, 0, 0.5f}, {3}), 1e-7, 0);
  CHECK_CLOSE(nl::log_softmax(T({0, -INFINITY}, {2})), T({0, -INFINITY}, {2}), 0, 0);
  // a fully masked row has no distribution: NaN, as PyTorch
  Tensor y = nl::softmax(T({-INFINITY, -INFINITY}, {2}));
  CHECK(std::isnan(y.at({0})));
}

// y = softmax(x): dx_j = sum_i dy_i dy_i/dx_j = sum_i dy_i y_i (delta_ij - y_j)
TEST_CASE("softmax_backward against the Jacobian", "[ops]") {
  nl::Generator gen(24);
  const JacobianCase k = jacobian_case(
      gen, 3, 5, [](const double* y, int64_t i, int64_t j) { return y[i] * ((i == j ? 1.0 : 0.0) - y[j]); });
  CHECK_CLOSE(nl::softmax_backward(nl::softmax(k.x), k.dy), k.dx, 1e-4, 1e-6);
  // a non-contiguous upstream gradient
  Tensor dyt = k.dy.transpose(0, 1).contiguous().transpose(0, 1);
  REQUIRE_FALSE(dyt.is_contiguous());
  CHECK_CLOSE(nl::softmax_backward(nl::softmax(k.x), dyt), k.dx, 1e-4, 1e-6);
}

// y = log_softmax(x): dy_i/dx_j = delta_ij - p_j, so dx_j = dy_j - p_j sum_i dy_i
TEST_CASE("log_softmax_backward against the Jacobian", "[ops]") {
  nl::Generator gen(25);
  const JacobianCase k =
      jacobian_case(gen, 4, 3, [](const double* p, int64_t i, int64_t j) { return (i == j ? 1.0 : 0.0) - p[j]; });
  CHECK_CLOSE(nl::log_softmax_backward(nl::log_softmax(k.x), k.dy), k.dx, 1e-4, 1e-6);
}

TEST_CASE("softmax rejects bad inputs", "[ops]") {
  REQUIRE_THROWS_WITH(nl::softmax(Tensor::scalar(1.0f)), Contains("softmax"));
  REQUIRE_THROWS_WITH(nl::softmax(Tensor::from_ints({1, 2}, {2})), Contains("softmax") && Contains("int32"));
  REQUIRE_THROWS_WITH(nl::log_softmax(Tensor::from_ints({1, 2}, {2})), Contains("log_softmax") && Contains("int32"));
  REQUIRE_THROWS_WITH(nl::softmax_backward(Tensor::zeros({2, 3}), Tensor::zeros({3, 2})),
                      Contains("softmax_backward") && Contains("(2, 3)") && Contains("(3, 2)"));
  REQUIRE_THROWS_WITH(nl::log_softmax_backward(Tensor::zeros({2, 3}), Tensor::zeros({2})),
                      Contains("log_softmax_backward") && Contains("(2, 3)"));
}
