// gradcheck of the reductions in autograd/reduce.cpp over one, several and all axes,
// with and without keepdim, on contiguous and non-contiguous inputs. max is checked on
// distinct values (a permutation spaced 0.25 apart) so that no tie sits within eps.
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

struct AxesCase {
  std::vector<int64_t> axes;
  bool keepdim;
};

const std::vector<AxesCase>& axes_cases() {
  static const std::vector<AxesCase> cases = {{{1}, false}, {{1}, true},     {{-1}, false}, {{0}, true},
                                              {{0, 2}, false}, {{2, 0}, true}, {{0, 1}, false}, {{}, false},
                                              {{}, true},    {{0, 1, 2}, false}};
  return cases;
}

// Distinct values: a random permutation of -3, -2.75, ..., spaced 0.25 apart.
Tensor distinct(nl::Generator& gen, const Shape& s) {
  const int64_t n = nl::numel_of(s);
  std::vector<int64_t> perm = gen.permutation(n);
  std::vector<float> v((size_t)n);
  for (int64_t i = 0; i < n; ++i) v[(size_t)i] = -3.0f + 0.25f * (float)perm[(size_t)i];
  return Tensor::from_vector(v, s);
}

template <typename Reduce>
void check_reduction(const char* name, Reduce reduce, bool distinct_values) {
  nl::Generator gen(201);
  auto make = [&](const Shape& s) { return distinct_values ? distinct(gen, s) : gen.normal(s); };
  for (const AxesCase& c : axes_cases()) {
    INFO(name << " over " << c.axes.size() << " axes (" << (c.axes.empty() ? -1 : c.axes[0]) << "...), keepdim "
              << c.keepdim);
    auto fn = [&](const std::vector<Var>& v) { return reduce(v[0], c.axes, c.keepdim); };
    CHECK_GRADCHECK(nl::gradcheck(fn, {make({2, 3, 4})}));
    // non-contiguous: a permuted (4, 2, 3) tensor viewed as (2, 3, 4)
    CHECK_GRADCHECK(nl::gradcheck(fn, {make({4, 2, 3}).permute({1, 2, 0})}));
  }
  // a second, 2-D shape, and a slice with a step
  auto fn_rows = [&](const std::vector<Var>& v) { return reduce(v[0], {1}, false); };
  CHECK_GRADCHECK(nl::gradcheck(fn_rows, {make({5, 3})}));
  CHECK_GRADCHECK(nl::gradcheck(fn_rows, {make({5, 6}).slice(1, 0, 6, 2)}));
  auto fn_cols = [&](const std::vector<Var>& v) { return reduce(v[0], {0}, false); };
  CHECK_GRADCHECK(nl::gradcheck(fn_cols, {make({5, 3})}));
}

}  // namespace

TEST_CASE("sum gradcheck over single, several and all axes", "[grad]") {
  check_reduction("sum", [](const Var& x, const std::vector<int64_t>& a, bool k) { return ag::sum(x, a, k); }, false);
}

TEST_CASE("mean gradcheck over single, several and all axes", "[grad]") {
  check_reduction("mean", [](const Var& x, const std::vector<int64_t>& a, bool k) { return ag::mean(x, a, k); }, false);
}

TEST_CASE("max gradcheck over single, several and all axes (distinct values)", "[grad]") {
  check_reduction("max", [](const Var& x, const std::vector<int64_t>& a, bool k) { return ag::max(x, a, k); }, true);
}

TEST_CASE("var gradcheck with correction 1", "[grad]") {
  check_reduction("var", [](const Var& x, const std::vector<int64_t>& a, bool k) { return ag::var(x, a, k, 1); },
                  false);
}

TEST_CASE("var gradcheck with correction 0", "[grad]") {
  check_reduction("var", [](const Var& x, const std::vector<int64_t>& a, bool k) { return ag::var(x, a, k, 0); },
                  false);
}

// A max reached by two elements: PyTorch's amax splits the gradient evenly. Checked by
// hand (finite differences are not defined at a tie).
TEST_CASE("max gradcheck splits the gradient between tied maxima", "[grad]") {
  Var x(Tensor::from_vector({1, 3, 3, 2, 5, 0}, {2, 3}), true);
  Var y = ag::max(x, {1});
  y.backward(Tensor::from_vector({2, 4}, {2}));
  CHECK_CLOSE(x.grad(), Tensor::from_vector({0, 1, 1, 0, 4, 0}, {2, 3}), 0, 0);
}

TEST_CASE("sum gradcheck composed: mean of squares minus square of mean", "[grad]") {
  nl::Generator gen(202);
  auto fn = [](const std::vector<Var>& v) {
    Var m = ag::mean(v[0], {1}, true);
    return ag::sub(ag::mean(ag::mul(v[0], v[0]), {1}), ag::sum(ag::mul(m, m), {1}));
  };
  CHECK_GRADCHECK(nl::gradcheck(fn, {gen.normal({3, 5})}));
}
