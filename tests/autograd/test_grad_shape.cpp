// gradcheck of the views, joins and masks in autograd/shape.cpp: reshape, transpose,
// permute, slice, squeeze, unsqueeze, expand, contiguous, concat, split, causal_mask and
// dropout, each on two shapes and on a non-contiguous input. The output of a view is
// often a view itself; a following mul by a random tensor makes the upstream gradient
// position-dependent beyond gradcheck's own random contraction.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
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

void check(const char* what, const std::function<Var(const std::vector<Var>&)>& fn, std::vector<Tensor> inputs) {
  INFO(what);
  CHECK_GRADCHECK(nl::gradcheck(fn, inputs));
}

}  // namespace

TEST_CASE("reshape gradcheck", "[grad]") {
  nl::Generator gen(501);
  auto fn = [](const Shape& s) { return [s](const std::vector<Var>& v) { return ag::reshape(v[0], s); }; };
  check("(2,3,4) -> (6,4)", fn({6, 4}), {gen.normal({2, 3, 4})});
  check("(2,3,4) -> (4,-1)", fn({4, -1}), {gen.normal({2, 3, 4})});
  check("(6) -> (2,1,3)", fn({2, 1, 3}), {gen.normal({6})});
  // a transposed input cannot be viewed: reshape copies
  check("transposed (3,4) -> (12)", fn({12}), {gen.normal({4, 3}).transpose(0, 1)});
  // the reshaped view then used by another op
  check("reshape then matmul",
        [](const std::vector<Var>& v) { return ag::matmul(ag::reshape(v[0], {3, 4}), v[1]); },
        {gen.normal({12}), gen.normal({4, 2})});
}

TEST_CASE("transpose gradcheck", "[grad]") {
  nl::Generator gen(502);
  auto fn = [](int64_t a, int64_t b) {
    return [a, b](const std::vector<Var>& v) { return ag::transpose(v[0], a, b); };
  };
  check("(3,4) 0<->1", fn(0, 1), {gen.normal({3, 4})});
  check("(2,3,4) 0<->2", fn(0, 2), {gen.normal({2, 3, 4})});
  check("(2,3,4) -1<->-2", fn(-1, -2), {gen.normal({2, 3, 4})});
  check("of a transposed input", fn(0, 1), {gen.normal({4, 3}).transpose(0, 1)});
  check("then a broadcast mul",
        [](const std::vector<Var>& v) { return ag::mul(ag::transpose(v[0], 0, 1), v[1]); },
        {gen.normal({3, 2}), gen.normal({2, 3})});
}

TEST_CASE("permute gradcheck", "[grad]") {
  nl::Generator gen(503);
  auto fn = [](std::vector<int64_t> o) { return [o](const std::vector<Var>& v) { return ag::permute(v[0], o); }; };
  check("(2,3,4) {2,0,1}", fn({2, 0, 1}), {gen.normal({2, 3, 4})});
  check("(2,3,4) {1,2,0}", fn({1, 2, 0}), {gen.normal({2, 3, 4})});
  check("(2,3,4,2) {0,2,1,3}", fn({0, 2, 1, 3}), {gen.normal({2, 3, 4, 2})});
  check("(2,3) {-1,0}", fn({-1, 0}), {gen.normal({2, 3})});
  check("of a permuted input", fn({2, 0, 1}), {gen.normal({4, 2, 3}).permute({1, 2, 0})});
  check("then contiguous and mul",
        [](const std::vector<Var>& v) { return ag::mul(ag::contiguous(ag::permute(v[0], {2, 0, 1})), v[1]); },
        {gen.normal({2, 3, 4}), gen.normal({4, 2, 3})});
}

TEST_CASE("slice gradcheck", "[grad]") {
  nl::Generator gen(504);
  auto fn = [](int64_t axis, int64_t start, int64_t end, int64_t step) {
    return [=](const std::vector<Var>& v) { return ag::slice(v[0], axis, start, end, step); };
  };
  check("(5) 1:4", fn(0, 1, 4, 1), {gen.normal({5})});
  check("(3,6) axis 1, 0:6:2", fn(1, 0, 6, 2), {gen.normal({3, 6})});
  check("(2,5,3) axis 1, 1:5:3", fn(1, 1, 5, 3), {gen.normal({2, 5, 3})});
  check("(4,3) axis 0, -3:-1", fn(0, -3, -1, 1), {gen.normal({4, 3})});
  check("(4,3) axis -1, 1:100 (end clamped)", fn(-1, 1, 100, 1), {gen.normal({4, 3})});
  check("of a transposed input", fn(0, 1, 4, 2), {gen.normal({3, 5}).transpose(0, 1)});
  // overlapping slices of one input: their gradients add up
  check("two overlapping slices",
        [](const std::vector<Var>& v) {
          return ag::mul(ag::slice(v[0], 1, 0, 3), ag::slice(v[0], 1, 1, 4));
        },
        {gen.normal({2, 4})});
}

TEST_CASE("squeeze gradcheck", "[grad]") {
  nl::Generator gen(505);
  check("(3,1) axis 1", [](const std::vector<Var>& v) { return ag::squeeze(v[0], 1); }, {gen.normal({3, 1})});
  check("(1,2,3) axis 0", [](const std::vector<Var>& v) { return ag::squeeze(v[0], 0); }, {gen.normal({1, 2, 3})});
  check("(2,1,3) axis -2", [](const std::vector<Var>& v) { return ag::squeeze(v[0], -2); }, {gen.normal({2, 1, 3})});
  check("of a sliced input", [](const std::vector<Var>& v) { return ag::squeeze(v[0], 1); },
        {gen.normal({3, 4}).slice(1, 2, 3)});
}

TEST_CASE("unsqueeze gradcheck", "[grad]") {
  nl::Generator gen(506);
  check("(3) axis 0", [](const std::vector<Var>& v) { return ag::unsqueeze(v[0], 0); }, {gen.normal({3})});
  check("(2,3) axis 2", [](const std::vector<Var>& v) { return ag::unsqueeze(v[0], 2); }, {gen.normal({2, 3})});
  check("(2,3) axis -2", [](const std::vector<Var>& v) { return ag::unsqueeze(v[0], -2); }, {gen.normal({2, 3})});
  check("of a transposed input then a broadcast",
        [](const std::vector<Var>& v) { return ag::mul(ag::unsqueeze(v[0], 1), v[1]); },
        {gen.normal({3, 2}).transpose(0, 1), gen.normal({4, 1})});
}

TEST_CASE("expand gradcheck", "[grad]") {
  nl::Generator gen(507);
  auto fn = [](const Shape& s) { return [s](const std::vector<Var>& v) { return ag::expand(v[0], s); }; };
  check("(3,1) -> (3,4)", fn({3, 4}), {gen.normal({3, 1})});
  check("(3) -> (2,4,3)", fn({2, 4, 3}), {gen.normal({3})});
  check("(1,3,1) -> (2,3,4)", fn({2, 3, 4}), {gen.normal({1, 3, 1})});
  check("() -> (2,2)", fn({2, 2}), {gen.normal({})});
  check("of a sliced input (3,1) -> (3,2)", fn({3, 2}), {gen.normal({3, 4}).slice(1, 1, 2)});
}

TEST_CASE("contiguous gradcheck", "[grad]") {
  nl::Generator gen(508);
  auto fn = [](const std::vector<Var>& v) { return ag::contiguous(v[0]); };
  check("contiguous input", fn, {gen.normal({2, 3})});
  check("transposed input", fn, {gen.normal({3, 2}).transpose(0, 1)});
  check("sliced input", fn, {gen.normal({4, 6}).slice(1, 0, 6, 3)});
}

TEST_CASE("concat gradcheck", "[grad]") {
  nl::Generator gen(509);
  check("axis 0 of (1,3) and (2,3)", [](const std::vector<Var>& v) { return ag::concat({v[0], v[1]}, 0); },
        {gen.normal({1, 3}), gen.normal({2, 3})});
  check("axis 1 of three parts", [](const std::vector<Var>& v) { return ag::concat({v[0], v[1], v[2]}, 1); },
        {gen.normal({2, 1, 2}), gen.normal({2, 3, 2}), gen.normal({2, 2, 2})});
  check("axis -1 with a transposed part", [](const std::vector<Var>& v) { return ag::concat({v[0], v[1]}, -1); },
        {gen.normal({2, 3}).transpose(0, 1), gen.normal({3, 4})});
  check("the same Var twice", [](const std::vector<Var>& v) { return ag::concat({v[0], v[1], v[0]}, 0); },
        {gen.normal({2, 2}), gen.normal({1, 2})});
}

TEST_CASE("split gradcheck", "[grad]") {
  nl::Generator gen(510);
  // the pieces put back in another order: each piece's gradient must land in its place
  check("(2,5) into {2,3} along axis 1, rejoined reversed",
        [](const std::vector<Var>& v) {
          auto p = ag::split(v[0], {2, 3}, 1);
          return ag::concat({p[1], p[0]}, 1);
        },
        {gen.normal({2, 5})});
  check("(6,2) into {1,2,3} along axis 0, pieces weighted differently",
        [](const std::vector<Var>& v) {
          auto p = ag::split(v[0], {1, 2, 3}, 0);
          return ag::add(ag::sum(ag::mul_scalar(p[0], 3.0f)), ag::add(ag::sum(p[1]), ag::sum(ag::mul(p[2], p[2]))));
        },
        {gen.normal({6, 2})});
  check("only one piece used", [](const std::vector<Var>& v) { return ag::split(v[0], {1, 3}, -1)[1]; },
        {gen.normal({3, 4})});
  check("of a transposed input",
        [](const std::vector<Var>& v) {
          auto p = ag::split(v[0], {2, 2}, 1);
          return ag::mul(p[0], p[1]);
        },
        {gen.normal({4, 3}).transpose(0, 1)});
}

TEST_CASE("causal_mask gradcheck", "[grad]") {
  nl::Generator gen(511);
  // a finite fill: masked outputs are constants, their gradient 0
  check("(3,3) fill -5", [](const std::vector<Var>& v) { return ag::causal_mask(v[0], -5.0f); },
        {gen.normal({3, 3})});
  check("(2,2,4) S > T fill 0", [](const std::vector<Var>& v) { return ag::causal_mask(v[0], 0.0f); },
        {gen.normal({2, 2, 4})});
  // -inf fill followed by softmax, as attention uses it
  check("(2,3,3) -inf then softmax", [](const std::vector<Var>& v) { return ag::softmax(ag::causal_mask(v[0])); },
        {gen.normal({2, 3, 3})});
  check("of a transposed input", [](const std::vector<Var>& v) { return ag::softmax(ag::causal_mask(v[0])); },
        {gen.normal({4, 3}).transpose(0, 1)});
}

TEST_CASE("dropout gradcheck", "[grad]") {
  nl::Generator gen(512);
  // gradcheck calls fn several times: a generator seeded inside fn draws the same mask each time
  auto train = [](float p) {
    return [p](const std::vector<Var>& v) {
      nl::Generator g(77);
      return ag::dropout(v[0], p, true, g);
    };
  };
  check("training p=0.3 on (4,5)", train(0.3f), {gen.normal({4, 5})});
  check("training p=0.5 on (2,3,4)", train(0.5f), {gen.normal({2, 3, 4})});
  check("training p=0.3 on a transposed input", train(0.3f), {gen.normal({5, 4}).transpose(0, 1)});
  check("training p=0", train(0.0f), {gen.normal({3, 3})});
  auto eval = [](const std::vector<Var>& v) {
    nl::Generator g(77);
    return ag::dropout(v[0], 0.5f, false, g);
  };
  check("eval mode is the identity", eval, {gen.normal({3, 4})});
  check("eval mode on a sliced input", eval, {gen.normal({3, 8}).slice(1, 0, 8, 2)});
}

TEST_CASE("dropout gradcheck: the gradient is the same mask as the forward", "[grad]") {
  nl::Generator g(5);
  Var x(Tensor::ones({1000}), true);
  Var y = ag::dropout(x, 0.4f, true, g);
  y.backward(Tensor::ones({1000}));
  // dy/dx = mask = y / x with x = 1
  CHECK_CLOSE(x.grad(), y.value(), 0, 0);
  int64_t zeros = 0;
  for (float v : y.value().to_vector()) zeros += v == 0.0f;
  CHECK(zeros > 300);
  CHECK(zeros < 500);
}
