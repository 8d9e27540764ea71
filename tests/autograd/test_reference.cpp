// Every differentiable op against PyTorch's outputs and gradients for the same inputs
// (tests/reference/*.txt, written by scripts/make_reference.py; format in its README).
// Each case: inputs from the file, the op's output, backward with the file's upstream
// gradient, and every input gradient compared with the file's.
//
// Tolerances, |got - want| <= atol + rtol |want|. The reference is the exact result
// rounded once to float32 (computed in float64), so the margin only has to cover
// normlab's float32 rounding:
// - elementwise, shape, embedding: rtol 1e-5. One elementwise op in float32 is within a
//   few ulps (1.2e-7 relative), so 1e-5 leaves a wide margin. atol 1e-6 for results
//   near zero, where relative error means nothing: gelu's 1 + tanh(u) and the
//   derivatives 1 - tanh^2 cancel in float32 (ulp of 1 is 6e-8, then multiplied by
//   |x| and an O(1) upstream gradient).
// - reductions, matmul, softmax, attention, loss, norms: rtol 1e-4. A float32 sum of n terms
//   errs by up to ~n ulps in the worst case (n here up to 1000 for one row). atol 1e-5
//   covers entries that are differences of O(10..100) numbers: a log-softmax of
//   logits near 100 (ulp 7.6e-6), the gradient of a variance whose row mean sits at 100.
// - norms on hard inputs (rows of mean 1e3 and spread 1, rows whose mean square is below
//   eps; `attr inputs`): rtol 1e-5, since the kernels form their statistics in double and
//   should lose nothing there. No fixed atol: the one entry that needs a margin is ~0 at
//   its tensor's scale, so the margin is 1e-5 of the tensor's largest |value|. BHyT's
//   input gradient at mean 1e3 is lambda/D (a_j - mean(a)) plus smaller terms, a
//   difference of terms as large as its largest entry; a = dy gamma (1 - t^2) comes from
//   a float32 tanh, and 1 - t^2 keeps only ~1e-6 of relative accuracy where t nears 1,
//   so entries 500 times below the largest err by 2e-4 of themselves but by 2e-6 of the
//   largest. (With tanh in double they pass at atol 0, but the backward takes 10 times
//   longer: 2.1 ms against 0.21 ms for 1024 rows of 128 on one thread.) Every other
//   hard case passes at atol 0.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "autograd/norms.h"
#include "autograd/ops.h"
#include "autograd/var.h"
#include "nn/norms/registry.h"
#include "tensor/random.h"
#include "tests/reference.h"
#include "tests/test_util.h"

namespace {

using nl::Tensor;
using nl::Var;
using nl::test::RefCase;
namespace ag = nl::ag;

struct Tol {
  double rtol, atol;
  double atol_of_largest = 0;  // added to atol: this fraction of the expected tensor's largest |value|
};

// The absolute margin for comparing with `want`.
double atol_for(const Tol& tol, const Tensor& want) {
  double largest = 0;
  for (float v : want.to_vector()) largest = std::max(largest, (double)std::fabs(v));
  return tol.atol + tol.atol_of_largest * largest;
}
constexpr Tol kElementwise{1e-5, 1e-6};
constexpr Tol kReduction{1e-4, 1e-5};
constexpr Tol kHardNorms{1e-5, 0, 1e-5};

bool is_input_role(const std::string& role) {
  return role.rfind("out", 0) != 0 && role.rfind("grad_", 0) != 0;
}

// The case's inputs as leaf Vars; a leaf requires a gradient when the file has one for it.
struct Inputs {
  const RefCase& c;
  std::map<std::string, Var> vars;
  explicit Inputs(const RefCase& rc) : c(rc) {
    for (const auto& [role, t] : c.tensors)
      if (is_input_role(role)) vars.emplace(role, Var(t, c.has("grad_" + role)));
  }
  Var operator()(const std::string& role) const {
    auto it = vars.find(role);
    if (it == vars.end()) nl::fail(c.where(), ": case ", c.name, " has no input '", role, "'");
    return it->second;
  }
  // Integer inputs (ids, targets) are plain tensors, not Vars.
  const Tensor& ints(const std::string& role) const { return c.tensor(role); }
};

// An op of the family: runs the case's op on its inputs, returns its output(s).
using OpFn = std::function<std::vector<Var>(const RefCase&, const Inputs&)>;
using OpTable = std::map<std::string, OpFn>;

// Compares the outputs, runs backward with the file's upstream gradients, compares the
// gradients. Several outputs (split) are contracted one after another: leaf gradients
// accumulate, as they do for sum_i <out_i, grad_out_i>.
void check_case(const RefCase& c, const Inputs& in, const std::vector<Var>& outs, Tol tol) {
  const bool single = outs.size() == 1 && c.has("out");
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string suffix = single ? "" : std::to_string(i);
    INFO("output out" << suffix);
    const Tensor& want = c.tensor("out" + suffix);
    CHECK_CLOSE(outs[i].value(), want, tol.rtol, atol_for(tol, want));
  }
  if (!single) CHECK_FALSE(c.has("out" + std::to_string(outs.size())));  // no output left unchecked
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string suffix = single ? "" : std::to_string(i);
    outs[i].backward(c.tensor("grad_out" + suffix), /*retain_graph=*/i + 1 < outs.size());
  }
  for (const auto& [role, v] : in.vars) {
    if (!c.has("grad_" + role)) continue;
    INFO("gradient of " << role);
    if (!v.grad().defined()) {
      FAIL_CHECK("no gradient reached input " << role);
      continue;
    }
    const Tensor& want = c.tensor("grad_" + role);
    CHECK_CLOSE(v.grad(), want, tol.rtol, atol_for(tol, want));
  }
}

// Which cases of a file a test runs.
using Select = std::function<bool(const RefCase&)>;
bool every_case(const RefCase&) { return true; }

// Runs every selected case of one file through its op; also checks that every op of
// the table has at least one such case, so a family cannot silently lose its coverage.
void run_family(const std::string& file, const OpTable& ops, Tol tol, const Select& select = every_case) {
  const auto cases = nl::test::load_reference(file);
  REQUIRE(!cases.empty());
  std::set<std::string> seen;
  for (const auto& c : cases) {
    if (!select(c)) continue;
    INFO(c.where() << ": case " << c.name);
    const std::string op = c.attr("op");
    auto it = ops.find(op);
    if (it == ops.end()) {
      FAIL_CHECK("op '" << op << "' has no runner in test_reference.cpp");
      continue;
    }
    seen.insert(op);
    try {
      Inputs in(c);
      auto outs = it->second(c, in);
      check_case(c, in, outs, tol);
    } catch (const std::exception& e) {
      FAIL_CHECK("threw: " << e.what());
    }
  }
  for (const auto& [op, fn] : ops) {
    INFO(file << " has no case for op " << op);
    CHECK(seen.count(op) == 1);
  }
}

std::vector<Var> one(Var v) { return {std::move(v)}; }

}  // namespace

TEST_CASE("reference elementwise", "[reference]") {
  auto binary = [](Var (*f)(const Var&, const Var&)) {
    return [f](const RefCase&, const Inputs& in) { return one(f(in("a"), in("b"))); };
  };
  auto unary = [](Var (*f)(const Var&)) {
    return [f](const RefCase&, const Inputs& in) { return one(f(in("x"))); };
  };
  OpTable ops{
      {"add", binary(ag::add)},
      {"sub", binary(ag::sub)},
      {"mul", binary(ag::mul)},
      {"div", binary(ag::div)},
      {"mul_self", [](const RefCase&, const Inputs& in) { return one(ag::mul(in("x"), in("x"))); }},
      {"add_scalar",
       [](const RefCase& c, const Inputs& in) { return one(ag::add_scalar(in("x"), c.attr_float("s"))); }},
      {"mul_scalar",
       [](const RefCase& c, const Inputs& in) { return one(ag::mul_scalar(in("x"), c.attr_float("s"))); }},
      {"pow_scalar",
       [](const RefCase& c, const Inputs& in) { return one(ag::pow_scalar(in("x"), c.attr_float("p"))); }},
      {"neg", unary(ag::neg)},
      {"exp", unary(ag::exp)},
      {"log", unary(ag::log)},
      {"sqrt", unary(ag::sqrt)},
      {"rsqrt", unary(ag::rsqrt)},
      {"tanh", unary(ag::tanh)},
      {"erf", unary(ag::erf)},
      {"relu", unary(ag::relu)},
      {"gelu", unary(ag::gelu)},
      {"silu", unary(ag::silu)},
      {"dropout",
       [](const RefCase& c, const Inputs& in) {
         nl::Generator gen(0);
         return one(ag::dropout(in("x"), c.attr_float("p"), c.attr_bool("training"), gen));
       }},
  };
  run_family("elementwise.txt", ops, kElementwise);
}

TEST_CASE("reference reduce", "[reference]") {
  OpTable ops{
      {"sum", [](const RefCase& c,
                 const Inputs& in) { return one(ag::sum(in("x"), c.attr_ints("axes"), c.attr_bool("keepdim"))); }},
      {"mean", [](const RefCase& c,
                  const Inputs& in) { return one(ag::mean(in("x"), c.attr_ints("axes"), c.attr_bool("keepdim"))); }},
      {"max", [](const RefCase& c,
                 const Inputs& in) { return one(ag::max(in("x"), c.attr_ints("axes"), c.attr_bool("keepdim"))); }},
      {"var",
       [](const RefCase& c, const Inputs& in) {
         return one(ag::var(in("x"), c.attr_ints("axes"), c.attr_bool("keepdim"), (int)c.attr_int("correction")));
       }},
  };
  run_family("reduce.txt", ops, kReduction);
}

TEST_CASE("reference matmul", "[reference]") {
  OpTable ops{
      {"matmul",
       [](const RefCase& c, const Inputs& in) {
         return one(ag::matmul(in("a"), in("b"), c.attr_bool("trans_a"), c.attr_bool("trans_b")));
       }},
  };
  run_family("matmul.txt", ops, kReduction);
}

TEST_CASE("reference softmax", "[reference]") {
  OpTable ops{
      {"softmax", [](const RefCase&, const Inputs& in) { return one(ag::softmax(in("x"))); }},
      {"log_softmax", [](const RefCase&, const Inputs& in) { return one(ag::log_softmax(in("x"))); }},
      {"causal_mask", [](const RefCase&, const Inputs& in) { return one(ag::causal_mask(in("x"))); }},
      {"causal_softmax", [](const RefCase&, const Inputs& in) { return one(ag::softmax(ag::causal_mask(in("x")))); }},
  };
  run_family("softmax.txt", ops, kReduction);
}

TEST_CASE("reference attention", "[reference][attention]") {
  OpTable ops{
      {"attention",
       [](const RefCase& c, const Inputs& in) {
         return one(ag::attention(in("q"), in("k"), in("v"), c.attr_float("scale"), c.attr_bool("causal")));
       }},
  };
  run_family("attention.txt", ops, kReduction);
}

TEST_CASE("reference shape", "[reference]") {
  OpTable ops{
      {"reshape", [](const RefCase& c, const Inputs& in) { return one(ag::reshape(in("x"), c.attr_ints("shape"))); }},
      {"transpose", [](const RefCase& c,
                       const Inputs& in) { return one(ag::transpose(in("x"), c.attr_int("a"), c.attr_int("b"))); }},
      {"permute", [](const RefCase& c, const Inputs& in) { return one(ag::permute(in("x"), c.attr_ints("order"))); }},
      {"permute_reshape",
       [](const RefCase& c, const Inputs& in) {
         return one(ag::reshape(ag::permute(in("x"), c.attr_ints("order")), c.attr_ints("shape")));
       }},
      {"slice",
       [](const RefCase& c, const Inputs& in) {
         return one(ag::slice(in("x"), c.attr_int("axis"), c.attr_int("start"), c.attr_int("end"), c.attr_int("step")));
       }},
      {"squeeze", [](const RefCase& c, const Inputs& in) { return one(ag::squeeze(in("x"), c.attr_int("axis"))); }},
      {"unsqueeze", [](const RefCase& c, const Inputs& in) { return one(ag::unsqueeze(in("x"), c.attr_int("axis"))); }},
      {"expand", [](const RefCase& c, const Inputs& in) { return one(ag::expand(in("x"), c.attr_ints("shape"))); }},
      {"contiguous",
       [](const RefCase& c, const Inputs& in) {
         Var y = ag::contiguous(ag::transpose(in("x"), c.attr_int("a"), c.attr_int("b")));
         CHECK(y.value().is_contiguous());
         return one(y);
       }},
      {"concat",
       [](const RefCase& c, const Inputs& in) {
         std::vector<Var> parts;
         for (int64_t i = 0; i < c.attr_int("n"); ++i) parts.push_back(in("x" + std::to_string(i)));
         return one(ag::concat(parts, c.attr_int("axis")));
       }},
      {"split",
       [](const RefCase& c, const Inputs& in) { return ag::split(in("x"), c.attr_ints("sizes"), c.attr_int("axis")); }},
  };
  // Views and copies are exact; only expand's gradient (a sum) rounds.
  run_family("shape.txt", ops, kElementwise);
}

TEST_CASE("reference loss", "[reference]") {
  OpTable ops{
      {"cross_entropy",
       [](const RefCase& c, const Inputs& in) {
         return one(ag::cross_entropy(in("logits"), in.ints("targets"), (int)c.attr_int("ignore_index")));
       }},
  };
  run_family("loss.txt", ops, kReduction);
}

TEST_CASE("reference embedding", "[reference]") {
  OpTable ops{
      {"embedding", [](const RefCase&, const Inputs& in) { return one(ag::embedding(in("table"), in.ints("ids"))); }},
  };
  // Gradient rows are sums of at most a few upstream rows.
  run_family("embedding.txt", ops, kElementwise);
}

namespace {

OpTable norm_ops() {
  return OpTable{
      {"layer_norm",
       [](const RefCase& c, const Inputs& in) {
         return one(ag::layer_norm(in("x"), in("gamma"), in("beta"), c.attr_float("eps")));
       }},
      {"rms_norm",
       [](const RefCase& c, const Inputs& in) {
         Var beta = c.has("beta") ? in("beta") : Var();  // undefined: plain RMSNorm
         return one(ag::rms_norm(in("x"), in("gamma"), beta, c.attr_float("eps")));
       }},
      {"dyt",
       [](const RefCase&, const Inputs& in) { return one(ag::dyt(in("x"), in("alpha"), in("gamma"), in("beta"))); }},
      {"bhyt",
       [](const RefCase& c, const Inputs& in) {
         return one(ag::bhyt(in("x"), in("gamma"), in("lambda"), c.attr_float("kappa"), c.attr_float("eps")));
       }},
      {"bhyt_with_denom",
       [](const RefCase&, const Inputs& in) {
         return one(ag::bhyt_with_denom(in("x"), in("denom"), in("gamma"), in("lambda")));
       }},
  };
}

// The cases on hard inputs (large mean, tiny mean square) carry `attr inputs`.
bool hard_inputs(const RefCase& c) { return c.has_attr("inputs"); }

}  // namespace

TEST_CASE("reference norms", "[reference]") {
  run_family("norms.txt", norm_ops(), kReduction, [](const RefCase& c) { return !hard_inputs(c); });
}

TEST_CASE("reference norms on hard inputs: mean 1e3 times the spread, mean square below eps", "[reference]") {
  OpTable ops = norm_ops();
  ops.erase("bhyt_with_denom");  // its denominator is an input: no statistics to get wrong
  run_family("norms.txt", ops, kHardNorms, hard_inputs);
}

// The registered norm kinds (nn/norms/registry.h) by their --norm name: the kind's layer
// with the case's parameter values, forward and composite each against the file.
TEST_CASE("reference norm kinds, through the registry", "[reference]") {
  const auto cases = nl::test::load_reference("norm_kinds.txt");
  REQUIRE(!cases.empty());
  for (const auto& c : cases) {
    INFO(c.where() << ": case " << c.name);
    nl::NormConfig config;
    config.name = c.attr("op");
    for (const auto& [key, value] : c.attrs)
      if (key == "eps") config.eps = c.attr_float(key);
      else if (key != "op") config.set(key, c.attr_float(key));
    const Tensor& x = c.tensor("x");
    auto norm = nl::make_norm(config, x.size(-1));
    std::set<std::string> used = {"x", "out", "grad_out", "grad_x"};
    for (auto [name, p] : norm->named_parameters()) {
      INFO("parameter " << name);
      REQUIRE(c.has(name));
      REQUIRE(c.has("grad_" + name));
      p.value().copy_from(c.tensor(name));
      used.insert({name, "grad_" + name});
    }
    for (const auto& [role, t] : c.tensors) {
      INFO("the case's tensor " << role << " is no input or parameter of the layer");
      CHECK(used.count(role) == 1);
    }
    for (bool fused : {true, false}) {
      INFO((fused ? "forward" : "composite"));
      norm->zero_grad();
      Var xv(x, true);
      Var y = fused ? norm->forward(xv) : norm->composite(xv);
      CHECK_CLOSE(y.value(), c.tensor("out"), kReduction.rtol, kReduction.atol);
      y.backward(c.tensor("grad_out"));
      CHECK_CLOSE(xv.grad(), c.tensor("grad_x"), kReduction.rtol, kReduction.atol);
      for (const auto& [name, p] : norm->named_parameters()) {
        INFO("gradient of " << name);
        CHECK_CLOSE(p.grad(), c.tensor("grad_" + name), kReduction.rtol, kReduction.atol);
      }
    }
  }
}

TEST_CASE("reference recipes: bhyt's code form, dyt without beta, rope", "[reference]") {
  OpTable ops{
      {"bhyt_code",
       [](const RefCase& c, const Inputs& in) {
         return one(ag::bhyt(in("x"), in("gamma"), in("lambda"), c.attr_float("kappa"), c.attr_float("eps"), false));
       }},
      {"dyt_no_beta",
       [](const RefCase&, const Inputs& in) { return one(ag::dyt(in("x"), in("alpha"), in("gamma"), Var())); }},
      {"rope",
       [](const RefCase& c, const Inputs& in) {
         return one(ag::rope(in("x"), c.attr_int("head_dim"), c.attr_int("rotated"), c.attr_int("first"),
                             c.attr_float("base")));
       }},
  };
  run_family("recipes.txt", ops, kReduction);
}

TEST_CASE("reference files: a malformed file is rejected naming its line", "[reference]") {
  namespace fs = std::filesystem;
  const std::string path =
      (fs::temp_directory_path() / ("normlab_bad_reference_" + std::to_string(::getpid()) + ".txt")).string();
  auto write = [&](const std::string& text) {
    std::ofstream out(path);
    out << text;
  };
  using Catch::Matchers::Contains;

  // Line 5 holds 3 values for a (2, 2) tensor.
  write("normlab-reference 1\ncase a\nattr op add\ntensor x float32 2 2 2\n1 2 3\nend\n");
  CHECK_THROWS_AS(nl::test::load_reference(path), nl::Error);
  CHECK_THROWS_WITH(nl::test::load_reference(path), Contains(path + ":5:") && Contains("needs 4 values"));

  write("normlab-reference 2\n");
  CHECK_THROWS_WITH(nl::test::load_reference(path), Contains(path + ":1:") && Contains("version 2"));

  write("normlab-reference 1\ncase a\nattr op add\ntensor x float32 1 2\n1 two\nend\n");
  CHECK_THROWS_WITH(nl::test::load_reference(path), Contains(path + ":5:") && Contains("'two'"));

  write("normlab-reference 1\n# comment\ncase a\nattr op add\nbogus line\nend\n");
  CHECK_THROWS_WITH(nl::test::load_reference(path), Contains(path + ":5:") && Contains("bogus line"));

  write("normlab-reference 1\ncase a\nattr op add\n");
  CHECK_THROWS_WITH(nl::test::load_reference(path), Contains(path + ":2:") && Contains("not closed"));

  // A well-formed file reads back exactly, inf included.
  write("normlab-reference 1\ncase ok\nattr op add\nattr axes [0,-1]\ntensor x float32 2 1 3\n"
        "0.100000001 -inf 3\ntensor i int32 0\n-7\nend\n");
  auto cases = nl::test::load_reference(path);
  REQUIRE(cases.size() == 1);
  CHECK(cases[0].attr_ints("axes") == std::vector<int64_t>{0, -1});
  CHECK(cases[0].tensor("x").to_vector() == std::vector<float>{0.1f, -INFINITY, 3.0f});
  CHECK(cases[0].tensor("i").shape().empty());
  CHECK(cases[0].tensor("i").to_ints() == std::vector<int32_t>{-7});
  std::remove(path.c_str());

  CHECK_THROWS_WITH(nl::test::load_reference("no_such_file.txt"), Contains("not found"));
}
