// The fused norm kernels of tensor/norms.h against naive references written here in
// double precision: forward values against the definitions of NORMS.md, backward
// against central finite differences (in double) of the same references, contracting the
// output with a random upstream gradient r, L = sum(y * r).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tensor/cpu/fast_math.h"
#include "tensor/cpu/norms_common.h"
#include "tensor/norms.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "tests/tensor/double_reference.h"
#include "tests/tensor/tensor_literals.h"
#include "tests/test_util.h"

using namespace nl;
using namespace nl::test;

namespace {

// ---- naive references, one row at a time, everything in double

double mean_of(const double* x, int64_t C) {
  double s = 0;
  for (int64_t c = 0; c < C; ++c) s += x[c];
  return s / C;
}
double biased_var(const double* x, int64_t C) {
  const double mu = mean_of(x, C);
  double s = 0;
  for (int64_t c = 0; c < C; ++c) s += (x[c] - mu) * (x[c] - mu);
  return s / C;
}

Vec ref_layernorm(const Vec& x, const Vec& gamma, const Vec& beta, int64_t N, int64_t C, double eps) {
  Vec y(N * C);
  for (int64_t n = 0; n < N; ++n) {
    const double* xr = &x[n * C];
    const double mu = mean_of(xr, C), s2 = biased_var(xr, C);
    for (int64_t c = 0; c < C; ++c) y[n * C + c] = gamma[c] * (xr[c] - mu) / std::sqrt(s2 + eps) + beta[c];
  }
  return y;
}

Vec ref_rmsnorm(const Vec& x, const Vec& gamma, const Vec* beta, int64_t N, int64_t C, double eps) {
  Vec y(N * C);
  for (int64_t n = 0; n < N; ++n) {
    double ms = 0;
    for (int64_t c = 0; c < C; ++c) ms += x[n * C + c] * x[n * C + c] / C;
    for (int64_t c = 0; c < C; ++c)
      y[n * C + c] = gamma[c] * x[n * C + c] / std::sqrt(ms + eps) + (beta ? (*beta)[c] : 0.0);
  }
  return y;
}

Vec ref_dyt(const Vec& x, double alpha, const Vec& gamma, const Vec& beta, int64_t N, int64_t C) {
  Vec y(N * C);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) y[n * C + c] = gamma[c] * std::tanh(alpha * x[n * C + c]) + beta[c];
  return y;
}

Vec ref_bhyt_denom(const Vec& x, const Vec& denom, const Vec& gamma, double lambda, int64_t N, int64_t C) {
  Vec y(N * C);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) y[n * C + c] = gamma[c] * std::tanh(lambda * x[n * C + c] / denom[n]);
  return y;
}

// BHyT*: the denominator kappa * sqrt(s^2 + eps) + |mu| of each row.
Vec ref_bhyt_denominators(const Vec& x, int64_t N, int64_t C, double kappa, double eps) {
  Vec d(N);
  for (int64_t n = 0; n < N; ++n)
    d[n] = kappa * std::sqrt(biased_var(&x[n * C], C) + eps) + std::fabs(mean_of(&x[n * C], C));
  return d;
}

Vec ref_bhyt(const Vec& x, const Vec& gamma, double lambda, int64_t N, int64_t C, double kappa, double eps) {
  return ref_bhyt_denom(x, ref_bhyt_denominators(x, N, C, kappa, eps), gamma, lambda, N, C);
}

// ---- the test inputs: a row matrix with a given mean and std, parameters around init

struct Case {
  int64_t N, C;
  float mean, std;
  const char* label;
};
const Case kCases[] = {
    {3, 5, 0.0f, 1.0f, "(3, 5)"},
    {4, 128, 0.3f, 2.0f, "(4, 128)"},
    {2, 2, -1.0f, 1.0f, "(2, 2)"},
    {4, 128, 1000.0f, 0.1f, "(4, 128), mean 1e3, std 1e-1"},
};

Tensor params(Generator& gen, int64_t C, float center, float spread) { return gen.normal({C}, center, spread); }

// Runs fn with `threads` OpenMP threads, restoring the previous count.
template <typename Fn>
void with_threads(int threads, Fn fn) {
  const int before = num_threads();
  set_num_threads(threads);
  fn();
  set_num_threads(before);
}

// The inputs of a LayerNorm or RMSNorm test of case k, drawn from gen in this order:
// x, gamma, beta, and for a backward test dy.
struct NormInputs {
  Tensor x, gamma, beta, dy;
};

NormInputs norm_inputs(Generator& gen, const Case& k, bool with_dy) {
  NormInputs in;
  in.x = gen.normal({k.N, k.C}, k.mean, k.std);
  in.gamma = params(gen, k.C, 1.0f, 0.5f);
  in.beta = params(gen, k.C, 0.0f, 0.5f);
  if (with_dy) in.dy = gen.normal({k.N, k.C});
  return in;
}

// Calls check(k, inputs) for every case k, under k's label, with inputs drawn from gen.
void for_each_case(Generator& gen, bool with_dy, const std::function<void(const Case&, const NormInputs&)>& check) {
  for (const Case& k : kCases) {
    INFO(k.label);
    check(k, norm_inputs(gen, k, with_dy));
  }
}

// A kernel's dx, dgamma and dbeta against central differences of its double reference
// ref(x, gamma, beta), the output contracted with dy.
void check_against_fd(const NormInputs& in, const Tensor& dx, const Tensor& dgamma, const Tensor& dbeta,
                      const std::function<Vec(const Vec&, const Vec&, const Vec&)>& ref) {
  Vec xd = to_double(in.x), gd = to_double(in.gamma), bd = to_double(in.beta), r = to_double(in.dy);
  check_near("dx", dx, fd_grad([&](const Vec& v) { return ref(v, gd, bd); }, xd, r), 1e-5);
  check_near("dgamma", dgamma, fd_grad([&](const Vec& v) { return ref(xd, v, bd); }, gd, r), 1e-5);
  check_near("dbeta", dbeta, fd_grad([&](const Vec& v) { return ref(xd, gd, v); }, bd, r), 1e-5);
}

}  // namespace

// ------------------------------------------------------------------ LayerNorm

TEST_CASE("layernorm kernel forward matches a double-precision reference", "[norms]") {
  Generator gen(11);
  for_each_case(gen, false, [](const Case& k, const NormInputs& in) {
    auto out = layernorm_forward(in.x, in.gamma, in.beta, 1e-5f);
    Vec xd = to_double(in.x);
    check_near("y", out.y, ref_layernorm(xd, to_double(in.gamma), to_double(in.beta), k.N, k.C, 1e-5), 1e-5);
    Vec mu(k.N), rstd(k.N);
    for (int64_t n = 0; n < k.N; ++n) {
      mu[n] = mean_of(&xd[n * k.C], k.C);
      rstd[n] = 1.0 / std::sqrt(biased_var(&xd[n * k.C], k.C) + 1e-5);
    }
    check_near("mean", out.mean, mu, 1e-6);
    check_near("rstd", out.rstd, rstd, 1e-6);
  });
}

TEST_CASE("layernorm kernel on a constant row gives beta (variance 0, eps keeps it finite)", "[norms]") {
  Tensor x = Tensor::full({2, 6}, 3.5f);
  Tensor gamma = Tensor::full({6}, 2.0f), beta = Tensor::arange(6);
  auto out = layernorm_forward(x, gamma, beta, 1e-5f);
  CHECK_CLOSE(out.y, Tensor::arange(6).unsqueeze(0).expand({2, 6}).contiguous(), 0, 1e-6);
  CHECK_CLOSE(out.rstd, Tensor::full({2}, 1.0f / std::sqrt(1e-5f)), 1e-6, 0);
}

TEST_CASE("layernorm kernel backward matches finite differences of the reference", "[norms]") {
  Generator gen(12);
  for_each_case(gen, true, [](const Case& k, const NormInputs& in) {
    auto fwd = layernorm_forward(in.x, in.gamma, in.beta, 1e-5f);
    auto grads = layernorm_backward(in.dy, in.x, in.gamma, fwd.mean, fwd.rstd);
    check_against_fd(in, grads.dx, grads.dgamma, grads.dbeta, [&](const Vec& x, const Vec& g, const Vec& b) {
      return ref_layernorm(x, g, b, k.N, k.C, 1e-5);
    });
  });
}

TEST_CASE("layernorm kernel parameter gradients are the same bits for any thread count", "[norms]") {
  Generator gen(13);
  Tensor x = gen.normal({300, 256}), dy = gen.normal({300, 256});
  Tensor gamma = params(gen, 256, 1.0f, 0.5f), beta = params(gen, 256, 0.0f, 0.5f);
  auto fwd = layernorm_forward(x, gamma, beta, 1e-5f);
  LayerNormGrads one, many;
  with_threads(1, [&] { one = layernorm_backward(dy, x, gamma, fwd.mean, fwd.rstd); });
  with_threads(4, [&] { many = layernorm_backward(dy, x, gamma, fwd.mean, fwd.rstd); });
  CHECK(same_bits(one.dx, many.dx));
  CHECK(same_bits(one.dgamma, many.dgamma));
  CHECK(same_bits(one.dbeta, many.dbeta));
}

TEST_CASE("layernorm kernel rejects wrong shapes and non-contiguous rows, naming itself", "[norms]") {
  Tensor x = Tensor::zeros({4, 3}), g = Tensor::ones({3}), b = Tensor::zeros({3});
  CHECK_THROWS_WITH(layernorm_forward(x, Tensor::ones({4}), b, 1e-5f),
                    Catch::Contains("layernorm_forward") && Catch::Contains("gamma"));
  CHECK_THROWS_WITH(layernorm_forward(Tensor::zeros({3, 4}).transpose(0, 1), g, b, 1e-5f),
                    Catch::Contains("layernorm_forward") && Catch::Contains("contiguous"));
  CHECK_THROWS_WITH(layernorm_forward(Tensor::zeros({2, 4, 3}), g, b, 1e-5f),
                    Catch::Contains("layernorm_forward") && Catch::Contains("(2, 4, 3)"));
  auto fwd = layernorm_forward(x, g, b, 1e-5f);
  CHECK_THROWS_WITH(layernorm_backward(Tensor::zeros({4, 2}), x, g, fwd.mean, fwd.rstd),
                    Catch::Contains("layernorm_backward") && Catch::Contains("dy"));
  CHECK_THROWS_WITH(layernorm_backward(x, x, g, fwd.mean, Tensor::ones({3})),
                    Catch::Contains("layernorm_backward") && Catch::Contains("rstd"));
}

// ------------------------------------------------------------------ RMSNorm

TEST_CASE("rmsnorm kernel forward matches a double-precision reference, with and without beta", "[norms]") {
  Generator gen(21);
  for_each_case(gen, false, [](const Case& k, const NormInputs& in) {
    Vec xd = to_double(in.x), gd = to_double(in.gamma), bd = to_double(in.beta);
    auto plain = rmsnorm_forward(in.x, in.gamma, Tensor(), 1e-5f);
    check_near("y", plain.y, ref_rmsnorm(xd, gd, nullptr, k.N, k.C, 1e-5), 1e-5);
    auto biased = rmsnorm_forward(in.x, in.gamma, in.beta, 1e-5f);
    check_near("y with beta", biased.y, ref_rmsnorm(xd, gd, &bd, k.N, k.C, 1e-5), 1e-5);
    Vec rstd(k.N);
    for (int64_t n = 0; n < k.N; ++n) {
      double ms = 0;
      for (int64_t c = 0; c < k.C; ++c) ms += xd[n * k.C + c] * xd[n * k.C + c] / k.C;
      rstd[n] = 1.0 / std::sqrt(ms + 1e-5);
    }
    check_near("rstd", plain.rstd, rstd, 1e-6);
  });
}

TEST_CASE("rmsnorm kernel backward matches finite differences of the reference", "[norms]") {
  Generator gen(22);
  for_each_case(gen, true, [](const Case& k, const NormInputs& in) {
    auto fwd = rmsnorm_forward(in.x, in.gamma, in.beta, 1e-5f);
    auto grads = rmsnorm_backward(in.dy, in.x, in.gamma, fwd.rstd, true);
    check_against_fd(in, grads.dx, grads.dgamma, grads.dbeta, [&](const Vec& x, const Vec& g, const Vec& b) {
      return ref_rmsnorm(x, g, &b, k.N, k.C, 1e-5);
    });
    auto no_bias = rmsnorm_backward(in.dy, in.x, in.gamma, fwd.rstd, false);
    CHECK_FALSE(no_bias.dbeta.defined());
    CHECK(same_bits(no_bias.dx, grads.dx));
  });
}

TEST_CASE("rmsnorm kernel parameter gradients are the same bits for any thread count", "[norms]") {
  Generator gen(23);
  Tensor x = gen.normal({300, 256}), dy = gen.normal({300, 256});
  Tensor gamma = params(gen, 256, 1.0f, 0.5f);
  auto fwd = rmsnorm_forward(x, gamma, Tensor(), 1e-5f);
  RMSNormGrads one, many;
  with_threads(1, [&] { one = rmsnorm_backward(dy, x, gamma, fwd.rstd, true); });
  with_threads(4, [&] { many = rmsnorm_backward(dy, x, gamma, fwd.rstd, true); });
  CHECK(same_bits(one.dgamma, many.dgamma));
  CHECK(same_bits(one.dbeta, many.dbeta));
}

TEST_CASE("rmsnorm kernel rejects a beta of the wrong size", "[norms]") {
  CHECK_THROWS_WITH(rmsnorm_forward(Tensor::zeros({2, 3}), Tensor::ones({3}), Tensor::zeros({2}), 1e-5f),
                    Catch::Contains("rmsnorm_forward") && Catch::Contains("beta"));
}

// ------------------------------------------------------------------ DyT

// The DyT and BHyT kernels share their own vectorisable tanh (tensor/cpu/norms_common.h).
TEST_CASE("dyt kernel tanh is within 3 ulp of tanh in double, odd, and keeps inf and NaN", "[norms]") {
  double worst_ulp = 0;
  float worst_at = 0;
  for (double xd = -25.0; xd <= 25.0; xd += 3.1e-5) {
    const float x = (float)xd;
    const double ref = std::tanh((double)x);
    const float ref_f = (float)ref;
    const double ulp = std::nextafter(std::fabs(ref_f), 2.0f) - std::fabs(ref_f);
    const double err = std::fabs(fast::tanh(x) - ref) / ulp;
    if (err > worst_ulp) worst_ulp = err, worst_at = x;
    if (fast::tanh(-x) != -fast::tanh(x)) FAIL("fast::tanh is not odd at " << x);
  }
  INFO("worst error " << worst_ulp << " ulp at x = " << worst_at);
  CHECK(worst_ulp <= 3.0);
  for (float tiny : {1e-30f, 1e-40f, 1e-8f}) CHECK(fast::tanh(tiny) == tiny);
  CHECK(std::signbit(fast::tanh(-0.0f)));
  CHECK_FALSE(std::signbit(fast::tanh(0.0f)));
  CHECK(fast::tanh(std::numeric_limits<float>::infinity()) == 1.0f);
  CHECK(fast::tanh(-std::numeric_limits<float>::infinity()) == -1.0f);
  CHECK(fast::tanh(1e30f) == 1.0f);
  CHECK(std::isnan(fast::tanh(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("dyt kernel forward matches a double-precision reference", "[norms]") {
  Generator gen(31);
  for (float alpha : {0.5f, 2.0f, -0.7f}) {
    for (const Case& k : kCases) {
      if (k.mean > 100) continue;  // tanh(alpha * 1e3) is 1 to all digits: no test
      INFO(k.label << ", alpha " << alpha);
      Tensor x = gen.normal({k.N, k.C}, k.mean, k.std);
      Tensor gamma = params(gen, k.C, 1.0f, 0.5f), beta = params(gen, k.C, 0.0f, 0.5f);
      Tensor y = dyt_forward(x, Tensor::from_vector({alpha}, {1}), gamma, beta);
      check_near("y", y, ref_dyt(to_double(x), alpha, to_double(gamma), to_double(beta), k.N, k.C), 1e-5);
    }
  }
}

TEST_CASE("dyt kernel backward matches finite differences of the reference", "[norms]") {
  Generator gen(32);
  for (float alpha : {0.5f, 2.0f}) {
    for (const Case& k : kCases) {
      if (k.mean > 100) continue;
      INFO(k.label << ", alpha " << alpha);
      const int64_t N = k.N, C = k.C;
      Tensor x = gen.normal({N, C}, k.mean, k.std);
      Tensor gamma = params(gen, C, 1.0f, 0.5f), beta = params(gen, C, 0.0f, 0.5f);
      Tensor dy = gen.normal({N, C});
      Tensor a = Tensor::from_vector({alpha}, {1});
      auto grads = dyt_backward(dy, x, a, gamma);
      Vec xd = to_double(x), gd = to_double(gamma), bd = to_double(beta), r = to_double(dy);
      const double ad = alpha;
      check_near("dx", grads.dx, fd_grad([&](const Vec& v) { return ref_dyt(v, ad, gd, bd, N, C); }, xd, r),
                 1e-5);
      check_near("dalpha", grads.dalpha,
                 fd_grad([&](const Vec& v) { return ref_dyt(xd, v[0], gd, bd, N, C); }, Vec{ad}, r), 1e-5);
      check_near("dgamma", grads.dgamma,
                 fd_grad([&](const Vec& v) { return ref_dyt(xd, ad, v, bd, N, C); }, gd, r), 1e-5);
      check_near("dbeta", grads.dbeta, fd_grad([&](const Vec& v) { return ref_dyt(xd, ad, gd, v, N, C); }, bd, r),
                 1e-5);
    }
  }
}

TEST_CASE("dyt kernel parameter gradients are the same bits for any thread count", "[norms]") {
  Generator gen(33);
  Tensor x = gen.normal({300, 256}), dy = gen.normal({300, 256});
  Tensor gamma = params(gen, 256, 1.0f, 0.5f), a = Tensor::from_vector({0.5f}, {1});
  DyTGrads one, many;
  with_threads(1, [&] { one = dyt_backward(dy, x, a, gamma); });
  with_threads(4, [&] { many = dyt_backward(dy, x, a, gamma); });
  CHECK(same_bits(one.dalpha, many.dalpha));
  CHECK(same_bits(one.dgamma, many.dgamma));
  CHECK(same_bits(one.dbeta, many.dbeta));
}

TEST_CASE("dyt kernel rejects an alpha that is not one number", "[norms]") {
  CHECK_THROWS_WITH(dyt_forward(Tensor::zeros({2, 3}), Tensor::ones({2}), Tensor::ones({3}), Tensor::zeros({3})),
                    Catch::Contains("dyt_forward") && Catch::Contains("alpha"));
}

// ------------------------------------------------------------------ BHyT

TEST_CASE("bhyt kernel forward matches a double-precision reference", "[norms]") {
  Generator gen(41);
  for (float kappa : {10.0f, 1.5f}) {
    for (const Case& k : kCases) {
      INFO(k.label << ", kappa " << kappa);
      Tensor x = gen.normal({k.N, k.C}, k.mean, k.std);
      Tensor gamma = params(gen, k.C, 1.0f, 0.5f);
      const float lambda = 1.3f;
      auto out = bhyt_forward(x, gamma, Tensor::from_vector({lambda}, {1}), kappa, 1e-5f);
      Vec xd = to_double(x);
      check_near("y", out.y, ref_bhyt(xd, to_double(gamma), lambda, k.N, k.C, kappa, 1e-5), 1e-5);
      Vec mu(k.N), sigma(k.N);
      for (int64_t n = 0; n < k.N; ++n) {
        mu[n] = mean_of(&xd[n * k.C], k.C);
        sigma[n] = std::sqrt(biased_var(&xd[n * k.C], k.C) + 1e-5);
      }
      check_near("mean", out.mean, mu, 1e-6);
      check_near("sigma", out.sigma, sigma, 1e-6);
    }
  }
}

TEST_CASE("bhyt kernel backward matches finite differences, gradient through mu and sigma", "[norms]") {
  Generator gen(42);
  for (float kappa : {10.0f, 1.5f}) {
    for (const Case& k : kCases) {
      INFO(k.label << ", kappa " << kappa);
      const int64_t N = k.N, C = k.C;
      Tensor x = gen.normal({N, C}, k.mean, k.std);
      Tensor gamma = params(gen, C, 1.0f, 0.5f), dy = gen.normal({N, C});
      const float lambda = 1.3f;
      Tensor lam = Tensor::from_vector({lambda}, {1});
      auto fwd = bhyt_forward(x, gamma, lam, kappa, 1e-5f);
      auto grads = bhyt_backward(dy, x, gamma, lam, fwd.mean, fwd.sigma, kappa);
      Vec xd = to_double(x), gd = to_double(gamma), r = to_double(dy);
      const double ld = lambda, kd = kappa;
      check_near("dx", grads.dx,
                 fd_grad([&](const Vec& v) { return ref_bhyt(v, gd, ld, N, C, kd, 1e-5); }, xd, r), 1e-5);
      check_near("dgamma", grads.dgamma,
                 fd_grad([&](const Vec& v) { return ref_bhyt(xd, v, ld, N, C, kd, 1e-5); }, gd, r), 1e-5);
      check_near("dlambda", grads.dlambda,
                 fd_grad([&](const Vec& v) { return ref_bhyt(xd, gd, v[0], N, C, kd, 1e-5); }, Vec{ld}, r), 1e-5);
    }
  }
}

TEST_CASE("bhyt kernel backward with a zero-mean row uses sign(0) = 0", "[norms]") {
  // x = (-2, -1, 1, 2): mu = 0 exactly, so |mu| contributes nothing and D = kappa * sigma.
  // The reference gradient is then that of gamma * tanh(lambda * x / (kappa * sigma)):
  // finite differences of a reference with |mu| dropped.
  Tensor x = Tensor::from_vector({-2, -1, 1, 2}, {1, 4});
  Tensor gamma = Tensor::from_vector({1.0f, 0.5f, -1.5f, 2.0f}, {4});
  Tensor dy = Tensor::from_vector({0.3f, -1.0f, 0.7f, 0.2f}, {1, 4});
  Tensor lam = Tensor::from_vector({2.0f}, {1});
  const float kappa = 1.5f;
  auto fwd = bhyt_forward(x, gamma, lam, kappa, 1e-5f);
  CHECK(fwd.mean.item() == 0.0f);
  auto grads = bhyt_backward(dy, x, gamma, lam, fwd.mean, fwd.sigma, kappa);
  Vec gd = to_double(gamma);
  auto without_mu = [&](const Vec& v) {
    Vec d = {kappa * std::sqrt(biased_var(v.data(), 4) + 1e-5)};
    return ref_bhyt_denom(v, d, gd, 2.0, 1, 4);
  };
  check_near("dx", grads.dx, fd_grad(without_mu, to_double(x), to_double(dy)), 1e-5);
}

TEST_CASE("bhyt kernel with a given denominator matches the reference, ddenom included", "[norms]") {
  Generator gen(43);
  for (const Case& k : kCases) {
    INFO(k.label);
    const int64_t N = k.N, C = k.C;
    Tensor x = gen.normal({N, C}, k.mean, k.std);
    Tensor denom = gen.uniform({N}, 0.5f, 3.0f);
    if (k.mean > 100) denom = gen.uniform({N}, 900.0f, 1100.0f);
    Tensor gamma = params(gen, C, 1.0f, 0.5f), dy = gen.normal({N, C});
    const float lambda = 0.8f;
    Tensor lam = Tensor::from_vector({lambda}, {1});
    Tensor y = bhyt_denom_forward(x, denom, gamma, lam);
    Vec xd = to_double(x), dd = to_double(denom), gd = to_double(gamma), r = to_double(dy);
    const double ld = lambda;
    check_near("y", y, ref_bhyt_denom(xd, dd, gd, ld, N, C), 1e-5);
    auto grads = bhyt_denom_backward(dy, x, denom, gamma, lam);
    check_near("dx", grads.dx, fd_grad([&](const Vec& v) { return ref_bhyt_denom(v, dd, gd, ld, N, C); }, xd, r),
               1e-5);
    check_near("ddenom", grads.ddenom,
               fd_grad([&](const Vec& v) { return ref_bhyt_denom(xd, v, gd, ld, N, C); }, dd, r), 1e-5);
    check_near("dgamma", grads.dgamma,
               fd_grad([&](const Vec& v) { return ref_bhyt_denom(xd, dd, v, ld, N, C); }, gd, r), 1e-5);
    check_near("dlambda", grads.dlambda,
               fd_grad([&](const Vec& v) { return ref_bhyt_denom(xd, dd, gd, v[0], N, C); }, Vec{ld}, r), 1e-5);
  }
}

TEST_CASE("bhyt kernel parameter gradients are the same bits for any thread count", "[norms]") {
  Generator gen(44);
  Tensor x = gen.normal({300, 256}, 0.5f, 1.0f), dy = gen.normal({300, 256});
  Tensor gamma = params(gen, 256, 1.0f, 0.5f), lam = Tensor::from_vector({1.0f}, {1});
  Tensor denom = gen.uniform({300}, 1.0f, 2.0f);
  auto fwd = bhyt_forward(x, gamma, lam, 10.0f, 1e-5f);
  BHyTGrads one, many;
  BHyTDenomGrads one_d, many_d;
  with_threads(1, [&] {
    one = bhyt_backward(dy, x, gamma, lam, fwd.mean, fwd.sigma, 10.0f);
    one_d = bhyt_denom_backward(dy, x, denom, gamma, lam);
  });
  with_threads(4, [&] {
    many = bhyt_backward(dy, x, gamma, lam, fwd.mean, fwd.sigma, 10.0f);
    many_d = bhyt_denom_backward(dy, x, denom, gamma, lam);
  });
  CHECK(same_bits(one.dgamma, many.dgamma));
  CHECK(same_bits(one.dlambda, many.dlambda));
  CHECK(same_bits(one_d.dgamma, many_d.dgamma));
  CHECK(same_bits(one_d.dlambda, many_d.dlambda));
}

TEST_CASE("bhyt kernel rejects a denominator of the wrong length and a non-positive kappa", "[norms]") {
  Tensor x = Tensor::zeros({3, 4}), g = Tensor::ones({4}), lam = Tensor::ones({1});
  CHECK_THROWS_WITH(bhyt_denom_forward(x, Tensor::ones({4}), g, lam),
                    Catch::Contains("bhyt_denom_forward") && Catch::Contains("denom"));
  CHECK_THROWS_WITH(bhyt_forward(x, g, lam, 0.0f, 1e-5f), Catch::Contains("bhyt_forward") && Catch::Contains("kappa"));
}
