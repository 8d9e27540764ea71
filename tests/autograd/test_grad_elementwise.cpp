// gradcheck of every elementwise op in autograd/elementwise.cpp: binary ops on equal
// shapes, on broadcast shapes and on non-contiguous inputs; unary ops on two shapes and
// on transposed / sliced inputs, with inputs kept away from kinks and singularities.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "tensor/random.h"
#include "tests/autograd/autograd_literals.h"
#include "tests/test_util.h"

using nl::Shape;
using nl::Tensor;
using nl::Var;
namespace ag = nl::ag;

namespace {

using nl::test::Fn;

// Values with |x| in [0.2, 1.5] and random signs: away from the kinks of relu and abs at 0.
Tensor away_from_zero(nl::Generator& gen, const Shape& s) {
  Tensor t = gen.uniform(s, 0.2f, 1.5f);
  float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (gen.uniform() < 0.5f) p[i] = -p[i];
  return t;
}

// A (rows, cols) tensor that is the transpose of a contiguous (cols, rows) one.
Tensor transposed(Tensor stored) { return stored.transpose(0, 1); }

using Binary = Var (*)(const Var&, const Var&);

// Runs gradcheck of a binary op on one pair of inputs.
void check_binary(const char* name, Binary op, Tensor a, Tensor b) {
  INFO(name << " on " << nl::to_string(a.shape()) << " and " << nl::to_string(b.shape())
            << (a.is_contiguous() && b.is_contiguous() ? "" : " (non-contiguous)"));
  CHECK_GRADCHECK(nl::gradcheck([op](const std::vector<Var>& v) { return op(v[0], v[1]); }, {a, b}));
}

// b drawn in [0.5, 2] so that div stays away from b = 0.
Tensor rhs(nl::Generator& gen, const Shape& s, bool positive) {
  return positive ? gen.uniform(s, 0.5f, 2.0f) : gen.normal(s);
}

void check_binary_same_shape(const char* name, Binary op, bool positive_rhs) {
  nl::Generator gen(101);
  check_binary(name, op, gen.normal({2, 3}), rhs(gen, {2, 3}, positive_rhs));
  check_binary(name, op, gen.normal({4}), rhs(gen, {4}, positive_rhs));
  check_binary(name, op, gen.normal({2, 2, 3}), rhs(gen, {2, 2, 3}, positive_rhs));
}

void check_binary_broadcast(const char* name, Binary op, bool positive_rhs) {
  nl::Generator gen(102);
  check_binary(name, op, gen.normal({2, 3}), rhs(gen, {3}, positive_rhs));
  check_binary(name, op, gen.normal({3}), rhs(gen, {2, 3}, positive_rhs));
  check_binary(name, op, gen.normal({2, 1}), rhs(gen, {1, 3}, positive_rhs));
  check_binary(name, op, gen.normal({4, 1, 3}), rhs(gen, {2, 1}, positive_rhs));
  check_binary(name, op, gen.normal({2, 3}), rhs(gen, {}, positive_rhs));
  check_binary(name, op, gen.normal({}), rhs(gen, {2, 3}, positive_rhs));
  check_binary(name, op, gen.normal({2, 3, 4}), rhs(gen, {1, 3, 1}, positive_rhs));
}

void check_binary_non_contiguous(const char* name, Binary op, bool positive_rhs) {
  nl::Generator gen(103);
  // both transposed
  check_binary(name, op, transposed(gen.normal({3, 2})), transposed(rhs(gen, {3, 2}, positive_rhs)));
  // a transposed left operand against a broadcast row
  check_binary(name, op, transposed(gen.normal({4, 2})), rhs(gen, {4}, positive_rhs));
  // a right operand sliced with a step
  check_binary(name, op, gen.normal({2, 3}), rhs(gen, {2, 6}, positive_rhs).slice(1, 0, 6, 2));
  // an expanded-shape broadcast on a sliced left operand
  check_binary(name, op, gen.normal({5, 3}).slice(0, 1, 5, 2), rhs(gen, {2, 1}, positive_rhs));
}

void check_unary(const char* name, const Fn& fn, const std::function<Tensor(nl::Generator&, const Shape&)>& make) {
  nl::Generator gen(104);
  for (const Shape& s : std::vector<Shape>{{5}, {2, 3, 4}, {}}) {
    INFO(name << " on " << nl::to_string(s));
    CHECK_GRADCHECK(nl::gradcheck(fn, {make(gen, s)}));
  }
  {
    INFO(name << " on a transposed input");
    CHECK_GRADCHECK(nl::gradcheck(fn, {transposed(make(gen, {4, 3}))}));
  }
  {
    INFO(name << " on an input sliced with a step");
    CHECK_GRADCHECK(nl::gradcheck(fn, {make(gen, {3, 8}).slice(1, 1, 8, 3)}));
  }
}

Tensor normal(nl::Generator& g, const Shape& s) { return g.normal(s); }
Tensor positive(nl::Generator& g, const Shape& s) { return g.uniform(s, 0.5f, 2.0f); }

}  // namespace

// ---------------------------------------------------------------- binary ops

TEST_CASE("add gradcheck same shape", "[grad]") { check_binary_same_shape("add", ag::add, false); }
TEST_CASE("add gradcheck broadcast", "[grad]") { check_binary_broadcast("add", ag::add, false); }
TEST_CASE("add gradcheck non-contiguous", "[grad]") { check_binary_non_contiguous("add", ag::add, false); }

TEST_CASE("sub gradcheck same shape", "[grad]") { check_binary_same_shape("sub", ag::sub, false); }
TEST_CASE("sub gradcheck broadcast", "[grad]") { check_binary_broadcast("sub", ag::sub, false); }
TEST_CASE("sub gradcheck non-contiguous", "[grad]") { check_binary_non_contiguous("sub", ag::sub, false); }

TEST_CASE("mul gradcheck same shape", "[grad]") { check_binary_same_shape("mul", ag::mul, false); }
TEST_CASE("mul gradcheck broadcast", "[grad]") { check_binary_broadcast("mul", ag::mul, false); }
TEST_CASE("mul gradcheck non-contiguous", "[grad]") { check_binary_non_contiguous("mul", ag::mul, false); }

TEST_CASE("div gradcheck same shape", "[grad]") { check_binary_same_shape("div", ag::div, true); }
TEST_CASE("div gradcheck broadcast", "[grad]") { check_binary_broadcast("div", ag::div, true); }
TEST_CASE("div gradcheck non-contiguous", "[grad]") { check_binary_non_contiguous("div", ag::div, true); }

// One operand a constant (requires no gradient): the other's gradient must still be right.
TEST_CASE("mul gradcheck with a constant operand", "[grad]") {
  nl::Generator gen(105);
  Tensor c = gen.normal({3});
  CHECK_GRADCHECK(
      nl::gradcheck([c](const std::vector<Var>& v) { return ag::mul(v[0], Var(c)); }, {gen.normal({2, 3})}));
  CHECK_GRADCHECK(
      nl::gradcheck([c](const std::vector<Var>& v) { return ag::mul(Var(c), v[0]); }, {gen.normal({2, 3})}));
  Tensor d = gen.uniform({2, 1}, 0.5f, 2.0f);
  CHECK_GRADCHECK(
      nl::gradcheck([d](const std::vector<Var>& v) { return ag::div(v[0], Var(d)); }, {gen.normal({2, 3})}));
  CHECK_GRADCHECK(nl::gradcheck([d](const std::vector<Var>& v) { return ag::div(Var(d), v[0]); },
                                {gen.uniform({2, 3}, 0.5f, 2.0f)}));
}

TEST_CASE("add gradcheck through the operator overloads + - * / and unary -", "[grad]") {
  nl::Generator gen(106);
  auto fn = [](const std::vector<Var>& v) { return (v[0] * v[1] - v[0]) / v[1] + (-v[0]); };
  CHECK_GRADCHECK(nl::gradcheck(fn, {gen.normal({2, 3}), gen.uniform({3}, 0.5f, 2.0f)}));
}

// ---------------------------------------------------------------- scalar ops

TEST_CASE("add_scalar gradcheck", "[grad]") {
  check_unary("add_scalar", [](const std::vector<Var>& v) { return ag::add_scalar(v[0], 2.5f); }, normal);
}

TEST_CASE("mul_scalar gradcheck", "[grad]") {
  check_unary("mul_scalar", [](const std::vector<Var>& v) { return ag::mul_scalar(v[0], -1.75f); }, normal);
}

TEST_CASE("pow_scalar gradcheck", "[grad]") {
  for (float p : {2.0f, 3.0f, 0.5f, -1.5f, 1.0f}) {
    INFO("p = " << p);
    check_unary("pow_scalar", [p](const std::vector<Var>& v) { return ag::pow_scalar(v[0], p); }, positive);
  }
  // integer power of negative inputs
  check_unary("pow_scalar", [](const std::vector<Var>& v) { return ag::pow_scalar(v[0], 3.0f); }, away_from_zero);
}

// ---------------------------------------------------------------- unary maps

TEST_CASE("neg gradcheck", "[grad]") {
  check_unary("neg", [](const std::vector<Var>& v) { return ag::neg(v[0]); }, normal);
}

TEST_CASE("exp gradcheck", "[grad]") {
  check_unary("exp", [](const std::vector<Var>& v) { return ag::exp(v[0]); }, normal);
}

TEST_CASE("log gradcheck", "[grad]") {
  check_unary("log", [](const std::vector<Var>& v) { return ag::log(v[0]); }, positive);
}

TEST_CASE("sqrt gradcheck", "[grad]") {
  check_unary("sqrt", [](const std::vector<Var>& v) { return ag::sqrt(v[0]); }, positive);
}

TEST_CASE("rsqrt gradcheck", "[grad]") {
  check_unary("rsqrt", [](const std::vector<Var>& v) { return ag::rsqrt(v[0]); }, positive);
}

TEST_CASE("tanh gradcheck", "[grad]") {
  check_unary("tanh", [](const std::vector<Var>& v) { return ag::tanh(v[0]); }, normal);
}

// abs has no derivative at 0 (it jumps from -1 to 1), so the inputs keep |x| >= 0.2,
// well beyond the finite-difference step of 1e-3: on both sides of the kink, never on it.
TEST_CASE("abs gradcheck", "[grad]") {
  check_unary("abs", [](const std::vector<Var>& v) { return ag::abs(v[0]); }, away_from_zero);
}

TEST_CASE("erf gradcheck", "[grad]") {
  check_unary("erf", [](const std::vector<Var>& v) { return ag::erf(v[0]); }, normal);
  check_unary("erf", [](const std::vector<Var>& v) { return ag::erf(v[0]); },
              [](nl::Generator& g, const Shape& s) { return g.uniform(s, -3.0f, 3.0f); });
}

TEST_CASE("relu gradcheck", "[grad]") {
  check_unary("relu", [](const std::vector<Var>& v) { return ag::relu(v[0]); }, away_from_zero);
}

TEST_CASE("gelu gradcheck", "[grad]") {
  check_unary("gelu", [](const std::vector<Var>& v) { return ag::gelu(v[0]); }, normal);
  // further out, where the cubic term matters
  check_unary("gelu", [](const std::vector<Var>& v) { return ag::gelu(v[0]); },
              [](nl::Generator& g, const Shape& s) { return g.uniform(s, -3.0f, 3.0f); });
}

TEST_CASE("silu gradcheck", "[grad]") {
  check_unary("silu", [](const std::vector<Var>& v) { return ag::silu(v[0]); }, normal);
  check_unary("silu", [](const std::vector<Var>& v) { return ag::silu(v[0]); },
              [](nl::Generator& g, const Shape& s) { return g.uniform(s, -4.0f, 4.0f); });
}

TEST_CASE("exp gradcheck composed with log, tanh and gelu", "[grad]") {
  nl::Generator gen(107);
  auto fn = [](const std::vector<Var>& v) {
    return ag::gelu(ag::tanh(ag::mul(ag::log(ag::add_scalar(ag::exp(v[0]), 1.0f)), v[1])));
  };
  CHECK_GRADCHECK(nl::gradcheck(fn, {gen.normal({3, 4}), gen.normal({4})}));
}
