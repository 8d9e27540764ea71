// gradcheck of matmul (autograd/matmul.cpp): 2-D, every combination of trans flags,
// transposed views, batched, broadcast batches, and only one operand requiring a gradient.
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

void check_matmul(Tensor a, Tensor b, bool ta, bool tb) {
  INFO("matmul " << nl::to_string(a.shape()) << (ta ? "^T" : "") << " @ " << nl::to_string(b.shape())
                 << (tb ? "^T" : "") << (a.is_contiguous() && b.is_contiguous() ? "" : " (views)"));
  auto fn = [ta, tb](const std::vector<Var>& v) { return ag::matmul(v[0], v[1], ta, tb); };
  CHECK_GRADCHECK(nl::gradcheck(fn, {a, b}));
}

}  // namespace

TEST_CASE("matmul gradcheck 2-D", "[grad]") {
  nl::Generator gen(401);
  check_matmul(gen.normal({3, 4}), gen.normal({4, 5}), false, false);
  check_matmul(gen.normal({1, 4}), gen.normal({4, 1}), false, false);
  check_matmul(gen.normal({5, 2}), gen.normal({2, 3}), false, false);
}

TEST_CASE("matmul gradcheck with trans flags", "[grad]") {
  nl::Generator gen(402);
  check_matmul(gen.normal({4, 3}), gen.normal({4, 5}), true, false);
  check_matmul(gen.normal({3, 4}), gen.normal({5, 4}), false, true);
  check_matmul(gen.normal({4, 3}), gen.normal({5, 4}), true, true);
}

TEST_CASE("matmul gradcheck transposed and sliced views", "[grad]") {
  nl::Generator gen(403);
  check_matmul(gen.normal({4, 3}).transpose(0, 1), gen.normal({4, 5}), false, false);
  check_matmul(gen.normal({3, 4}), gen.normal({5, 4}).transpose(0, 1), false, false);
  check_matmul(gen.normal({4, 3}).transpose(0, 1), gen.normal({5, 4}).transpose(0, 1), false, false);
  // a view plus a flag
  check_matmul(gen.normal({3, 4}).transpose(0, 1), gen.normal({4, 5}), true, false);
  check_matmul(gen.normal({6, 4}).slice(0, 0, 6, 2), gen.normal({4, 10}).slice(1, 1, 10, 3), false, false);
}

TEST_CASE("matmul gradcheck batched", "[grad]") {
  nl::Generator gen(404);
  check_matmul(gen.normal({2, 3, 4}), gen.normal({2, 4, 2}), false, false);
  check_matmul(gen.normal({2, 4, 3}), gen.normal({2, 2, 4}), true, true);
  check_matmul(gen.normal({2, 3, 4}), gen.normal({2, 2, 4}).transpose(1, 2), false, false);
  check_matmul(gen.normal({3, 2, 4}).permute({1, 0, 2}), gen.normal({2, 4, 2}), false, false);
}

TEST_CASE("matmul gradcheck batched broadcast 3-D @ 2-D", "[grad]") {
  nl::Generator gen(405);
  check_matmul(gen.normal({2, 3, 4}), gen.normal({4, 5}), false, false);
  check_matmul(gen.normal({2, 3, 4}), gen.normal({5, 4}), false, true);
  check_matmul(gen.normal({2, 4, 3}), gen.normal({4, 5}), true, false);
  check_matmul(gen.normal({2, 4, 3}), gen.normal({5, 4}), true, true);
  check_matmul(gen.normal({3, 4}), gen.normal({2, 4, 2}), false, false);
  check_matmul(gen.normal({2, 3, 4}), gen.normal({1, 4, 2}), false, false);
}

TEST_CASE("matmul gradcheck batched broadcast (2,1,M,K) @ (3,K,N)", "[grad]") {
  nl::Generator gen(406);
  check_matmul(gen.normal({2, 1, 3, 2}), gen.normal({3, 2, 4}), false, false);
  check_matmul(gen.normal({2, 1, 2, 3}), gen.normal({3, 4, 2}), true, true);
  check_matmul(gen.normal({1, 3, 3, 2}), gen.normal({2, 1, 2, 2}), false, false);
}

TEST_CASE("matmul gradcheck with one operand constant", "[grad]") {
  nl::Generator gen(407);
  Tensor w = gen.normal({4, 3});
  CHECK_GRADCHECK(nl::gradcheck([w](const std::vector<Var>& v) { return ag::matmul(v[0], Var(w)); },
                                {gen.normal({2, 5, 4})}));
  CHECK_GRADCHECK(nl::gradcheck([w](const std::vector<Var>& v) { return ag::matmul(Var(w), v[0], true, false); },
                                {gen.normal({4, 2})}));
}

TEST_CASE("matmul gradcheck attention pattern softmax(q k^T) v", "[grad]") {
  nl::Generator gen(408);
  auto fn = [](const std::vector<Var>& v) {
    Var scores = ag::mul_scalar(ag::matmul(v[0], v[1], false, true), 0.5f);
    return ag::matmul(ag::softmax(ag::causal_mask(scores)), v[2]);
  };
  CHECK_GRADCHECK(nl::gradcheck(fn, {gen.normal({2, 3, 4}), gen.normal({2, 3, 4}), gen.normal({2, 3, 2})}));
}
