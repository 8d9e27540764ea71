// The fused norm ops of autograd/norms.h: gradcheck on several shapes (a transposed,
// non-contiguous input and a 3-D one), values and gradients against the same norm
// composed from primitive ag ops, and the invariants of ../shared/NORMS.md.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/norms.h"
#include "autograd/ops.h"
#include "tensor/random.h"
#include "tests/autograd/autograd_literals.h"
#include "tests/test_util.h"

using namespace nl;
using nl::test::scalar1;

namespace {

using nl::test::Fn;

struct Run {
  Tensor value;
  std::vector<Tensor> grads;  // of L = sum(out * upstream), one per input
};

// Runs fn on fresh leaves wrapping `inputs`, then backward from `upstream`.
Run run_with_grads(const Fn& fn, const std::vector<Tensor>& inputs, const Tensor& upstream) {
  std::vector<Var> vars;
  for (const Tensor& t : inputs) vars.emplace_back(t.clone(), true);
  Var out = fn(vars);
  out.backward(upstream);
  Run r{out.value(), {}};
  for (const Var& v : vars) r.grads.push_back(v.grad().defined() ? v.grad() : Tensor::zeros(v.shape()));
  return r;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (float v : t.to_vector()) m = std::max(m, (double)std::fabs(v));
  return m;
}

// |a - e| <= tol * |e| + tol * max|e|: relative to each value and to the tensor's scale.
void check_scaled(const std::string& what, const Tensor& actual, const Tensor& expected, double tol) {
  INFO(what);
  CHECK_CLOSE(actual, expected, tol, tol * max_abs(expected));
}

// The fused op and the composite give the same values and the same gradient for every
// input, under a random upstream gradient. A one-element input (alpha, lambda) gets a
// gradient summed over every element of the output, and the composite sums those
// cancelling terms in float: its own rounding reaches a few 1e-5 of the result, so
// those are compared to 1e-4.
void check_norm_against_composite(const Fn& fused, const Fn& composite, const std::vector<Tensor>& inputs,
                             const std::vector<std::string>& names, uint64_t seed, double tol = 1e-5) {
  Generator gen(seed);
  std::vector<Var> probe;
  for (const Tensor& t : inputs) probe.emplace_back(t, false);
  Tensor upstream = gen.normal(fused(probe).shape());
  Run a = run_with_grads(fused, inputs, upstream), b = run_with_grads(composite, inputs, upstream);
  check_scaled("value", a.value, b.value, tol);
  for (size_t i = 0; i < inputs.size(); ++i)
    check_scaled("gradient of " + names[i], a.grads[i], b.grads[i], inputs[i].numel() == 1 ? 10 * tol : tol);
}

// ---- the norms composed from primitive differentiable ops (NORMS.md, term by term)

Var composite_layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps) {
  Var mu = ag::mean(x, {-1}, true);
  Var s2 = ag::var(x, {-1}, true, 0);
  Var y = (x - mu) * ag::rsqrt(ag::add_scalar(s2, eps)) * gamma;
  return beta.defined() ? y + beta : y;
}

Var composite_rms_norm(const Var& x, const Var& gamma, const Var& beta, float eps) {
  Var ms = ag::mean(x * x, {-1}, true);
  Var y = x * ag::rsqrt(ag::add_scalar(ms, eps)) * gamma;
  return beta.defined() ? y + beta : y;
}

Var composite_dyt(const Var& x, const Var& alpha, const Var& gamma, const Var& beta) {
  return gamma * ag::tanh(alpha * x) + beta;
}

Var composite_bhyt(const Var& x, const Var& gamma, const Var& lambda, float kappa, float eps) {
  Var mu = ag::mean(x, {-1}, true);
  Var sigma = ag::sqrt(ag::add_scalar(ag::var(x, {-1}, true, 0), eps));
  Var abs_mu = ag::sqrt(mu * mu);  // |mu|, differentiable away from mu = 0
  Var denom = ag::mul_scalar(sigma, kappa) + abs_mu;
  return gamma * ag::tanh(lambda * x / denom);
}

Var composite_bhyt_with_denom(const Var& x, const Var& denom, const Var& gamma, const Var& lambda) {
  return gamma * ag::tanh(lambda * x / ag::unsqueeze(denom, -1));
}

// The two input layouts every gradcheck runs on: a transposed (non-contiguous) (5, 8)
// view, and a contiguous (2, 3, 8).
std::vector<Tensor> gradcheck_xs(Generator& gen, float mean = 0.0f, float std = 1.0f) {
  Tensor t = gen.normal({8, 5}, mean, std).transpose(0, 1);
  REQUIRE_FALSE(t.is_contiguous());
  return {t, gen.normal({2, 3, 8}, mean, std)};
}

Tensor tokens_shape_uniform(Generator& gen, const Shape& x_shape, float lo, float hi) {
  return gen.uniform(Shape(x_shape.begin(), x_shape.end() - 1), lo, hi);
}

// Calls check with {x, gamma, beta} for a 2-D and a 3-D x: x N(0.5, 2), gamma N(1, 0.5)
// and beta N(0, 0.5) along x's last axis, drawn from gen in that order.
void for_affine_norm_inputs(Generator& gen, const std::function<void(const std::vector<Tensor>&)>& check) {
  for (Shape shape : {Shape{4, 16}, Shape{2, 3, 8}}) {
    INFO("shape " << to_string(shape));
    const int64_t C = shape.back();
    check({gen.normal(shape, 0.5f, 2.0f), gen.normal({C}, 1.0f, 0.5f), gen.normal({C}, 0.0f, 0.5f)});
  }
}

}  // namespace

// ================================================================== LayerNorm

TEST_CASE("layernorm passes gradcheck on a transposed 2-D and a 3-D input", "[norms]") {
  Generator gen(101);
  for (const Tensor& x : gradcheck_xs(gen)) {
    INFO("x " << describe(x));
    Tensor gamma = gen.normal({8}, 1.0f, 0.5f), beta = gen.normal({8}, 0.0f, 0.5f);
    CHECK_GRADCHECK(gradcheck([](const std::vector<Var>& v) { return ag::layer_norm(v[0], v[1], v[2]); },
                              {x, gamma, beta}));
    CHECK_GRADCHECK(gradcheck([](const std::vector<Var>& v) { return ag::layer_norm(v[0], v[1], Var()); }, {x, gamma}));
  }
}

TEST_CASE("layernorm fused op equals its composite from mean, var, rsqrt (values and gradients)", "[norms]") {
  Generator gen(102);
  for_affine_norm_inputs(gen, [](const std::vector<Tensor>& in) {
    check_norm_against_composite([](const std::vector<Var>& v) { return ag::layer_norm(v[0], v[1], v[2]); },
                            [](const std::vector<Var>& v) { return composite_layer_norm(v[0], v[1], v[2], 1e-5f); },
                            in, {"x", "gamma", "beta"}, 1);
    // without beta (--norm-bias off): the same op on x and gamma alone
    check_norm_against_composite([](const std::vector<Var>& v) { return ag::layer_norm(v[0], v[1], Var()); },
                            [](const std::vector<Var>& v) { return composite_layer_norm(v[0], v[1], Var(), 1e-5f); },
                            {in[0], in[1]}, {"x", "gamma"}, 5);
  });
}

TEST_CASE("layernorm records one node named layer_norm holding eps", "[norms]") {
  Var x(Tensor::ones({2, 4}), true), gamma(Tensor::ones({4}), true), beta(Tensor::zeros({4}), true);
  Var y = ag::layer_norm(x, gamma, beta, 1e-3f);
  REQUIRE(y.node());
  CHECK(y.node()->op == "layer_norm");
  CHECK(y.node()->inputs.size() == 3);
  CHECK(y.node()->inputs[0] == x.impl());
  CHECK(y.node()->attrs == std::vector<float>{1e-3f});
  // without beta the node has two inputs, and the value is that of a zero beta
  Generator gen(105);
  Var z(gen.normal({3, 4}), true);
  Var no_beta = ag::layer_norm(z, gamma, Var(), 1e-3f);
  REQUIRE(no_beta.node());
  CHECK(no_beta.node()->inputs.size() == 2);
  CHECK_CLOSE(no_beta.value(), ag::layer_norm(z, gamma, beta, 1e-3f).value(), 0, 0);
  CHECK_THROWS_WITH(ag::layer_norm(x, Var(), beta), Catch::Contains("layer_norm") && Catch::Contains("gamma"));
}

// CBWC (NORMS.md): with V = W - (column means over the m outputs) and c = b - mean(b),
// every token of V x + c is zero-mean, so LN(W x + b) = RMS(V x + c) + beta; and since
// LN's Jacobian projects out the mean, the gradients with respect to W, b, x, gamma and
// beta agree as well. W (m out, n in), y = x W^T + b.
TEST_CASE("layernorm of W x + b equals rmsnorm of the column-centred V x + c plus beta", "[norms]") {
  Generator gen(103);
  const int64_t n = 24, m = 16, T = 6;
  struct Input {
    float mean, std;
    const char* label;
  };
  for (Input in : {Input{0.0f, 1.0f, "x ~ N(0, 1)"}, Input{1000.0f, 0.1f, "x ~ N(1e3, 1e-1)"},
                   Input{-300.0f, 5.0f, "x ~ N(-300, 5)"}}) {
    INFO(in.label);
    std::vector<Tensor> inputs{gen.normal({T, n}, in.mean, in.std), gen.normal({m, n}, 0.0f, 1.0f / std::sqrt(n)),
                               gen.normal({m}, 3.0f, 1.0f), gen.normal({m}, 1.0f, 0.5f), gen.normal({m}, 0.0f, 0.5f)};
    auto layer_norm_path = [](const std::vector<Var>& v) {
      Var y = ag::matmul(v[0], v[1], false, true) + v[2];
      return ag::layer_norm(y, v[3], v[4]);
    };
    auto cbwc_path = [](const std::vector<Var>& v) {
      Var V = v[1] - ag::mean(v[1], {0}, true);
      Var c = v[2] - ag::mean(v[2]);
      Var z = ag::matmul(v[0], V, false, true) + c;
      return ag::rms_norm(z, v[3], Var()) + v[4];
    };
    check_norm_against_composite(cbwc_path, layer_norm_path, inputs, {"x", "W", "b", "gamma", "beta"}, 2);
  }
}

TEST_CASE("layernorm and rmsnorm + beta agree exactly on zero-mean rows (s^2 = ms)", "[norms]") {
  Generator gen(104);
  Tensor raw = gen.normal({5, 32}, 0.0f, 2.0f);
  // centre each row in double so its mean is zero to float rounding
  std::vector<float> v = raw.to_vector();
  for (int r = 0; r < 5; ++r) {
    double mu = 0;
    for (int c = 0; c < 32; ++c) mu += v[r * 32 + c] / 32.0;
    for (int c = 0; c < 32; ++c) v[r * 32 + c] = (float)(v[r * 32 + c] - mu);
  }
  Var x(Tensor::from_vector(v, {5, 32})), gamma(gen.normal({32}, 1.0f, 0.5f)), beta(gen.normal({32}));
  check_scaled("LN vs RMS + beta", ag::layer_norm(x, gamma, beta).value(),
               (ag::rms_norm(x, gamma, Var()) + beta).value(), 1e-6);
}

// ================================================================== RMSNorm

TEST_CASE("rmsnorm passes gradcheck with and without beta", "[norms]") {
  Generator gen(201);
  for (const Tensor& x : gradcheck_xs(gen, 0.3f)) {
    INFO("x " << describe(x));
    Tensor gamma = gen.normal({8}, 1.0f, 0.5f), beta = gen.normal({8}, 0.0f, 0.5f);
    CHECK_GRADCHECK(gradcheck([](const std::vector<Var>& v) { return ag::rms_norm(v[0], v[1], Var()); }, {x, gamma}));
    CHECK_GRADCHECK(gradcheck([](const std::vector<Var>& v) { return ag::rms_norm(v[0], v[1], v[2]); },
                              {x, gamma, beta}));
  }
}

TEST_CASE("rmsnorm fused op equals its composite from mean(x*x) and rsqrt (values and gradients)", "[norms]") {
  Generator gen(202);
  for_affine_norm_inputs(gen, [](const std::vector<Tensor>& in) {
    check_norm_against_composite([](const std::vector<Var>& v) { return ag::rms_norm(v[0], v[1], v[2]); },
                            [](const std::vector<Var>& v) { return composite_rms_norm(v[0], v[1], v[2], 1e-5f); },
                            in, {"x", "gamma", "beta"}, 3);
    std::vector<Tensor> no_beta{in[0], in[1]};
    check_norm_against_composite([](const std::vector<Var>& v) { return ag::rms_norm(v[0], v[1], Var()); },
                            [](const std::vector<Var>& v) { return composite_rms_norm(v[0], v[1], Var(), 1e-5f); },
                            no_beta, {"x", "gamma"}, 4);
  });
}

TEST_CASE("rmsnorm without beta records a node with two inputs", "[norms]") {
  Var x(Tensor::ones({2, 4}), true), gamma(Tensor::ones({4}), true);
  Var y = ag::rms_norm(x, gamma, Var());
  REQUIRE(y.node());
  CHECK(y.node()->op == "rms_norm");
  CHECK(y.node()->inputs.size() == 2);
}

// ================================================================== DyT

TEST_CASE("dyt passes gradcheck on a transposed 2-D and a 3-D input", "[norms]") {
  Generator gen(301);
  for (float alpha : {0.5f, 2.0f}) {
    for (const Tensor& x : gradcheck_xs(gen)) {
      INFO("x " << describe(x) << ", alpha " << alpha);
      Tensor gamma = gen.normal({8}, 1.0f, 0.5f), beta = gen.normal({8}, 0.0f, 0.5f);
      CHECK_GRADCHECK(gradcheck([](const std::vector<Var>& v) { return ag::dyt(v[0], v[1], v[2], v[3]); },
                                {x, scalar1(alpha), gamma, beta}));
    }
  }
}

TEST_CASE("dyt fused op equals its composite gamma * tanh(alpha * x) + beta", "[norms]") {
  Generator gen(302);
  for (Shape shape : {Shape{4, 16}, Shape{2, 3, 8}}) {
    INFO("shape " << to_string(shape));
    const int64_t C = shape.back();
    std::vector<Tensor> in{gen.normal(shape, 0.2f, 2.0f), scalar1(0.7f), gen.normal({C}, 1.0f, 0.5f),
                           gen.normal({C}, 0.0f, 0.5f)};
    check_norm_against_composite([](const std::vector<Var>& v) { return ag::dyt(v[0], v[1], v[2], v[3]); },
                            [](const std::vector<Var>& v) { return composite_dyt(v[0], v[1], v[2], v[3]); }, in,
                            {"x", "alpha", "gamma", "beta"}, 5);
  }
}

// tanh(z) = z - z^3/3 + ..., and |tanh(z) - z| <= |z|^3 / 3, so
// |(DyT(x) - beta) / alpha - gamma x| <= |gamma| alpha^2 |x|^3 / 3: linear as alpha -> 0.
TEST_CASE("dyt tends to gamma * x as alpha -> 0, at the rate alpha^2", "[norms]") {
  Generator gen(303);
  Var x(gen.normal({4, 16})), gamma(gen.normal({16}, 1.0f, 0.5f)), beta(gen.normal({16}, 0.0f, 0.1f));
  auto xv = x.value().to_vector(), gv = gamma.value().to_vector(), bv = beta.value().to_vector();
  for (float alpha : {0.3f, 0.1f, 0.03f, 0.01f}) {
    INFO("alpha " << alpha);
    auto y = ag::dyt(x, Var(scalar1(alpha)), gamma, beta).value().to_vector();
    double worst = 0;  // the error in units of its bound
    for (size_t i = 0; i < y.size(); ++i) {
      const size_t c = i % 16;
      const double err = std::fabs(((double)y[i] - bv[c]) / alpha - (double)gv[c] * xv[i]);
      // float rounding of y (|y| < 1.5) divided by alpha adds up to ~2e-7 / alpha
      const double bound = std::fabs(gv[c]) * alpha * alpha * std::pow(std::fabs(xv[i]), 3) / 3 + 4e-7 / alpha;
      worst = std::max(worst, err / bound);
    }
    CHECK(worst <= 1.0);
  }
}

TEST_CASE("dyt stays within |gamma| of beta", "[norms]") {
  Generator gen(304);
  Var x(gen.uniform({8, 32}, -2.0f, 2.0f)), gamma(gen.normal({32}, 1.0f, 0.5f)), beta(gen.normal({32}));
  auto gv = gamma.value().to_vector(), bv = beta.value().to_vector();
  // |alpha x| <= 4: 1 - tanh >= 6e-4, far above the float rounding of y
  for (float alpha : {0.5f, 2.0f}) {
    INFO("alpha " << alpha);
    auto y = ag::dyt(x, Var(scalar1(alpha)), gamma, beta).value().to_vector();
    bool strict = true;
    for (size_t i = 0; i < y.size(); ++i) strict &= std::fabs(y[i] - bv[i % 32]) < std::fabs(gv[i % 32]);
    CHECK(strict);
  }
  // saturated (|alpha x| up to 200): tanh rounds to +-1, so the bound holds with equality at most
  auto y = ag::dyt(x, Var(scalar1(100.0f)), gamma, beta).value().to_vector();
  bool bounded = true;
  for (size_t i = 0; i < y.size(); ++i) bounded &= std::fabs(y[i] - bv[i % 32]) <= std::fabs(gv[i % 32]) * (1 + 1e-6);
  CHECK(bounded);
}

// ================================================================== BHyT

TEST_CASE("bhyt passes gradcheck, the gradient flowing through mu and sigma", "[norms]") {
  Generator gen(401);
  for (float kappa : {10.0f, 1.5f}) {
    // mean 0.5: |mu| stays clear of its kink at 0 under the finite-difference steps
    for (const Tensor& x : gradcheck_xs(gen, 0.5f, 1.0f)) {
      INFO("x " << describe(x) << ", kappa " << kappa);
      Tensor gamma = gen.normal({8}, 1.0f, 0.5f);
      CHECK_GRADCHECK(gradcheck(
          [kappa](const std::vector<Var>& v) { return ag::bhyt(v[0], v[1], v[2], kappa); },
          {x, gamma, scalar1(1.7f)}));
    }
  }
}

TEST_CASE("bhyt fused op equals its composite from mean, var, sqrt, tanh", "[norms]") {
  Generator gen(402);
  for (float kappa : {10.0f, 1.5f}) {
    for (Shape shape : {Shape{4, 16}, Shape{2, 3, 8}}) {
      for (float mean : {0.7f, -0.4f}) {
        INFO("shape " << to_string(shape) << ", kappa " << kappa << ", mean " << mean);
        const int64_t C = shape.back();
        std::vector<Tensor> in{gen.normal(shape, mean, 1.0f), gen.normal({C}, 1.0f, 0.5f), scalar1(1.3f)};
        check_norm_against_composite(
            [kappa](const std::vector<Var>& v) { return ag::bhyt(v[0], v[1], v[2], kappa); },
            [kappa](const std::vector<Var>& v) { return composite_bhyt(v[0], v[1], v[2], kappa, 1e-5f); }, in,
            {"x", "gamma", "lambda"}, 6);
      }
    }
  }
}

TEST_CASE("bhyt_with_denom passes gradcheck, the denominator included", "[norms]") {
  Generator gen(403);
  for (const Tensor& x : gradcheck_xs(gen)) {
    INFO("x " << describe(x));
    Tensor denom = tokens_shape_uniform(gen, x.shape(), 0.8f, 2.5f), gamma = gen.normal({8}, 1.0f, 0.5f);
    CHECK_GRADCHECK(gradcheck(
        [](const std::vector<Var>& v) { return ag::bhyt_with_denom(v[0], v[1], v[2], v[3]); },
        {x, denom, gamma, scalar1(1.2f)}));
  }
}

TEST_CASE("bhyt_with_denom fused op equals its composite; denom (..., 1) is accepted too", "[norms]") {
  Generator gen(404);
  for (Shape shape : {Shape{4, 16}, Shape{2, 3, 8}}) {
    INFO("shape " << to_string(shape));
    const int64_t C = shape.back();
    std::vector<Tensor> in{gen.normal(shape, 0.3f, 2.0f), tokens_shape_uniform(gen, shape, 0.5f, 3.0f),
                           gen.normal({C}, 1.0f, 0.5f), scalar1(0.9f)};
    check_norm_against_composite(
        [](const std::vector<Var>& v) { return ag::bhyt_with_denom(v[0], v[1], v[2], v[3]); },
        [](const std::vector<Var>& v) { return composite_bhyt_with_denom(v[0], v[1], v[2], v[3]); }, in,
        {"x", "denom", "gamma", "lambda"}, 7);
    std::vector<Tensor> keepdim = in;
    keepdim[1] = in[1].unsqueeze(-1).contiguous();
    check_norm_against_composite(
        [](const std::vector<Var>& v) { return ag::bhyt_with_denom(v[0], v[1], v[2], v[3]); },
        [](const std::vector<Var>& v) { return v[2] * ag::tanh(v[3] * v[0] / v[1]); }, keepdim,
        {"x", "denom (..., 1)", "gamma", "lambda"}, 8);
  }
  Var x(Tensor::ones({2, 3, 4}));
  CHECK_THROWS_WITH(ag::bhyt_with_denom(x, Var(Tensor::ones({3, 2})), Var(Tensor::ones({4})), Var(scalar1(1))),
                    Catch::Contains("bhyt_with_denom") && Catch::Contains("denom"));
}

// The rows the invariants run on: Gaussian rows with small and large offsets, a Cauchy
// row (ratio of normals: heavy tails), single spikes, and two-point rows that make
// Chebyshev's bound tight.
std::vector<Tensor> bhyt_rows(Generator& gen, int64_t C) {
  std::vector<Tensor> rows{gen.normal({4, C}), gen.normal({4, C}, 3.0f, 1.0f), gen.normal({4, C}, -1000.0f, 0.1f)};
  std::vector<float> cauchy(4 * C);
  for (auto& v : cauchy) v = gen.normal() / gen.normal();
  rows.push_back(Tensor::from_vector(cauchy, {4, C}));
  Tensor spikes = Tensor::zeros({3, C});
  spikes.set({0, 0}, 1e4f);
  spikes.set({1, 5}, -3.0f);
  spikes.set({1, 6}, 3.0f);
  for (int64_t c = 0; c < C; ++c) spikes.set({2, c}, c < 2 ? 50.0f : 0.01f * (float)c);
  rows.push_back(spikes);
  // values +-k on a fraction 1/k^2 of coordinates, 0 elsewhere: |x - mu| >= k s on exactly that fraction
  Tensor two_point = Tensor::zeros({2, C});
  for (int64_t c = 0; c < C / 32; ++c) {
    two_point.set({0, 2 * c}, 4.0f);
    two_point.set({0, 2 * c + 1}, -4.0f);
  }
  for (int64_t c = 0; c < C / 4; ++c) two_point.set({1, c}, c % 2 ? 2.0f : -2.0f);
  rows.push_back(two_point);
  return rows;
}

TEST_CASE("bhyt output is bounded by |gamma|, for any input", "[norms]") {
  Generator gen(405);
  const int64_t C = 64;
  Var gamma(gen.normal({C}, 1.0f, 0.5f));
  auto gv = gamma.value().to_vector();
  for (const Tensor& rows : bhyt_rows(gen, C)) {
    for (float lambda : {1.0f, 0.5f}) {
      INFO("rows " << rows.to_string(3) << ", lambda " << lambda);
      // |pre-tanh| <= lambda * max(1, sqrt(C - 1) / kappa) < 9: tanh stays below 1 in float
      auto y = ag::bhyt(Var(rows), gamma, Var(scalar1(lambda)), 10.0f).value().to_vector();
      bool strict = true;
      for (size_t i = 0; i < y.size(); ++i) strict &= std::fabs(y[i]) < std::fabs(gv[i % C]);
      CHECK(strict);
    }
    auto y = ag::bhyt(Var(rows), gamma, Var(scalar1(50.0f)), 10.0f).value().to_vector();
    bool bounded = true;  // saturated: equality is the float limit
    for (size_t i = 0; i < y.size(); ++i) bounded &= std::fabs(y[i]) <= std::fabs(gv[i % C]);
    CHECK(bounded);
  }
}

TEST_CASE("bhyt is odd: bhyt(-x) = -bhyt(x)", "[norms]") {
  Generator gen(406);
  Var gamma(gen.normal({32}, 1.0f, 0.5f)), lambda(scalar1(1.3f));
  for (const Tensor& rows : bhyt_rows(gen, 32)) {
    Tensor y = ag::bhyt(Var(rows), gamma, lambda, 10.0f).value();
    Tensor y_neg = ag::bhyt(Var(neg(rows)), gamma, lambda, 10.0f).value();
    CHECK_CLOSE(y_neg, neg(y), 0, 1e-7);
  }
}

TEST_CASE("bhyt is scale invariant: bhyt(c x) = bhyt(x) for c > 0 as eps -> 0", "[norms]") {
  Generator gen(407);
  Var gamma(gen.normal({32}, 1.0f, 0.5f)), lambda(scalar1(1.3f));
  for (const Tensor& rows : bhyt_rows(gen, 32)) {
    Tensor y = ag::bhyt(Var(rows), gamma, lambda, 10.0f, 1e-12f).value();
    for (float c : {0.01f, 3.7f, 1000.0f}) {
      INFO("c " << c << ", rows " << rows.to_string(3));
      Tensor y_c = ag::bhyt(Var(mul_scalar(rows, c)), gamma, lambda, 10.0f, 1e-12f).value();
      CHECK_CLOSE(y_c, y, 1e-5, 1e-6);
    }
  }
}

// Chebyshev: |x - mu| >= kappa s on at most 1/kappa^2 of the coordinates, and
// |x| > kappa s + |mu| implies |x - mu| > kappa s; so |pre-tanh| = lambda |x| / D exceeds
// lambda on at most C / kappa^2 coordinates. Seen from the output: |y_i| > |gamma_i| tanh(lambda).
TEST_CASE("bhyt sends at most 1/kappa^2 of a token's coordinates beyond lambda before the tanh", "[norms]") {
  Generator gen(408);
  const int64_t C = 256;
  Var gamma(gen.normal({C}, 1.0f, 0.5f));
  auto gv = gamma.value().to_vector();
  int64_t most = 0;  // the largest count seen, so that the test is seen to bite
  for (float kappa : {10.0f, 2.0f, 1.5f}) {
    for (float lambda : {1.0f, 0.5f}) {
      for (const Tensor& rows : bhyt_rows(gen, C)) {
        auto y = ag::bhyt(Var(rows), gamma, Var(scalar1(lambda)), kappa).value().to_vector();
        const double edge = std::tanh((double)lambda);
        for (int64_t r = 0; r < rows.size(0); ++r) {
          int64_t beyond = 0;
          for (int64_t c = 0; c < C; ++c) beyond += std::fabs(y[r * C + c]) / std::fabs(gv[c]) > edge;
          INFO("kappa " << kappa << ", lambda " << lambda << ", row " << r << " of " << rows.to_string(3));
          CHECK((double)beyond <= (double)C / ((double)kappa * kappa));
          most = std::max(most, beyond);
        }
      }
    }
  }
  CHECK(most > 0);
}
