// The differentiable ops the papers' recipes add: BHyT in the released code's form,
// DyT without beta and the rotary position embedding. gradcheck on a transposed 2-D and
// a 3-D input, and values and gradients against the same function composed from
// primitive ag ops.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
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

// Values and every input's gradient of `fused` and `composite` under one upstream gradient.
void check_same_as(const Fn& fused, const Fn& composite, const std::vector<Tensor>& inputs, uint64_t seed) {
  Generator gen(seed);
  std::vector<Var> a, b;
  for (const Tensor& t : inputs) a.emplace_back(t.clone(), true), b.emplace_back(t.clone(), true);
  Var ya = fused(a), yb = composite(b);
  const Tensor up = gen.normal(ya.shape());
  ya.backward(up);
  yb.backward(up);
  CHECK_CLOSE(ya.value(), yb.value(), 1e-5, 1e-6);
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("gradient of input " << i);
    CHECK_CLOSE(a[i].grad(), b[i].grad(), inputs[i].numel() == 1 ? 1e-4 : 1e-5, 1e-5);
  }
}

std::vector<Tensor> xs(Generator& gen, float mean) {
  return {gen.normal({8, 5}, mean, 1.0f).transpose(0, 1), gen.normal({2, 3, 8}, mean, 1.0f)};
}

// gamma * tanh(lambda * x / (kappa * sqrt(mean(x^2) + eps))), from primitives
Var composite_bhyt_code(const Var& x, const Var& gamma, const Var& lambda, float kappa, float eps) {
  Var rms = ag::sqrt(ag::add_scalar(ag::mean(x * x, {-1}, true), eps));
  return gamma * ag::tanh(lambda * x / ag::mul_scalar(rms, kappa));
}

}  // namespace

TEST_CASE("bhyt, code form: gradcheck with no centring, the gradient through mean(x^2)", "[norms][bhyt]") {
  Generator gen(1611);
  for (float kappa : {10.0f, 1.5f})
    for (const Tensor& x : xs(gen, 0.6f)) {
      INFO("x " << describe(x) << ", kappa " << kappa);
      CHECK_GRADCHECK(gradcheck(
          [kappa](const std::vector<Var>& v) { return ag::bhyt(v[0], v[1], v[2], kappa, 1e-5f, false); },
          {x, gen.normal({8}, 1.0f, 0.5f), scalar1(1.7f)}));
    }
}

TEST_CASE("bhyt, code form: the fused op equals its composite from mean(x^2), sqrt, tanh", "[norms][bhyt]") {
  Generator gen(1612);
  for (float mean : {0.0f, 2.5f, -0.7f}) {
    INFO("mean " << mean);
    check_same_as([](const std::vector<Var>& v) { return ag::bhyt(v[0], v[1], v[2], 10.0f, 1e-5f, false); },
                  [](const std::vector<Var>& v) { return composite_bhyt_code(v[0], v[1], v[2], 10.0f, 1e-5f); },
                  {gen.normal({2, 3, 16}, mean, 1.0f), gen.normal({16}, 1.0f, 0.5f), scalar1(2.0f)}, 7);
  }
}

TEST_CASE("dyt without beta: gradcheck, composite gamma tanh(alpha x), a node of three inputs", "[norms]") {
  Generator gen(1613);
  for (const Tensor& x : xs(gen, 0.2f))
    CHECK_GRADCHECK(gradcheck([](const std::vector<Var>& v) { return ag::dyt(v[0], v[1], v[2], Var()); },
                              {x, scalar1(0.9f), gen.normal({8}, 1.0f, 0.5f)}));
  check_same_as([](const std::vector<Var>& v) { return ag::dyt(v[0], v[1], v[2], Var()); },
                [](const std::vector<Var>& v) { return v[2] * ag::tanh(v[1] * v[0]); },
                {gen.normal({4, 8}), scalar1(0.7f), gen.normal({8}, 1.0f, 0.5f)}, 8);
  Var y = ag::dyt(Var(gen.normal({2, 8}), true), Var(scalar1(1.0f), true), Var(Tensor::ones({8}), true), Var());
  REQUIRE(y.node());
  CHECK(y.node()->inputs.size() == 3);
}

TEST_CASE("rope: gradcheck, and the op equals its rotation written from slices", "[rope]") {
  Generator gen(1614);
  CHECK_GRADCHECK(gradcheck([](const std::vector<Var>& v) { return ag::rope(v[0], 4, 8, 2); },
                            {gen.normal({2, 3, 12})}));
  // one head of 4 channels at positions 3, 4: pairs (0, 1) and (2, 3) turned by p and p / 100
  const Tensor x = gen.normal({1, 2, 4});
  auto composite = [](const std::vector<Var>& v) {
    std::vector<Var> rows;
    for (int64_t t = 0; t < 2; ++t) {
      std::vector<Var> parts;
      for (int64_t i = 0; i < 2; ++i) {
        const double a = (double)(3 + t) / std::pow(10000.0, 2.0 * (double)i / 4.0);
        Var u = ag::slice(v[0], 2, 2 * i, 2 * i + 1), w = ag::slice(v[0], 2, 2 * i + 1, 2 * i + 2);
        u = ag::slice(u, 1, t, t + 1), w = ag::slice(w, 1, t, t + 1);
        parts.push_back(ag::mul_scalar(u, (float)std::cos(a)) - ag::mul_scalar(w, (float)std::sin(a)));
        parts.push_back(ag::mul_scalar(u, (float)std::sin(a)) + ag::mul_scalar(w, (float)std::cos(a)));
      }
      rows.push_back(ag::concat(parts, 2));
    }
    return ag::concat(rows, 1);
  };
  check_same_as([](const std::vector<Var>& v) { return ag::rope(v[0], 4, 4, 3); }, composite, {x}, 9);
}
