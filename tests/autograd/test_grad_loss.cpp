// gradcheck of cross_entropy (autograd/loss.cpp) and embedding (autograd/shape.cpp):
// two shapes each, ignore_index, repeated ids, non-contiguous inputs.
#include <catch2/catch.hpp>

#include <cmath>
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

// gradcheck of cross_entropy(logits, targets, ignore_index) with respect to the logits
nl::GradcheckResult cross_entropy_gradcheck(const Tensor& logits, const Tensor& targets, int ignore_index = -100) {
  return nl::gradcheck(
      [&](const std::vector<Var>& v) { return ag::cross_entropy(v[0], targets, ignore_index); }, {logits});
}

// gradcheck of embedding(table, ids) with respect to the table
nl::GradcheckResult embedding_gradcheck(const Tensor& table, const Tensor& ids) {
  return nl::gradcheck([&](const std::vector<Var>& v) { return ag::embedding(v[0], ids); }, {table});
}

}  // namespace

TEST_CASE("cross_entropy gradcheck on two shapes", "[grad]") {
  nl::Generator gen(601);
  Tensor t1 = Tensor::from_ints({0, 3, 1}, {3});
  CHECK_GRADCHECK(cross_entropy_gradcheck(gen.normal({3, 4}), t1));
  Tensor t2 = Tensor::from_ints({6, 0, 2, 2, 5, 1, 3, 4}, {8});
  CHECK_GRADCHECK(cross_entropy_gradcheck(gen.normal({8, 7}, 0.0f, 2.0f), t2));
  Tensor t3 = Tensor::from_ints({1}, {1});
  CHECK_GRADCHECK(cross_entropy_gradcheck(gen.normal({1, 2}), t3));
}

TEST_CASE("cross_entropy gradcheck with ignored rows", "[grad]") {
  nl::Generator gen(602);
  Tensor t = Tensor::from_ints({2, -100, 0, -100, 1}, {5});
  CHECK_GRADCHECK(cross_entropy_gradcheck(gen.normal({5, 3}), t));
  // a custom ignore_index inside [0, V)
  Tensor t2 = Tensor::from_ints({2, 0, 0, 1}, {4});
  CHECK_GRADCHECK(cross_entropy_gradcheck(gen.normal({4, 3}), t2, 0));
}

TEST_CASE("cross_entropy gradcheck on non-contiguous logits", "[grad]") {
  nl::Generator gen(603);
  Tensor t = Tensor::from_ints({3, 0, 2}, {3});
  CHECK_GRADCHECK(cross_entropy_gradcheck(gen.normal({4, 3}).transpose(0, 1), t));
  CHECK_GRADCHECK(cross_entropy_gradcheck(gen.normal({3, 8}).slice(1, 0, 8, 2), t));
}

TEST_CASE("cross_entropy gradcheck after a matmul (logits from a layer)", "[grad]") {
  nl::Generator gen(604);
  Tensor t = Tensor::from_ints({1, 4, 0, 4}, {4});
  auto fn = [t](const std::vector<Var>& v) { return ag::cross_entropy(ag::matmul(v[0], v[1]), t); };
  CHECK_GRADCHECK(nl::gradcheck(fn, {gen.normal({4, 3}), gen.normal({3, 5})}));
}

TEST_CASE("cross_entropy gradcheck agrees with -mean(log_softmax[target])", "[grad]") {
  nl::Generator gen(605);
  Tensor z = gen.normal({3, 4});
  Tensor onehot = Tensor::zeros({3, 4});
  onehot.set({0, 2}, 1.0f);
  onehot.set({1, 0}, 1.0f);
  onehot.set({2, 3}, 1.0f);
  Var a(z.clone(), true), b(z.clone(), true);
  ag::cross_entropy(a, Tensor::from_ints({2, 0, 3}, {3})).backward();
  Var composite = ag::mul_scalar(ag::sum(ag::mul(ag::log_softmax(b), Var(onehot))), -1.0f / 3.0f);
  composite.backward();
  CHECK(composite.item() == Approx(ag::cross_entropy(Var(z), Tensor::from_ints({2, 0, 3}, {3})).item()).epsilon(1e-5));
  CHECK_CLOSE(a.grad(), b.grad(), 1e-4, 1e-6);
}

TEST_CASE("embedding gradcheck on two shapes with repeated ids", "[grad]") {
  nl::Generator gen(606);
  Tensor ids1 = Tensor::from_ints({2, 0, 2, 4}, {4});
  CHECK_GRADCHECK(embedding_gradcheck(gen.normal({5, 3}), ids1));
  Tensor ids2 = Tensor::from_ints({1, 1, 3, 0, 1, 2}, {2, 3});
  CHECK_GRADCHECK(embedding_gradcheck(gen.normal({4, 2}), ids2));
}

TEST_CASE("embedding gradcheck on a non-contiguous table", "[grad]") {
  nl::Generator gen(607);
  Tensor ids = Tensor::from_ints({3, 1, 3}, {3});
  CHECK_GRADCHECK(embedding_gradcheck(gen.normal({3, 4}).transpose(0, 1), ids));
  // the tied-weights pattern: the table used for the lookup and as the output layer
  Tensor targets = Tensor::from_ints({0, 2, 3}, {3});
  auto tied = [ids, targets](const std::vector<Var>& v) {
    return ag::cross_entropy(ag::matmul(ag::embedding(v[0], ids), v[0], false, true), targets);
  };
  CHECK_GRADCHECK(nl::gradcheck(tied, {gen.normal({4, 3})}));
}
