// The fused linear op (autograd/linear.cpp, tensor/cpu/linear.cpp) against the composite
// it replaces, gelu(add(matmul(x, W^T), b)): the output and all three gradients must be
// the same bits, since the fused kernels do the same float operations in the same order;
// on odd shapes, on products cut into tiles with partial last rows and columns (where the
// epilogue must find each tile's bias columns), with an empty inner dimension, with a
// transposed input view, and at 1, 2 and 3 threads. Then gradcheck against finite
// differences, and the graph: one recorded op per Linear, no gelu or add nodes in a GELU MLP.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/attention.h"
#include "nn/block.h"
#include "nn/norms/norms.h"
#include "tensor/allocator.h"
#include "tensor/cpu/gemm.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "tests/test_util.h"

using namespace nl;

namespace {

// "" when a and b hold the same bits, else where they first differ.
std::string bit_difference(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return "shapes " + to_string(a.shape()) + " and " + to_string(b.shape());
  const std::vector<float> x = a.contiguous().to_vector(), y = b.contiguous().to_vector();
  for (size_t i = 0; i < x.size(); ++i)
    if (std::memcmp(&x[i], &y[i], sizeof(float)) != 0) {
      std::ostringstream os;
      os.precision(9);
      os << "element " << i << ": " << x[i] << " vs " << y[i];
      return os.str();
    }
  return "";
}

#define CHECK_SAME_BITS(a, b)                          \
  do {                                                 \
    const std::string _diff = bit_difference((a), (b)); \
    INFO(#a " vs " #b ": " << _diff);                  \
    CHECK(_diff.empty());                              \
  } while (0)

struct Result {
  Tensor out, dx, dw, db;
};

// act(x W^T + b) and its gradients for the upstream gradient dout, fused or composed.
Result run(const Tensor& x, const Tensor& w, const Tensor& b, Activation act, const Tensor& dout, bool fused) {
  Var vx(x, true), vw(w, true), vb = b.defined() ? Var(b, true) : Var();
  Var y;
  if (fused) {
    y = ag::linear(vx, vw, vb, act);
  } else {
    y = ag::matmul(vx, vw, false, true);
    if (vb.defined()) y = ag::add(y, vb);
    if (act == Activation::Gelu) y = ag::gelu(y);
  }
  y.backward(dout);
  return {y.value(), vx.grad(), vw.grad(), vb.defined() ? vb.grad() : Tensor()};
}

void check_same(const Result& got, const Result& want) {
  CHECK_SAME_BITS(got.out, want.out);
  CHECK_SAME_BITS(got.dx, want.dx);
  CHECK_SAME_BITS(got.dw, want.dw);
  if (want.db.defined()) CHECK_SAME_BITS(got.db, want.db);
}

// x (M, K), W (N, K), b (N); `x_view`: x given as the transpose of a (K, M) tensor
void check_linear_against_composite(Generator& gen, int64_t M, int64_t N, int64_t K, bool x_view = false) {
  const Tensor x = x_view ? gen.normal({K, M}).transpose(0, 1) : gen.normal({M, K});
  const Tensor w = gen.normal({N, K}, 0.0f, 0.3f), b = gen.normal({N}), dout = gen.normal({M, N});
  for (Activation act : {Activation::None, Activation::Gelu})
    for (bool bias : {true, false}) {
      if (act == Activation::None && !bias) continue;  // a plain matmul
      INFO("M N K = " << M << " " << N << " " << K << (bias ? ", bias" : "")
                      << (act == Activation::Gelu ? ", GELU" : "") << (x_view ? ", x a transposed view" : ""));
      const Tensor bb = bias ? b : Tensor();
      const Result want = run(x, w, bb, act, dout, false);
      for (int threads : {1, 2, 3}) {
        INFO(threads << " threads");
        ScopedThreads scope(threads);
        check_same(run(x, w, bb, act, dout, true), want);
      }
    }
}

}  // namespace

TEST_CASE("linear op: the bits of matmul + add + gelu, values and gradients, odd shapes", "[grad][linear]") {
  Generator gen(90);
  check_linear_against_composite(gen, 1, 1, 1);
  check_linear_against_composite(gen, 3, 5, 7);
  check_linear_against_composite(gen, 37, 129, 65);
  check_linear_against_composite(gen, 64, 512, 128);
  check_linear_against_composite(gen, 9, 70, 33, true);
  // GEMM=onednn: the forward's matmul-primitive path (K >= 256), also with few rows and two
  // column tiles: the kind of shape for which oneDNN's plan may split K among threads, were
  // a primitive made with more than one (tensor/cpu/gemm.cpp, on_one_thread)
  check_linear_against_composite(gen, 130, 48, 512);
  check_linear_against_composite(gen, 32, 1030, 512);
  check_linear_against_composite(gen, 3, 4, 0);  // no inner dimension: out = act(b)
}

TEST_CASE("linear op: the bits of the composite where the product is cut into ragged tiles", "[grad][linear]") {
  Generator gen(91);
  // forward (M, N, K) and the two products of the backward, each large enough to be cut
  for (auto [M, N, K] : std::vector<std::array<int64_t, 3>>{{1000, 300, 200}, {1024, 515, 129}, {700, 1030, 96}}) {
    INFO("M N K = " << M << " " << N << " " << K);
    const GemmTile t = gemm_tile(M, N, K);
    REQUIRE((t.rows < M || t.cols < N));  // the epilogue runs on more than one tile
    CHECK((M % t.rows != 0 || N % t.cols != 0));  // with a partial last row or column of tiles
    check_linear_against_composite(gen, M, N, K);
  }
}

TEST_CASE("linear op gradcheck: bias, bias + GELU, GELU alone, views", "[grad][linear]") {
  Generator gen(92);
  for (Activation act : {Activation::None, Activation::Gelu}) {
    INFO((act == Activation::Gelu ? "GELU" : "no activation"));
    auto with_bias = [act](const std::vector<Var>& v) { return ag::linear(v[0], v[1], v[2], act); };
    CHECK_GRADCHECK(gradcheck(with_bias, {gen.normal({3, 5}), gen.normal({4, 5}), gen.normal({4})}));
    CHECK_GRADCHECK(gradcheck(with_bias, {gen.normal({1, 1}), gen.normal({1, 1}), gen.normal({1})}));
    CHECK_GRADCHECK(gradcheck(with_bias, {gen.normal({5, 3}).transpose(0, 1), gen.normal({6, 5}),
                                          gen.normal({12}).slice(0, 0, 12, 2)}));
  }
  auto gelu_only = [](const std::vector<Var>& v) { return ag::linear(v[0], v[1], Var(), Activation::Gelu); };
  CHECK_GRADCHECK(gradcheck(gelu_only, {gen.normal({4, 3}), gen.normal({7, 3})}));
}

TEST_CASE("linear op: refuses shapes that do not fit, naming them", "[grad][linear]") {
  Generator gen(93);
  Var x(gen.normal({3, 5}), true), w(gen.normal({4, 6}), true), b(gen.normal({5}), true);
  CHECK_THROWS_WITH(ag::linear(x, w, b), Catch::Contains("linear: needs x (M, K) and w (N, K)"));
  Var w5(gen.normal({4, 5}), true);
  CHECK_THROWS_WITH(ag::linear(x, w5, b),
                    Catch::Contains("linear: the bias float32 (5") && Catch::Contains("is not (4) for the weight"));
  // a residual must have the output's shape, and is never added after a GELU
  Var b4(gen.normal({4}), true), r(gen.normal({3, 5}), true), r_ok(gen.normal({3, 4}), true);
  CHECK_THROWS_WITH(ag::linear(x, w5, b4, Activation::None, r),
                    Catch::Contains("linear: the residual float32 (3, 5") && Catch::Contains("output's shape (3, 4)"));
  CHECK_THROWS_WITH(ag::linear(x, w5, b4, Activation::Gelu, r_ok), Catch::Contains("cannot follow a GELU"));
}

namespace {

int count_ops(const Var& v, const std::string& op) {
  std::vector<const VarImpl*> stack{v.impl().get()}, seen;
  int n = 0;
  while (!stack.empty()) {
    const VarImpl* t = stack.back();
    stack.pop_back();
    if (!t || !t->node || std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
    seen.push_back(t);
    n += t->node->op == op;
    for (const auto& in : t->node->inputs) stack.push_back(in.get());
  }
  return n;
}

}  // namespace

TEST_CASE("a GELU MLP records two linear ops and no separate bias add or GELU pass", "[grad][linear]") {
  Generator gen(94);
  MLP mlp(8, gen, 0.02f, false, "gelu", true);
  Var x(gen.normal({2, 3, 8}), true);
  Var y = mlp.forward(x);
  CHECK(count_ops(y, "linear") == 2);
  CHECK(count_ops(y, "gelu") == 0);
  CHECK(count_ops(y, "add") == 0);
  CHECK(count_ops(y, "matmul") == 0);
  // the same bits as the layers composed from matmul, add and gelu
  auto composed = [](const Linear& l, const Var& in) {
    Var rows = ag::reshape(in, {-1, l.in_features});
    return ag::add(ag::matmul(rows, l.weight, false, true), l.bias);
  };
  Var h = ag::gelu(composed(*mlp.fc, x));
  Var want = ag::reshape(composed(*mlp.proj, h), {2, 3, 8});
  CHECK_SAME_BITS(y.value(), want.value());
}

TEST_CASE("a GELU MLP's graph holds one (rows, 4C) and one (rows, C) tensor fewer than the composite's",
          "[grad][linear]") {
  // the composite keeps each product's output before its bias add alive in the graph (add's
  // input); the fused op never makes it
  Generator gen(95);
  const int64_t dim = 32, rows = 256;
  MLP mlp(dim, gen, 0.02f, false, "gelu", true);
  Var x(gen.normal({rows, dim}), true);
  auto held_by = [&](auto forward) {
    const int64_t before = allocator_stats(Device::CPU).in_use_bytes;
    Var y = forward();
    return allocator_stats(Device::CPU).in_use_bytes - before;
  };
  const int64_t fused = held_by([&] { return mlp.forward(x); });
  const int64_t composite = held_by([&] {
    Var h = ag::gelu(ag::add(ag::matmul(x, mlp.fc->weight, false, true), mlp.fc->bias));
    return ag::add(ag::matmul(h, mlp.proj->weight, false, true), mlp.proj->bias);
  });
  INFO("bytes held by the graph: fused " << fused << ", composite " << composite);
  CHECK(composite - fused >= rows * (4 * dim + dim) * (int64_t)sizeof(float));
}

TEST_CASE("a pre-LN block adds its residuals in the projections' epilogues, with the bits of the adds",
          "[grad][linear]") {
  // Block::forward hands x to the attention's and the MLP's output projection (r + y W^T + b
  // in one op); the same block written out with the projections alone and ag::add must give
  // the same output and the same gradients for the input and every parameter, with biases
  // and without, with the GELU and the SwiGLU MLP
  for (const char* mlp : {"gelu", "swiglu"})
    for (bool bias : {true, false}) {
      INFO(mlp << (bias ? ", biases" : ", no biases"));
      Generator gen(96);
      BlockConfig c;
      c.dim = 16, c.heads = 2, c.norm.name = "ln", c.layers = 2, c.mlp = mlp, c.bias = bias;
      Block block(c, gen);
      for (auto& [name, p] : block.named_parameters()) p.value().copy_from(gen.normal(p.value().shape(), 0.0f, 0.3f));
      const Tensor x0 = gen.normal({2, 5, 16}), dout = gen.normal({2, 5, 16});
      auto grads = [&](Var& x, Var y) {
        for (auto& [name, p] : block.named_parameters()) p.grad() = Tensor();
        y.backward(dout);
        std::vector<Tensor> out{y.value(), x.grad()};
        for (auto& [name, p] : block.named_parameters()) out.push_back(p.grad());
        return out;
      };
      Var xf(x0, true);
      const std::vector<Tensor> fused = grads(xf, block.forward(xf));
      Var xc(x0, true);
      Var h = ag::add(xc, block.attn->forward(block.ln1->forward(xc)));
      const std::vector<Tensor> composite = grads(xc, ag::add(h, block.mlp->forward(block.ln2->forward(h))));
      REQUIRE(fused.size() == composite.size());
      for (size_t i = 0; i < fused.size(); ++i) {
        INFO("tensor " << i << " (0: output, 1: input gradient, then the parameters' gradients)");
        CHECK_SAME_BITS(fused[i], composite[i]);
      }
    }
}

// Kept to this file: the test folder is also compiled as one translation unit.
#undef CHECK_SAME_BITS
