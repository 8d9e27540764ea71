// Cross-entropy with integer targets (tensor/cpu/cross_entropy.cpp) against the naive
// formula loss = mean over kept rows of (log sum_j exp z_rj - z_r,t_r), written here.
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
using nl::test::to_tensor;

namespace {

struct Naive {
  double loss;
  std::vector<double> lse;
  std::vector<double> dlogits;  // for dloss = 1
};

Naive naive_ce(const std::vector<float>& z, const std::vector<int32_t>& t, int64_t V, int ignore) {
  const int64_t N = (int64_t)t.size();
  Naive r{0, std::vector<double>(N), std::vector<double>(N * V, 0.0)};
  int64_t kept = 0;
  for (int64_t i = 0; i < N; ++i) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < V; ++j) m = std::max(m, (double)z[i * V + j]);
    for (int64_t j = 0; j < V; ++j) s += std::exp((double)z[i * V + j] - m);
    r.lse[i] = m + std::log(s);
    if (t[i] == ignore) continue;
    ++kept;
    r.loss += r.lse[i] - z[i * V + t[i]];
  }
  r.loss = kept ? r.loss / kept : NAN;
  for (int64_t i = 0; i < N; ++i) {
    if (t[i] == ignore) continue;
    for (int64_t j = 0; j < V; ++j)
      r.dlogits[i * V + j] = (std::exp(z[i * V + j] - r.lse[i]) - (j == t[i] ? 1.0 : 0.0)) / kept;
  }
  return r;
}

}  // namespace

TEST_CASE("cross_entropy of uniform logits is log V", "[ops]") {
  Tensor lse;
  Tensor loss = nl::cross_entropy_forward(T({0, 0}, {1, 2}), Tensor::from_ints({0}, {1}), -100, lse);
  CHECK(loss.numel() == 1);
  CHECK(loss.item() == Approx(0.6931471805599453).epsilon(1e-6));
  CHECK(lse.item() == Approx(0.6931471805599453).epsilon(1e-6));
  Tensor l4 = nl::cross_entropy_forward(Tensor::full({3, 4}, 2.5f), Tensor::from_ints({0, 3, 1}, {3}), -100, lse);
  CHECK(l4.item() == Approx(std::log(4.0)).epsilon(1e-6));
  CHECK_CLOSE(lse, Tensor::full({3}, 2.5f + (float)std::log(4.0)), 1e-6, 0);
}

// logits [0, ln 3] with target 1: p = 3/4, loss = -ln(3/4) = 0.2876821
TEST_CASE("cross_entropy of a two-class row by hand", "[ops]") {
  Tensor lse;
  Tensor z = T({0, (float)std::log(3.0), 0, (float)std::log(3.0)}, {2, 2});
  Tensor loss = nl::cross_entropy_forward(z, Tensor::from_ints({1, 0}, {2}), -100, lse);
  // row 0: -ln(3/4) = 0.2876821, row 1: -ln(1/4) = 1.3862944; mean 0.8369882
  CHECK(loss.item() == Approx((0.2876820724517809 + 1.3862943611198906) / 2).epsilon(1e-6));
  CHECK_CLOSE(lse, T({(float)std::log(4.0), (float)std::log(4.0)}, {2}), 1e-6, 0);
  // dlogits = (p - onehot) / 2: row 0 [1/4, 3/4 - 1] / 2, row 1 [1/4 - 1, 3/4] / 2
  Tensor d = nl::cross_entropy_backward(z, Tensor::from_ints({1, 0}, {2}), lse, 1.0f, -100);
  CHECK_CLOSE(d, T({0.125f, -0.125f, -0.375f, 0.375f}, {2, 2}), 1e-6, 1e-7);
}

TEST_CASE("cross_entropy against the naive formula on random logits", "[ops]") {
  nl::Generator gen(31);
  const int64_t N = 6, V = 7;
  Tensor z = gen.normal({N, V}, 0.0f, 2.0f);
  std::vector<int32_t> t = {0, 6, 3, 3, 1, 5};
  Tensor targets = Tensor::from_ints(t, {N});
  Naive ref = naive_ce(z.to_vector(), t, V, -100);
  Tensor lse;
  Tensor loss = nl::cross_entropy_forward(z, targets, -100, lse);
  CHECK(loss.item() == Approx(ref.loss).epsilon(1e-5));
  CHECK_CLOSE(lse, to_tensor(ref.lse, {N}), 1e-5, 1e-6);
  CHECK_CLOSE(nl::cross_entropy_backward(z, targets, lse, 1.0f, -100), to_tensor(ref.dlogits, {N, V}), 1e-4, 1e-6);
  // dloss scales the gradient
  std::vector<double> scaled = ref.dlogits;
  for (auto& v : scaled) v *= -2.5;
  CHECK_CLOSE(nl::cross_entropy_backward(z, targets, lse, -2.5f, -100), to_tensor(scaled, {N, V}), 1e-4, 1e-6);
}

TEST_CASE("cross_entropy skips ignore_index rows in the loss and the gradient", "[ops]") {
  nl::Generator gen(32);
  const int64_t N = 5, V = 4;
  Tensor z = gen.normal({N, V});
  std::vector<int32_t> t = {2, -100, 0, -100, 3};
  Tensor targets = Tensor::from_ints(t, {N});
  Naive ref = naive_ce(z.to_vector(), t, V, -100);
  Tensor lse;
  Tensor loss = nl::cross_entropy_forward(z, targets, -100, lse);
  CHECK(loss.item() == Approx(ref.loss).epsilon(1e-5));  // mean over the 3 kept rows
  Tensor d = nl::cross_entropy_backward(z, targets, lse, 1.0f, -100);
  CHECK_CLOSE(d, to_tensor(ref.dlogits, {N, V}), 1e-4, 1e-6);
  for (int64_t j = 0; j < V; ++j) {
    CHECK(d.at({1, j}) == 0.0f);
    CHECK(d.at({3, j}) == 0.0f);
  }
  // another ignore_index: a target value inside [0, V) that is ignored
  std::vector<int32_t> t2 = {2, 1, 0, 1, 3};
  Naive ref2 = naive_ce(z.to_vector(), t2, V, 1);
  Tensor loss2 = nl::cross_entropy_forward(z, Tensor::from_ints(t2, {N}), 1, lse);
  CHECK(loss2.item() == Approx(ref2.loss).epsilon(1e-5));
  CHECK_CLOSE(nl::cross_entropy_backward(z, Tensor::from_ints(t2, {N}), lse, 1.0f, 1), to_tensor(ref2.dlogits, {N, V}),
              1e-4, 1e-6);
}

TEST_CASE("cross_entropy with every row ignored is NaN with a zero gradient", "[ops]") {
  Tensor z = T({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor targets = Tensor::from_ints({-100, -100}, {2});
  Tensor lse;
  Tensor loss = nl::cross_entropy_forward(z, targets, -100, lse);
  CHECK(std::isnan(loss.item()));
  Tensor d = nl::cross_entropy_backward(z, targets, lse, 1.0f, -100);
  CHECK_CLOSE(d, Tensor::zeros({2, 3}), 0, 0);
}

TEST_CASE("cross_entropy of large logits stays finite", "[ops]") {
  Tensor z = T({1000, 0, -1000, 1000, 1001, 1002}, {2, 3});
  std::vector<int32_t> t = {1, 0};
  Tensor lse;
  Tensor loss = nl::cross_entropy_forward(z, Tensor::from_ints(t, {2}), -100, lse);
  // row 0: lse = 1000, loss 1000; row 1: lse = 1002.40760596, loss 2.40760596
  CHECK(std::isfinite(loss.item()));
  CHECK(loss.item() == Approx((1000.0 + 2.40760596444438) / 2).epsilon(1e-6));
  Tensor d = nl::cross_entropy_backward(z, Tensor::from_ints(t, {2}), lse, 1.0f, -100);
  for (float v : d.to_vector()) CHECK(std::isfinite(v));
  CHECK(d.at({0, 0}) == Approx(0.5).epsilon(1e-6));
  CHECK(d.at({0, 1}) == Approx(-0.5).epsilon(1e-6));
}

TEST_CASE("cross_entropy reads non-contiguous logits", "[ops]") {
  nl::Generator gen(33);
  const int64_t N = 3, V = 5;
  Tensor zt = gen.normal({V, N});
  Tensor z = zt.transpose(0, 1);
  REQUIRE_FALSE(z.is_contiguous());
  std::vector<int32_t> t = {4, 0, 2};
  Naive ref = naive_ce(z.contiguous().to_vector(), t, V, -100);
  Tensor lse;
  Tensor loss = nl::cross_entropy_forward(z, Tensor::from_ints(t, {N}), -100, lse);
  CHECK(loss.item() == Approx(ref.loss).epsilon(1e-5));
  CHECK_CLOSE(nl::cross_entropy_backward(z, Tensor::from_ints(t, {N}), lse, 1.0f, -100), to_tensor(ref.dlogits, {N, V}),
              1e-4, 1e-6);
}

TEST_CASE("cross_entropy rejects out-of-range targets", "[ops]") {
  Tensor z = Tensor::zeros({2, 5});
  Tensor lse;
  REQUIRE_THROWS_AS(nl::cross_entropy_forward(z, Tensor::from_ints({0, 5}, {2}), -100, lse), nl::Error);
  REQUIRE_THROWS_WITH(nl::cross_entropy_forward(z, Tensor::from_ints({0, 5}, {2}), -100, lse),
                      Contains("cross_entropy") && Contains("target 5") && Contains("[0, 5)"));
  REQUIRE_THROWS_WITH(nl::cross_entropy_forward(z, Tensor::from_ints({-1, 0}, {2}), -100, lse),
                      Contains("cross_entropy") && Contains("-1"));
  lse = Tensor::zeros({2});
  REQUIRE_THROWS_WITH(nl::cross_entropy_backward(z, Tensor::from_ints({7, 0}, {2}), lse, 1.0f, -100),
                      Contains("cross_entropy_backward") && Contains("7"));
}

TEST_CASE("cross_entropy rejects bad shapes and dtypes", "[ops]") {
  Tensor lse;
  REQUIRE_THROWS_WITH(nl::cross_entropy_forward(Tensor::zeros({2, 3}), Tensor::from_ints({0, 1, 2}, {3}), -100, lse),
                      Contains("cross_entropy") && Contains("(2, 3)") && Contains("(3,)"));
  REQUIRE_THROWS_WITH(nl::cross_entropy_forward(Tensor::zeros({2, 3}), T({0, 1}, {2}), -100, lse),
                      Contains("cross_entropy") && Contains("float32 (2,)"));
  REQUIRE_THROWS_WITH(nl::cross_entropy_forward(Tensor::zeros({2, 3, 4}), Tensor::from_ints({0, 1}, {2}), -100, lse),
                      Contains("cross_entropy") && Contains("(2, 3, 4)"));
  REQUIRE_THROWS_WITH(
      nl::cross_entropy_forward(Tensor::from_ints({0, 1, 2, 3}, {2, 2}), Tensor::from_ints({0, 1}, {2}), -100, lse),
      Contains("cross_entropy") && Contains("int32"));
}
