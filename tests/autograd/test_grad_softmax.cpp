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
