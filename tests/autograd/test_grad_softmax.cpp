// gradcheck of softmax and log_softmax (autograd/softmax.cpp) on several shapes, on
// non-contiguous inputs and on spread-out logits.
#include <catch2/catch.hpp>

#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "tensor/random.h"
#include "tests/test_util.h"

using nl::Shape;
using nl::Tensor;
using nl::Var;
namespace ag = nl::ag;

namespace {

template <typename Op>
void check_softmax_like(const char* name, Op op) {
  nl::Generator gen(301);
  auto fn = [op](const std::vector<Var>& v) { return op(v[0]); };
  for (const Shape& s : std::vector<Shape>{{5}, {3, 5}, {2, 3, 4}, {4, 1}}) {
    INFO(name << " on " << nl::to_string(s));
    CHECK_GRADCHECK(nl::gradcheck(fn, {gen.normal(s)}));
  }
  INFO(name << " on a transposed input");
  CHECK_GRADCHECK(nl::gradcheck(fn, {gen.normal({6, 3}).transpose(0, 1)}));
  INFO(name << " on a sliced input");
  CHECK_GRADCHECK(nl::gradcheck(fn, {gen.normal({3, 10}).slice(1, 0, 10, 2)}));
  INFO(name << " on spread-out logits");
  CHECK_GRADCHECK(nl::gradcheck(fn, {gen.normal({3, 4}, 0.0f, 4.0f)}));
}

}  // namespace

TEST_CASE("softmax gradcheck on several shapes and views", "[grad]") {
  check_softmax_like("softmax", [](const Var& x) { return ag::softmax(x); });
}

TEST_CASE("log_softmax gradcheck on several shapes and views", "[grad]") {
  check_softmax_like("log_softmax", [](const Var& x) { return ag::log_softmax(x); });
}

TEST_CASE("softmax gradcheck over a permuted last axis", "[grad]") {
  nl::Generator gen(302);
  // softmax over axis 1 of a (2, 4, 3) tensor, done as permute -> softmax -> permute back
  auto fn = [](const std::vector<Var>& v) {
    return ag::permute(ag::softmax(ag::permute(v[0], {0, 2, 1})), {0, 2, 1});
  };
  CHECK_GRADCHECK(nl::gradcheck(fn, {gen.normal({2, 4, 3})}));
}

TEST_CASE("attention_softmax gradcheck, causal and not, on square and cached-shape (T < S) scores", "[grad]") {
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    check_softmax_like("attention_softmax", [causal](const Var& x) {
      // the softmax_like shapes are (..., T, S) with T <= S except {5} and {4, 1}: give
      // those a leading axis so that the mask has a (T, S) block to work on
      Var s = x.dim() == 1 || x.shape().back() == 1 ? ag::reshape(x, {1, -1}) : x;
      if (causal && s.shape()[s.dim() - 2] > s.shape().back()) s = ag::transpose(s, -1, -2);
      return ag::attention_softmax(s, 0.7f, causal);
    });
  }
}

TEST_CASE("attention_softmax equals scale, causal mask and softmax done as three ops", "[grad]") {
  nl::Generator gen(302);
  const Tensor x = gen.normal({2, 3, 4, 6});  // (B, H, T, S): row i sees columns up to i + 2
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    Var a(x, true), b(x, true);
    Var fused = ag::attention_softmax(a, 0.35f, causal);
    Var scaled = ag::mul_scalar(b, 0.35f);
    Var three = ag::softmax(causal ? ag::causal_mask(scaled) : scaled);
    CHECK_CLOSE(fused.value(), three.value(), 1e-6, 1e-6);
    if (causal) CHECK(fused.value().at({0, 0, 0, 3}) == 0.0f);  // the future of row 0
    const Tensor dy = gen.normal(x.shape());
    fused.backward(dy);
    three.backward(dy);
    CHECK_CLOSE(a.grad(), b.grad(), 1e-6, 1e-6);
  }
}
