// Tests of the layers in nn/: Linear (plain and CBWC) against hand computations, the
// GPT-2 initialisation statistics, attention and the MLP against plain loops, causality,
// the bhyt block's site-2 approximation, gradients of a tiny GPT for every norm by
// finite differences, and the LN / CBWC equivalence of NORMS.md (same loss, same
// gradients, same AdamW trajectory).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/gpt.h"
#include "tests/param_gradcheck.h"
#include "tests/nn/naive_layers.h"
#include "tests/nn/bhyt_fixtures.h"
#include "tests/nn/block_config.h"
#include "tests/nn/model_fixtures.h"
#include "tests/test_util.h"
#include "train/optim/optim.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;

namespace {

GPTConfig tiny_gpt_config(const std::string& norm) { return gpt_config(16, 1, 8, 2, 4, norm); }

// wte and wpe N(0, 0.7), the other weights N(0, 0.25) (model_fixtures.h)
void scramble_gpt(GPT& model, Generator& gen) {
  scramble_parameters(
      model, gen, [](const std::string& name) { return name.rfind("wte", 0) == 0 || name.rfind("wpe", 0) == 0; },
      0.25f);
}

double gpt_loss_of(const GPT& model, const Tensor& ids, const Tensor& targets) {
  NoGradGuard ng;
  return model.loss(ids, targets).item();
}

struct Stats {
  double mean = 0, std = 0;
  int64_t n = 0;
};
Stats stats_of(const Tensor& t) {
  Stats s;
  auto v = to_d(t);
  s.n = (int64_t)v.size();
  for (double x : v) s.mean += x;
  s.mean /= (double)s.n;
  for (double x : v) s.std += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(s.std / (double)s.n);
  return s;
}

}  // namespace

// ------------------------------------------------------------------------- Linear

TEST_CASE("linear forward equals a hand computation", "[nn]") {
  Generator gen(1);
  Linear lin(3, 2, true, gen);
  lin.weight.value().copy_from(Tensor::from_vector({1, 2, 3, -1, 0.5f, 2}, {2, 3}));
  lin.bias.value().copy_from(Tensor::from_vector({0.5f, -1}, {2}));
  // row 0: x = (1, 0, -1):   1 + 0 - 3 + 0.5 = -1.5;   -1 + 0 - 2 - 1 = -4
  // row 1: x = (2, 1, 0.5):  2 + 2 + 1.5 + 0.5 = 6;    -2 + 0.5 + 1 - 1 = -1.5
  Var x(Tensor::from_vector({1, 0, -1, 2, 1, 0.5f}, {2, 3}));
  CHECK_CLOSE(lin.forward(x).value(), Tensor::from_vector({-1.5f, -4, 6, -1.5f}, {2, 2}), 1e-6, 1e-6);
  // leading dims are kept: (2, 1, 3) -> (2, 1, 2)
  Var x3(Tensor::from_vector({1, 0, -1, 2, 1, 0.5f}, {2, 1, 3}));
  CHECK_CLOSE(lin.forward(x3).value(), Tensor::from_vector({-1.5f, -4, 6, -1.5f}, {2, 1, 2}), 1e-6, 1e-6);
  // an input with the wrong width is an error
  CHECK_THROWS_AS(lin.forward(Var(Tensor::zeros({2, 4}))), Error);

  Linear nob(3, 2, false, gen);
  CHECK_FALSE(nob.bias.defined());
  CHECK(nob.named_parameters().size() == 1);
  nob.weight.value().copy_from(Tensor::from_vector({1, 2, 3, -1, 0.5f, 2}, {2, 3}));
  CHECK_CLOSE(nob.forward(x).value(), Tensor::from_vector({-2, -3, 5.5f, -0.5f}, {2, 2}), 1e-6, 1e-6);
}

TEST_CASE("linear gradients equal x^T g and the column sums of g", "[nn]") {
  Generator gen(2);
  Linear lin(5, 4, true, gen, 0.5f);
  Tensor xv = gen.normal({3, 5}), r = gen.normal({3, 4});
  Var x(xv, true);
  lin.forward(x).backward(r);
  // dL/dW[o][i] = sum_n r[n][o] x[n][i];  dL/db[o] = sum_n r[n][o];  dL/dx = r W
  auto X = to_d(xv), R = to_d(r), W = to_d(lin.weight.value());
  std::vector<double> gW(20, 0), gb(4, 0), gx(15, 0);
  for (int n = 0; n < 3; ++n)
    for (int o = 0; o < 4; ++o) {
      gb[o] += R[n * 4 + o];
      for (int i = 0; i < 5; ++i) {
        gW[o * 5 + i] += R[n * 4 + o] * X[n * 5 + i];
        gx[n * 5 + i] += R[n * 4 + o] * W[o * 5 + i];
      }
    }
  CHECK_CLOSE(lin.weight.grad(), from_d(gW, {4, 5}), 1e-5, 1e-6);
  CHECK_CLOSE(lin.bias.grad(), from_d(gb, {4}), 1e-5, 1e-6);
  CHECK_CLOSE(x.grad(), from_d(gx, {3, 5}), 1e-5, 1e-6);
}

TEST_CASE("linear CBWC: V has zero-sum columns, c sums to zero, outputs are zero-mean", "[nn]") {
  Generator gen(3);
  const int64_t in = 6, out = 7;
  Linear lin(in, out, true, gen, 0.5f, /*centred=*/true);
  REQUIRE(lin.centred());
  // a weight with a large common offset per column, and a nonzero bias
  Tensor W = add_scalar(gen.normal({out, in}), 3.0f);
  lin.weight.value().copy_from(W);
  lin.bias.value().copy_from(add_scalar(gen.normal({out}), -2.0f));

  Tensor V = lin.effective_weight().value(), c = lin.effective_bias().value();
  // V by hand: each column minus its mean over the outputs
  auto w = to_d(W), b = to_d(lin.bias.value());
  std::vector<double> v_ref(out * in), c_ref(out);
  for (int64_t i = 0; i < in; ++i) {
    double m = 0;
    for (int64_t o = 0; o < out; ++o) m += w[o * in + i];
    m /= (double)out;
    for (int64_t o = 0; o < out; ++o) v_ref[o * in + i] = w[o * in + i] - m;
  }
  double bm = 0;
  for (double x : b) bm += x;
  bm /= (double)out;
  for (int64_t o = 0; o < out; ++o) c_ref[o] = b[o] - bm;
  CHECK_CLOSE(V, from_d(v_ref, {out, in}), 1e-5, 1e-6);
  CHECK_CLOSE(c, from_d(c_ref, {out}), 1e-5, 1e-6);

  // columns of V sum to 0, relative to the column's size
  auto vv = to_d(V);
  for (int64_t i = 0; i < in; ++i) {
    double s = 0, a = 0;
    for (int64_t o = 0; o < out; ++o) {
      s += vv[o * in + i];
      a += std::fabs(w[o * in + i]);
    }
    INFO("column " << i);
    CHECK(std::fabs(s) <= 1e-6 * a);
  }
  double cs = 0, ca = 0;
  for (double x : to_d(c)) cs += x;
  for (double x : b) ca += std::fabs(x);
  CHECK(std::fabs(cs) <= 1e-6 * ca);

  // idempotent: centring V again gives V
  lin.weight.value().copy_from(V);
  lin.bias.value().copy_from(c);
  CHECK_CLOSE(lin.effective_weight().value(), V, 1e-6, 1e-6);
  CHECK_CLOSE(lin.effective_bias().value(), c, 1e-6, 1e-6);
  lin.weight.value().copy_from(W);
  lin.bias.value().copy_from(from_d(b, {out}));

  // every output row is zero-mean, for inputs far from zero-mean too
  Tensor x = add_scalar(gen.normal({2, 5, in}, 0.0f, 2.0f), 10.0f);
  Tensor y = lin.forward(Var(x)).value();
  auto yv = to_d(y);
  auto y_ref = linear_naive(to_d(x), 10, in, v_ref, c_ref, out);
  CHECK_CLOSE(y, from_d(y_ref, {2, 5, out}), 1e-5, 1e-4);
  for (int64_t r = 0; r < 10; ++r) {
    double s = 0, a = 0;
    for (int64_t o = 0; o < out; ++o) {
      s += yv[r * out + o];
      a += std::fabs(yv[r * out + o]);
    }
    INFO("row " << r);
    CHECK(std::fabs(s / out) <= 1e-5 * (a / out));
  }

  // switched off, it is an ordinary linear
  lin.set_centred(false);
  CHECK(lin.effective_weight().value().to_vector() == W.to_vector());
}

TEST_CASE("linear CBWC: gradients flow through the projection", "[nn]") {
  // L = sum(y * r), y = x V^T + c, V = P W, P = I - 11^T/m (symmetric):
  //   dL/dW = P (r^T x)   (each column of r^T x minus its mean)
  //   dL/db = P (sum_n r_n)
  Generator gen(4);
  const int64_t in = 3, out = 5, N = 4;
  Linear lin(in, out, true, gen, 0.7f, true);
  Tensor xv = gen.normal({N, in}), r = gen.normal({N, out});
  lin.forward(Var(xv)).backward(r);
  auto X = to_d(xv), R = to_d(r);
  std::vector<double> g(out * in, 0), gb(out, 0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < out; ++o) {
      gb[o] += R[n * out + o];
      for (int64_t i = 0; i < in; ++i) g[o * in + i] += R[n * out + o] * X[n * in + i];
    }
  for (int64_t i = 0; i < in; ++i) {
    double m = 0;
    for (int64_t o = 0; o < out; ++o) m += g[o * in + i];
    for (int64_t o = 0; o < out; ++o) g[o * in + i] -= m / out;
  }
  double mb = 0;
  for (double v : gb) mb += v;
  for (double& v : gb) v -= mb / out;
  CHECK_CLOSE(lin.weight.grad(), from_d(g, {out, in}), 1e-5, 1e-6);
  CHECK_CLOSE(lin.bias.grad(), from_d(gb, {out}), 1e-5, 1e-6);
}

// ------------------------------------------------------------------ initialisation

TEST_CASE("gpt initialisation follows GPT-2: N(0, 0.02), projections N(0, 0.02/sqrt(2L)), biases 0, gains 1",
          "[nn]") {
  for (const std::string& norm : kInitNorms) {
    for (int64_t L : {2, 6}) {
      GPTConfig c = gpt_config(256, L, L == 2 ? 64 : 32, 4, 64, norm);
      c.norm.set("dyt-alpha0", 0.75f).set("bhyt-lambda-attn", 1.25f).set("bhyt-lambda-mlp", 1.25f);
      Generator gen(100 + L);
      GPT model(c, gen);
      for (const auto& [name, p] : model.named_parameters()) {
        INFO("norm " << norm << ", L " << L << ": " << name << " " << to_string(p.shape()));
        const Tensor& v = p.value();
        const bool is_norm = name.rfind("ln_f", 0) == 0 || name.find(".ln1.") != std::string::npos ||
                             name.find(".ln2.") != std::string::npos;
        if (is_norm) {
          const std::string leaf = name.substr(name.rfind('.') + 1);
          float want = leaf == "weight" ? 1.0f : leaf == "alpha" ? 0.75f : leaf == "lambda" ? 1.25f : 0.0f;
          for (float x : v.to_vector()) CHECK(x == want);
          continue;
        }
        if (v.dim() == 1) {  // biases of linears
          for (float x : v.to_vector()) CHECK(x == 0.0f);
          continue;
        }
        const bool proj = name.find(".proj.weight") != std::string::npos;
        const double sigma = proj ? 0.02 / std::sqrt(2.0 * (double)L) : 0.02;
        Stats s = stats_of(v);
        // 5 standard errors: the mean's is sigma/sqrt(n), the std's about sigma/sqrt(2n)
        CHECK(std::fabs(s.mean) <= 5 * sigma / std::sqrt((double)s.n));
        CHECK(std::fabs(s.std - sigma) <= 5 * sigma / std::sqrt(2.0 * (double)s.n));
      }
    }
  }
}

TEST_CASE("gpt initialisation draws normals: two thirds within one sigma", "[nn]") {
  // P(|z| < 1) = 0.6827 for a normal (0.577 for a uniform of the same std)
  Generator gen(7);
  GPT model(gpt_config(256, 1, 64, 4, 16, "ln"), gen);
  auto v = to_d(model.wte->weight.value());
  int64_t inside = 0;
  for (double x : v) inside += std::fabs(x) < 0.02;
  const double frac = (double)inside / (double)v.size(), se = std::sqrt(0.6827 * 0.3173 / (double)v.size());
  CHECK(std::fabs(frac - 0.6827) <= 5 * se);
}

// ------------------------------------------------------------------ attention, MLP

TEST_CASE("attention forward equals plain loops (causal and not)", "[nn]") {
  const int64_t B = 2, T = 5, C = 8, H = 2;
  for (bool causal : {true, false}) {
    INFO("causal " << causal);
    Generator gen(11);
    SelfAttention attn(C, H, causal, gen, 0.02f, false);
    // weights large enough that the softmax is far from uniform, biases nonzero
    attn.qkv->weight.value().copy_from(gen.normal({3 * C, C}, 0.0f, 0.6f));
    attn.qkv->bias.value().copy_from(gen.normal({3 * C}, 0.0f, 0.3f));
    attn.proj->weight.value().copy_from(gen.normal({C, C}, 0.0f, 0.4f));
    attn.proj->bias.value().copy_from(gen.normal({C}, 0.0f, 0.3f));
    Tensor x = gen.normal({B, T, C});
    Tensor y = attn.forward(Var(x)).value();
    auto ref = attention_naive(to_d(x), B, T, C, H, causal, to_d(attn.qkv->weight.value()),
                               to_d(attn.qkv->bias.value()), to_d(attn.proj->weight.value()),
                               to_d(attn.proj->bias.value()));
    CHECK_CLOSE(y, from_d(ref, {B, T, C}), 1e-5, 1e-5);
    // a single token attends only to itself
    Tensor x1 = gen.normal({1, 1, C});
    auto ref1 = attention_naive(to_d(x1), 1, 1, C, H, causal, to_d(attn.qkv->weight.value()),
                                to_d(attn.qkv->bias.value()), to_d(attn.proj->weight.value()),
                                to_d(attn.proj->bias.value()));
    CHECK_CLOSE(attn.forward(Var(x1)).value(), from_d(ref1, {1, 1, C}), 1e-5, 1e-5);
  }
}

TEST_CASE("attention is causal: a later input never changes an earlier output", "[nn]") {
  const int64_t B = 2, T = 6, C = 8;
  Generator gen(12);
  SelfAttention attn(C, 2, true, gen, 0.02f, false);
  attn.qkv->weight.value().copy_from(gen.normal({3 * C, C}, 0.0f, 0.6f));
  Tensor x = gen.normal({B, T, C});
  Tensor y = attn.forward(Var(x)).value();
  for (int64_t t = 0; t < T; ++t) {
    Tensor x2 = x.clone();
    for (int64_t e = 0; e < C; ++e) x2.set({1, t, e}, x2.at({1, t, e}) + 3.0f);
    Tensor y2 = attn.forward(Var(x2)).value();
    INFO("changed position " << t);
    CHECK_CLOSE(y2.slice(1, 0, t), y.slice(1, 0, t), 0, 1e-6);
    CHECK_CLOSE(y2.slice(0, 0, 1), y.slice(0, 0, 1), 0, 1e-6);  // the other sequence
    double changed = 0;
    for (int64_t s = t; s < T; ++s)
      for (int64_t e = 0; e < C; ++e)
        changed = std::max(changed, (double)std::fabs(y2.at({1, s, e}) - y.at({1, s, e})));
    CHECK(changed > 1e-4);
  }
}

TEST_CASE("attention and mlp gradients with respect to the input (gradcheck)", "[nn]") {
  Generator gen(13);
  SelfAttention attn(8, 2, true, gen, 0.02f, false);
  attn.qkv->weight.value().copy_from(gen.normal({24, 8}, 0.0f, 0.5f));
  attn.proj->weight.value().copy_from(gen.normal({8, 8}, 0.0f, 0.5f));
  CHECK_GRADCHECK(gradcheck([&](const std::vector<Var>& v) { return attn.forward(v[0]); }, {gen.normal({2, 3, 8})}));
  MLP mlp(8, gen, 0.02f, false);
  mlp.fc->weight.value().copy_from(gen.normal({32, 8}, 0.0f, 0.5f));
  mlp.proj->weight.value().copy_from(gen.normal({8, 32}, 0.0f, 0.3f));
  CHECK_GRADCHECK(gradcheck([&](const std::vector<Var>& v) { return mlp.forward(v[0]); }, {gen.normal({2, 3, 8})}));
}

TEST_CASE("mlp forward equals plain loops: fc, GELU (tanh form), proj", "[nn]") {
  const int64_t C = 6, N = 7;
  Generator gen(14);
  MLP mlp(C, gen, 0.02f, false);
  REQUIRE(mlp.fc->out_features == 4 * C);
  REQUIRE(mlp.proj->in_features == 4 * C);
  mlp.fc->weight.value().copy_from(gen.normal({4 * C, C}, 0.0f, 0.7f));
  mlp.fc->bias.value().copy_from(gen.normal({4 * C}, 0.0f, 0.5f));
  mlp.proj->weight.value().copy_from(gen.normal({C, 4 * C}, 0.0f, 0.3f));
  mlp.proj->bias.value().copy_from(gen.normal({C}, 0.0f, 0.3f));
  Tensor x = gen.normal({1, N, C});
  auto h = linear_naive(to_d(x), N, C, to_d(mlp.fc->weight.value()), to_d(mlp.fc->bias.value()), 4 * C);
  for (double& v : h) v = gelu_naive(v);
  auto y = linear_naive(h, N, 4 * C, to_d(mlp.proj->weight.value()), to_d(mlp.proj->bias.value()), C);
  CHECK_CLOSE(mlp.forward(Var(x)).value(), from_d(y, {1, N, C}), 1e-5, 1e-5);
}

double silu_naive(double x) { return x / (1.0 + std::exp(-x)); }

TEST_CASE("mlp swiglu forward equals plain loops: fc halves g and u, silu(g) * u, proj", "[nn][swiglu]") {
  const int64_t C = 6, N = 7, H = 16;  // H = round(8 * 6 / 3)
  Generator gen(15);
  MLP mlp(C, gen, 0.02f, false, "swiglu");
  REQUIRE(mlp.hidden == H);
  REQUIRE(mlp.fc->out_features == 2 * H);
  REQUIRE(mlp.proj->in_features == H);
  mlp.fc->weight.value().copy_from(gen.normal({2 * H, C}, 0.0f, 0.7f));
  mlp.fc->bias.value().copy_from(gen.normal({2 * H}, 0.0f, 0.5f));
  mlp.proj->weight.value().copy_from(gen.normal({C, H}, 0.0f, 0.3f));
  mlp.proj->bias.value().copy_from(gen.normal({C}, 0.0f, 0.3f));
  Tensor x = gen.normal({1, N, C});
  auto a = linear_naive(to_d(x), N, C, to_d(mlp.fc->weight.value()), to_d(mlp.fc->bias.value()), 2 * H);
  std::vector<double> h(N * H);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < H; ++j) h[n * H + j] = silu_naive(a[n * 2 * H + j]) * a[n * 2 * H + H + j];
  auto y = linear_naive(h, N, H, to_d(mlp.proj->weight.value()), to_d(mlp.proj->bias.value()), C);
  CHECK_CLOSE(mlp.forward(Var(x)).value(), from_d(y, {1, N, C}), 1e-5, 1e-5);
  // hidden sizes round 8C/3 to the nearest integer: about the GELU MLP's 8 C^2 weights
  Generator g2(1);
  CHECK(MLP(128, g2, 0.02f, false, "swiglu").hidden == 341);
  CHECK(MLP(8, g2, 0.02f, false, "swiglu").hidden == 21);
  CHECK_THROWS_WITH(MLP(8, g2, 0.02f, false, "relu"), Catch::Contains("unknown MLP kind 'relu'"));
}

TEST_CASE("mlp swiglu gradients with respect to the input and every parameter (gradcheck)", "[nn][swiglu]") {
  Generator gen(16);
  MLP mlp(8, gen, 0.02f, false, "swiglu");
  mlp.fc->weight.value().copy_from(gen.normal({2 * mlp.hidden, 8}, 0.0f, 0.5f));
  mlp.fc->bias.value().copy_from(gen.normal({2 * mlp.hidden}, 0.0f, 0.5f));
  mlp.proj->weight.value().copy_from(gen.normal({8, mlp.hidden}, 0.0f, 0.3f));
  CHECK_GRADCHECK(gradcheck([&](const std::vector<Var>& v) { return mlp.forward(v[0]); }, {gen.normal({2, 3, 8})}));
  CHECK_GRADCHECK(gradcheck(
      [&](const std::vector<Var>& v) {
        Var a = ag::add(ag::matmul(v[0], v[1], false, true), v[2]);
        Var g = ag::slice(a, 2, 0, mlp.hidden), u = ag::slice(a, 2, mlp.hidden, 2 * mlp.hidden);
        return ag::add(ag::matmul(ag::mul(ag::silu(g), u), v[3], false, true), v[4]);
      },
      {gen.normal({2, 3, 8}), mlp.fc->weight.value(), mlp.fc->bias.value(), mlp.proj->weight.value(),
       gen.normal({8}, 0.0f, 0.3f)}));
}

// ------------------------------------------------------------------------- GPT

TEST_CASE("gpt is causal for every norm: changing a future token leaves earlier logits alone", "[nn]") {
  for (const std::string& norm : kNorms) {
    INFO("norm " << norm);
    Generator gen(21);
    GPT model(gpt_config(16, 1, 8, 2, 8, norm), gen);  // tiny_config with context 8
    scramble_gpt(model, gen);
    NoGradGuard ng;
    Tensor ids = random_ids(gen, 2, 8, 16);
    Tensor logits = model.forward(ids).value();
    REQUIRE(logits.shape() == Shape{2, 8, 16});
    for (int64_t t : {0, 3, 7}) {
      Tensor ids2 = ids.clone();
      ids2.idata()[1 * 8 + t] = (ids.idata()[1 * 8 + t] + 5) % 16;
      Tensor l2 = model.forward(ids2).value();
      INFO("changed token " << t);
      CHECK_CLOSE(l2.slice(1, 0, t), logits.slice(1, 0, t), 0, 1e-6);
      CHECK_CLOSE(l2.slice(0, 0, 1), logits.slice(0, 0, 1), 0, 1e-6);
      double changed = 0;
      for (int64_t v = 0; v < 16; ++v)
        changed = std::max(changed, (double)std::fabs(l2.at({1, t, v}) - logits.at({1, t, v})));
      CHECK(changed > 1e-4);
    }
  }
}

TEST_CASE("gpt forward rejects a sequence longer than the context", "[nn]") {
  Generator gen(22);
  GPT model(tiny_gpt_config("ln"), gen);  // context 4
  Tensor ids = Tensor::from_ints(std::vector<int32_t>(10, 1), {2, 5});
  CHECK_THROWS_AS(model.forward(ids), Error);
  CHECK_THROWS_WITH(model.forward(ids), Contains("5") && Contains("4") && Contains("context"));
  // exactly the context is fine, and so is shorter
  CHECK(model.forward(Tensor::from_ints(std::vector<int32_t>(8, 1), {2, 4})).shape() == Shape{2, 4, 16});
  CHECK(model.forward(Tensor::from_ints(std::vector<int32_t>(2, 1), {2, 1})).shape() == Shape{2, 1, 16});
}

TEST_CASE("gpt config validation: bad norm names and shapes throw naming the problem", "[nn]") {
  Generator gen(23);
  GPTConfig c = tiny_gpt_config("layernorm");
  CHECK_THROWS_WITH(GPT(c, gen), Contains("layernorm") && Contains("bhyt-exact") && Contains("cbwc"));
  c = tiny_gpt_config("ln");
  c.heads = 3;
  CHECK_THROWS_WITH(GPT(c, gen), Contains("8") && Contains("3"));
  c = tiny_gpt_config("ln");
  c.layers = 0;
  CHECK_THROWS_AS(GPT(c, gen), Error);
}

TEST_CASE("gpt forward of a LayerNorm model equals its composite: embeddings, blocks, final LN, tied head",
          "[nn]") {
  for (const std::string norm : {"ln", "cbwc"}) {
    INFO("norm " << norm);
    GPTConfig c = tiny_gpt_config(norm);
    c.layers = 2;
    Generator gen(24);
    GPT model(c, gen);
    scramble_gpt(model, gen);
    NoGradGuard ng;
    const int64_t B = 2, T = 3, C = c.dim, V = c.vocab;
    Tensor ids = random_ids(gen, B, T, V);
    // x = wte[ids] + wpe[t], by loops; for cbwc minus its mean over channels
    auto wte = to_d(model.wte->weight.value()), wpe = to_d(model.wpe->weight.value());
    std::vector<double> x(B * T * C);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        const int32_t id = ids.idata()[b * T + t];
        double m = 0;
        for (int64_t e = 0; e < C; ++e) m += x[(b * T + t) * C + e] = wte[id * C + e] + wpe[t * C + e];
        if (norm == "cbwc")
          for (int64_t e = 0; e < C; ++e) x[(b * T + t) * C + e] -= m / C;
      }
    Var h(from_d(x, {B, T, C}));
    for (auto& block : model.blocks) h = block->forward(h);
    // final norm by loops: LayerNorm, or RMSNorm + beta (equal on a zero-mean stream)
    auto hv = to_d(h.value());
    auto g = to_d(model.ln_f->named_parameters()[0].second.value());
    auto be = to_d(model.ln_f->named_parameters()[1].second.value());
    std::vector<double> logits(B * T * V);
    for (int64_t r = 0; r < B * T; ++r) {
      double mu = 0, ms = 0;
      for (int64_t e = 0; e < C; ++e) mu += hv[r * C + e];
      mu /= C;
      for (int64_t e = 0; e < C; ++e) ms += (hv[r * C + e] - mu) * (hv[r * C + e] - mu);
      ms /= C;
      std::vector<double> n(C);
      for (int64_t e = 0; e < C; ++e) n[e] = g[e] * (hv[r * C + e] - mu) / std::sqrt(ms + 1e-5) + be[e];
      for (int64_t v = 0; v < V; ++v) {
        double s = 0;
        for (int64_t e = 0; e < C; ++e) s += n[e] * wte[v * C + e];  // tied: the head is wte itself
        logits[r * V + v] = s;
      }
    }
    CHECK_CLOSE(model.forward(ids).value(), from_d(logits, {B, T, V}), 1e-4, 1e-4);
  }
}

TEST_CASE("gpt block: pre-norm wiring, h = x + attn(ln1(x)), out = h + mlp(ln2(h))", "[nn]") {
  for (const std::string& norm : kNorms) {
    if (norm_kind(norm).approximates_site2) continue;  // bhyt: its site 2 has its own test below
    INFO("norm " << norm);
    Generator gen(25);
    NormConfig nc;
    nc.name = norm;
    Block block(block_config(8, 2, true, nc, 1), gen);
    for (auto& [name, p] : block.named_parameters()) {
      // gains, alpha and lambda near 1, everything else near 0
      const bool near_one = name.find("ln") != std::string::npos && name.find("bias") == std::string::npos;
      p.value().copy_from(add_scalar(gen.normal(p.shape(), 0.0f, 0.3f), near_one ? 1.0f : 0.0f));
    }
    Var x(gen.normal({2, 3, 8}));
    Var h = ag::add(x, block.attn->forward(block.ln1->forward(x)));
    Var out = ag::add(h, block.mlp->forward(block.ln2->forward(h)));
    CHECK_CLOSE(block.forward(x).value(), out.value(), 1e-6, 1e-6);
  }
}

TEST_CASE("gpt block bhyt: site 2 uses the block input's statistics plus c_attn lambda1^2 / kappa^2", "[nn]") {
  // NORMS.md: denom2 = kappa sqrt(s1^2 + c_attn lambda1^2 / kappa^2 + eps) + |mu1|,
  // c_attn = ||W_V W_O||_F^2 / (T d), mu1, s1^2 of the block input x; site 2 applies
  // gamma2 tanh(lambda2 h / denom2) to h = x + attn(site1(x)), with no reduction over h.
  const int64_t B = 2, T = 3, C = 8;
  Generator gen(26);
  NormConfig nc;
  nc.name = "bhyt";
  Block block(block_config(C, 2, true, nc, 1), gen);
  auto [s1, s2] = set_bhyt_attention(block, gen, 0.7f, 0.7f, 1.7f, 0.8f);
  s2.weight.value().copy_from(add_scalar(gen.normal({C}, 0.0f, 0.3f), 1.0f));
  const double kappa = 10.0, eps = 1e-5;
  CHECK(s1.kappa == Approx(kappa).epsilon(1e-5));

  Tensor xv = add_scalar(gen.normal({B, T, C}), 0.4f);
  Var x(xv);
  Var h = ag::add(x, block.attn->forward(block.ln1->forward(x)));
  auto hv = to_d(h.value()), xd = to_d(xv);
  // c_attn from the weights by loops (naive_layers.h)
  const double c_attn = frobenius2_by_hand(*block.attn) / (double)(T * C), lambda1 = 1.7, lambda2 = 0.8;
  const std::vector<double> site2 = bhyt_by_hand(xd, hv, C, to_d(s2.weight.value()), lambda2, kappa, eps,
                                                 c_attn * lambda1 * lambda1 / (kappa * kappa));
  Var expected = ag::add(h, block.mlp->forward(Var(from_d(site2, {B, T, C}))));
  CHECK_CLOSE(block.forward(x).value(), expected.value(), 1e-5, 1e-6);
}

TEST_CASE("gpt block bhyt: with W_O = 0 the approximated site 2 equals the exact one", "[nn]") {
  // attention output 0 -> h = x and c_attn = 0: the approximation is exact (NORMS.md)
  Generator g1(27), g2(27);
  NormConfig a, e;
  a.name = "bhyt";
  e.name = "bhyt-exact";
  Block approx(block_config(8, 2, true, a, 2), g1), exact(block_config(8, 2, true, e, 2), g2);
  Generator gen(28);
  auto pa = approx.named_parameters(), pe = exact.named_parameters();
  REQUIRE(pa.size() == pe.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    REQUIRE(pa[i].first == pe[i].first);
    Tensor v = gen.normal(pa[i].second.shape(), 0.0f, 0.4f);
    if (pa[i].first.find("lambda") != std::string::npos) v.fill_(1.3f);
    if (pa[i].first.find("attn.proj") != std::string::npos) v.fill_(0.0f);
    pa[i].second.value().copy_from(v);
    pe[i].second.value().copy_from(v);
  }
  Var x(add_scalar(gen.normal({2, 4, 8}), -0.3f));
  CHECK_CLOSE(approx.forward(x).value(), exact.forward(x).value(), 1e-5, 1e-6);
}

namespace {

// Finite-difference check of d loss / d p for selected elements of every parameter:
// the largest-|grad| element and a few random ones (all of a small parameter).
// p.value() is perturbed in place and the loss recomputed without a graph.
void check_gpt_gradients(const GPTConfig& c, const std::string& label) {
  Generator gen(31);
  GPT model(c, gen);
  scramble_gpt(model, gen);
  Tensor ids = random_ids(gen, 2, 4, 16), targets = random_ids(gen, 2, 4, 16);
  model.zero_grad();
  model.loss(ids, targets).backward();
  const int checked = nl::test::check_parameter_gradients(
      model, [&] { return gpt_loss_of(model, ids, targets); }, gen, 5, label);
  CHECK(checked > 50);
}

void check_gpt_gradients(const std::string& norm) {
  check_gpt_gradients(tiny_gpt_config(norm), "norm " + norm);  // vocab 16, dim 8, heads 2, 1 layer, seq 4
}

}  // namespace

TEST_CASE("gpt gradients of a tiny GPT match finite differences: ln", "[nn]") { check_gpt_gradients("ln"); }
TEST_CASE("gpt gradients of a tiny GPT match finite differences: rms", "[nn]") { check_gpt_gradients("rms"); }
TEST_CASE("gpt gradients of a tiny GPT match finite differences: cbwc", "[nn]") { check_gpt_gradients("cbwc"); }
TEST_CASE("gpt gradients of a tiny GPT match finite differences: dyt", "[nn]") { check_gpt_gradients("dyt"); }
TEST_CASE("gpt gradients of a tiny GPT match finite differences: bhyt", "[nn]") { check_gpt_gradients("bhyt"); }
TEST_CASE("gpt gradients of a tiny GPT match finite differences: bhyt-exact", "[nn]") {
  check_gpt_gradients("bhyt-exact");
}
TEST_CASE("gpt gradients match finite differences: dyt with swiglu, embedding scale, ln final norm",
          "[nn][swiglu]") {
  GPTConfig c = tiny_gpt_config("dyt");
  c.mlp = "swiglu";
  c.emb_scale0 = 2.5f;
  c.final_norm = "ln";
  check_gpt_gradients(c, "dyt + swiglu + emb_scale + final ln");
  c.norm.name = "ln";
  c.final_norm = "";
  check_gpt_gradients(c, "ln + swiglu + emb_scale");
}

TEST_CASE("gpt options: the embedding scale multiplies the stream, the final norm and MLP are the ones asked for",
          "[nn][swiglu]") {
  GPTConfig c = tiny_gpt_config("dyt");
  Generator g1(5), g2(5);
  GPT plain(c, g1);
  c.emb_scale0 = 3.0f;
  c.final_norm = "rms";
  c.mlp = "swiglu";
  GPT opt(c, g2);
  REQUIRE(opt.emb_scale.defined());
  CHECK(opt.emb_scale.value().item() == 3.0f);
  CHECK(!plain.emb_scale.defined());
  CHECK(dynamic_cast<RMSNorm*>(opt.ln_f.get()) != nullptr);
  CHECK(dynamic_cast<DyT*>(plain.ln_f.get()) != nullptr);
  CHECK(opt.blocks[0]->mlp->kind == "swiglu");
  // the parameters of the plain model keep their names and order; emb_scale is added
  std::vector<std::string> with, without;
  for (const auto& [name, p] : opt.named_parameters())
    if (name != "emb_scale") with.push_back(name);
  for (const auto& [name, p] : plain.named_parameters()) without.push_back(name);
  CHECK(with.size() + 1 == opt.named_parameters().size());
  c.mlp = "gelu";
  c.final_norm = "";
  Generator g3(5);
  std::vector<std::string> scaled;
  for (const auto& [name, p] : GPT(c, g3).named_parameters())
    if (name != "emb_scale") scaled.push_back(name);
  CHECK(scaled == without);
  // the stream entering block 1 is 3 times the embedding sum
  struct Probe : ActivationProbe {
    Tensor resid0;
    void record(int64_t layer, const std::string& site, const Tensor& v) override {
      if (layer == 0 && site == "resid") resid0 = v;
    }
  } probe;
  opt.blocks[0]->probe = &probe;
  Tensor ids = random_ids(g1, 2, 4, 16);
  NoGradGuard ng;
  opt.forward(ids);
  CHECK_CLOSE(probe.resid0, mul_scalar(opt.embed(ids).value(), 3.0f), 1e-6, 1e-7);
  c.emb_scale0 = -1.0f;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("--emb-scale"));
  c.emb_scale0 = 0.0f;
  c.final_norm = "batchnorm";
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("batchnorm"));
}

// ------------------------------------------------------------- LN = CBWC + RMS

namespace {

GPTConfig equivalence_config(const std::string& norm) { return gpt_config(32, 2, 16, 2, 8, norm); }

// |a - b| <= rtol * (|b| + max |b| of the tensor): relative to the element, with a
// floor set by the tensor's scale for the elements near zero
void check_relative_ish(const std::string& what, const Tensor& a, const Tensor& b, double rtol) {
  double scale = 0;
  for (float v : b.to_vector()) scale = std::max(scale, (double)std::fabs(v));
  INFO(what << " (max |grad| " << scale << ")");
  CHECK_CLOSE(a, b, rtol, rtol * scale);
}

}  // namespace

TEST_CASE("gpt ln and cbwc: same parameters, same loss, same gradients", "[nn]") {
  Generator g_ln(41), g_cb(41);
  GPT ln(equivalence_config("ln"), g_ln), cb(equivalence_config("cbwc"), g_cb);
  auto pl = ln.named_parameters(), pc = cb.named_parameters();
  REQUIRE(pl.size() == pc.size());
  for (size_t i = 0; i < pl.size(); ++i) {
    INFO(pl[i].first);
    REQUIRE(pl[i].first == pc[i].first);
    CHECK(pl[i].second.value().to_vector() == pc[i].second.value().to_vector());
  }
  Generator data(42);
  Tensor ids = random_ids(data, 4, 8, 32), targets = random_ids(data, 4, 8, 32);
  Var l1 = ln.loss(ids, targets), l2 = cb.loss(ids, targets);
  CHECK(l2.item() == Approx(l1.item()).margin(1e-5));
  // logits, not just their mean loss
  {
    NoGradGuard ng;
    CHECK_CLOSE(cb.forward(ids).value(), ln.forward(ids).value(), 1e-4, 1e-5);
  }
  l1.backward();
  l2.backward();
  // The LN model's loss is blind to a per-token shift of the residual stream, so its
  // gradients equal the cbwc model's for every parameter, W of the centred linears included.
  for (size_t i = 0; i < pl.size(); ++i)
    check_relative_ish(pl[i].first, pc[i].second.grad(), pl[i].second.grad(), 1e-4);
}

TEST_CASE("gpt ln and cbwc: 20 AdamW steps on the same batches follow the same trajectory", "[nn]") {
  Generator g_ln(43), g_cb(43);
  GPT ln(equivalence_config("ln"), g_ln), cb(equivalence_config("cbwc"), g_cb);
  FlatParameters fl = flatten_parameters(ln), fc = flatten_parameters(cb);
  AdamW opt_l(fl, AdamWConfig{0.9f, 0.99f, 1e-8f, 0.1f}), opt_c(fc, AdamWConfig{0.9f, 0.99f, 1e-8f, 0.1f});
  Generator data(44);
  float first = 0, last_l = 0, last_c = 0;
  for (int step = 0; step < 20; ++step) {
    // a learnable task: the next token is a fixed function of the current one
    Tensor ids = random_ids(data, 4, 8, 32), targets = Tensor::zeros({4, 8}, DType::I32);
    for (int64_t i = 0; i < 32; ++i) targets.idata()[i] = (ids.idata()[i] * 7 + 3) % 32;
    fl.grads.fill_(0.0f);
    fc.grads.fill_(0.0f);
    Var a = ln.loss(ids, targets), b = cb.loss(ids, targets);
    a.backward();
    b.backward();
    opt_l.step(1e-2f);
    opt_c.step(1e-2f);
    INFO("step " << step);
    CHECK(b.item() == Approx(a.item()).margin(1e-4));
    if (step == 0) first = a.item();
    last_l = a.item();
    last_c = b.item();
  }
  CHECK(last_c == Approx(last_l).margin(1e-4));
  CHECK(last_l < first - 0.1f);  // it did learn something: the comparison is not vacuous
  // The parameters stay together too (relative to each tensor's scale), except the key
  // bias, slice [C, 2C) of qkv.bias: softmax ignores q.b_k, a constant over the keys, so
  // its true gradient is 0 and Adam turns the rounding noise both models see there into
  // steps of size lr that differ between them (harmlessly: the key bias changes nothing).
  const int64_t C = 16;
  for (size_t i = 0; i < fl.params.size(); ++i) {
    const std::string& name = fl.params[i].first;
    Tensor a = fc.params[i].second.value(), b = fl.params[i].second.value();
    if (name.find("attn.qkv.bias") != std::string::npos) {
      check_relative_ish(name + " (query)", a.slice(0, 0, C), b.slice(0, 0, C), 1e-3);
      check_relative_ish(name + " (value)", a.slice(0, 2 * C, 3 * C), b.slice(0, 2 * C, 3 * C), 1e-3);
    } else {
      check_relative_ish(name, a, b, 1e-3);
    }
  }
}
