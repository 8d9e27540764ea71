// Tests of train/optim/optim.h: AdamW and SGD against PyTorch over ten steps
// (tests/reference/optim.txt, written by scripts/make_reference_optim.py), the
// warmup + cosine schedule against values worked out by hand, and global-norm clipping
// (by hand, and over 40 000 gradients: the last element and every block boundary).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "nn/linear.h"
#include "tests/reference.h"
#include "tests/test_util.h"
#include "train/optim/optim.h"

using namespace nl;

namespace {

// A Linear(4 -> 3) with bias, its parameters in one flat buffer: weight (3, 4) first,
// then bias (3), as registered.
struct TinyModel {
  Generator gen{7};
  Linear lin{4, 3, true, gen};
  FlatParameters flat = flatten_parameters(lin);
};

void set_state(TinyModel& m, const test::RefCase& c, const std::string& w, const std::string& b) {
  m.lin.weight.value().copy_from(c.tensor(w));
  m.lin.bias.value().copy_from(c.tensor(b));
}

// Writes step k's gradients (1-based) into the parameters' grads, which are views into
// the flat gradient buffer the optimizer reads.
void set_grads(TinyModel& m, const test::RefCase& c, int k) {
  m.lin.weight.grad().copy_from(c.tensor("gw" + std::to_string(k)));
  m.lin.bias.grad().copy_from(c.tensor("gb" + std::to_string(k)));
}

const test::RefCase& find_case(const std::vector<test::RefCase>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return c;
  FAIL("tests/reference/optim.txt has no case " << name);
  throw;  // unreachable
}

}  // namespace

TEST_CASE("adamw matches torch.optim.AdamW over 10 steps (weight decay on the 2-D weight only)", "[optim]") {
  const auto cases = test::load_reference("optim.txt");
  for (const std::string name : {"adamw_const_lr", "adamw_varying_lr", "adamw_strong_decay"}) {
    const auto& c = find_case(cases, name);
    REQUIRE(c.attr("op") == "adamw");
    {
      TinyModel m;
      REQUIRE(m.flat.params.size() == 2);
      set_state(m, c, "w0", "b0");
      AdamW opt(m.flat, AdamWConfig{c.attr_float("beta1"), c.attr_float("beta2"), c.attr_float("eps"),
                                    c.attr_float("weight_decay")});
      const std::vector<float> lrs = c.tensor("lr").to_vector();
      const int steps = (int)c.attr_int("steps");
      for (int k = 1; k <= steps; ++k) {
        set_grads(m, c, k);
        opt.step(lrs[k - 1]);
        INFO(name << ": after step " << k);
        CHECK(opt.steps() == k);
        CHECK_CLOSE(m.lin.weight.value(), c.tensor("w" + std::to_string(k)), 1e-6, 1e-7);
        CHECK_CLOSE(m.lin.bias.value(), c.tensor("b" + std::to_string(k)), 1e-6, 1e-7);
      }
    }
  }
}

TEST_CASE("adamw state is the flat moments: m and v hold the running averages of g and g^2", "[optim]") {
  // Two steps by hand for one element: g1 = 2, g2 = -1, b1 = 0.5, b2 = 0.75.
  //   m1 = 0.5 * 2 = 1;           v1 = 0.25 * 4 = 1
  //   m2 = 0.5 * 1 + 0.5 * -1 = 0; v2 = 0.75 * 1 + 0.25 * 1 = 1
  TinyModel m;
  AdamW opt(m.flat, AdamWConfig{0.5f, 0.75f, 1e-8f, 0.0f});
  REQUIRE(opt.m.numel() == 15);
  REQUIRE(opt.v.numel() == 15);
  m.flat.grads.fill_(2.0f);
  opt.step(1e-3f);
  CHECK_CLOSE(opt.m, Tensor::full({15}, 1.0f), 1e-7, 0);
  CHECK_CLOSE(opt.v, Tensor::full({15}, 1.0f), 1e-7, 0);
  m.flat.grads.fill_(-1.0f);
  opt.step(1e-3f);
  CHECK_CLOSE(opt.m, Tensor::zeros({15}), 0, 1e-7);
  CHECK_CLOSE(opt.v, Tensor::full({15}, 1.0f), 1e-7, 0);
}

TEST_CASE("adamw first step moves every parameter by lr against the sign of its gradient", "[optim]") {
  // After one step m_hat = g and v_hat = g^2, so the update is lr * g / (|g| + eps) =
  // lr * sign(g) (wd 0), whatever the gradient's size.
  TinyModel m;
  AdamW opt(m.flat, AdamWConfig{0.9f, 0.99f, 1e-8f, 0.0f});
  Tensor before = m.flat.values.clone();
  std::vector<float> g(15);
  for (int i = 0; i < 15; ++i) g[i] = (i % 2 ? -1.0f : 1.0f) * std::pow(10.0f, (float)(i % 5) - 3.0f);
  m.flat.grads.copy_from(Tensor::from_vector(g, {15}));
  opt.step(0.01f);
  std::vector<float> expected = before.to_vector();
  for (int i = 0; i < 15; ++i) expected[i] -= 0.01f * (g[i] > 0 ? 1.0f : -1.0f);
  CHECK_CLOSE(m.flat.values, Tensor::from_vector(expected, {15}), 1e-5, 1e-7);
}

TEST_CASE("sgd with momentum matches torch.optim.SGD over 10 steps", "[optim]") {
  const auto cases = test::load_reference("optim.txt");
  for (const std::string name : {"sgd_momentum", "sgd_momentum_decay"}) {
    const auto& c = find_case(cases, name);
    REQUIRE(c.attr("op") == "sgd");
    {
      TinyModel m;
      set_state(m, c, "w0", "b0");
      SGD opt(m.flat, c.attr_float("momentum"), c.attr_float("weight_decay"));
      const std::vector<float> lrs = c.tensor("lr").to_vector();
      for (int k = 1; k <= (int)c.attr_int("steps"); ++k) {
        set_grads(m, c, k);
        opt.step(lrs[k - 1]);
        INFO(name << ": after step " << k);
        CHECK_CLOSE(m.lin.weight.value(), c.tensor("w" + std::to_string(k)), 1e-6, 1e-7);
        CHECK_CLOSE(m.lin.bias.value(), c.tensor("b" + std::to_string(k)), 1e-6, 1e-7);
      }
    }
  }
}

TEST_CASE("sgd momentum by hand: the buffer starts at g, then b = mu b + g", "[optim]") {
  // p0 = 1, g = 1 every step, mu = 0.5, lr = 0.1:
  //   b1 = 1     p1 = 0.9
  //   b2 = 1.5   p2 = 0.75
  //   b3 = 1.75  p3 = 0.575
  TinyModel m;
  m.flat.values.fill_(1.0f);
  SGD opt(m.flat, 0.5f, 0.0f);
  const float expected[] = {0.9f, 0.75f, 0.575f};
  for (float e : expected) {
    m.flat.grads.fill_(1.0f);
    opt.step(0.1f);
    CHECK_CLOSE(m.flat.values, Tensor::full({15}, e), 1e-6, 0);
  }
}

TEST_CASE("schedule: linear warmup, cosine decay, min_lr at the end", "[optim]") {
  // total 110, warmup 10, lr 1e-3, min_lr 1e-4. Warmup: lr * (step + 1) / warmup.
  // Cosine over the remaining 100 steps: progress = (step - 10) / 100,
  //   lr = min + (lr - min) * (1 + cos(pi progress)) / 2.
  const int64_t total = 110, warmup = 10;
  const float lr = 1e-3f, min_lr = 1e-4f;
  CHECK(lr_at(0, total, warmup, lr, min_lr) == Approx(1e-4).epsilon(1e-6));
  CHECK(lr_at(4, total, warmup, lr, min_lr) == Approx(5e-4).epsilon(1e-6));
  CHECK(lr_at(9, total, warmup, lr, min_lr) == Approx(1e-3).epsilon(1e-6));
  CHECK(lr_at(10, total, warmup, lr, min_lr) == Approx(1e-3).epsilon(1e-6));   // cosine at 0: the peak
  CHECK(lr_at(60, total, warmup, lr, min_lr) == Approx(5.5e-4).epsilon(1e-6));  // midpoint: (lr + min) / 2
  // a quarter of the way: cos(pi / 4) = 1/sqrt(2): 1e-4 + 9e-4 * (1 + 0.70710678) / 2
  CHECK(lr_at(35, total, warmup, lr, min_lr) == Approx(8.6819805e-4).epsilon(1e-6));
  // three quarters: 1e-4 + 9e-4 * (1 - 0.70710678) / 2
  CHECK(lr_at(85, total, warmup, lr, min_lr) == Approx(2.3180195e-4).epsilon(1e-6));
  CHECK(lr_at(total, total, warmup, lr, min_lr) == Approx(1e-4).epsilon(1e-6));
  CHECK(lr_at(total + 50, total, warmup, lr, min_lr) == Approx(1e-4).epsilon(1e-6));
  // the last step of the run is just above min_lr: 1e-4 + 9e-4 * (1 + cos(0.99 pi)) / 2
  CHECK(lr_at(total - 1, total, warmup, lr, min_lr) == Approx(1.0022205e-4).epsilon(1e-5));

  // warmup rises, the cosine falls, never below min_lr
  for (int64_t s = 1; s < warmup; ++s)
    CHECK(lr_at(s, total, warmup, lr, min_lr) > lr_at(s - 1, total, warmup, lr, min_lr));
  for (int64_t s = warmup + 1; s <= total; ++s) {
    CHECK(lr_at(s, total, warmup, lr, min_lr) < lr_at(s - 1, total, warmup, lr, min_lr));
    CHECK(lr_at(s, total, warmup, lr, min_lr) >= min_lr * (1 - 1e-6f));
  }
}

TEST_CASE("schedule without warmup starts at the peak", "[optim]") {
  CHECK(lr_at(0, 100, 0, 2e-3f, 0.0f) == Approx(2e-3).epsilon(1e-6));
  CHECK(lr_at(50, 100, 0, 2e-3f, 0.0f) == Approx(1e-3).epsilon(1e-6));
  CHECK(lr_at(100, 100, 0, 2e-3f, 0.0f) == Approx(0.0).margin(1e-9));
}

TEST_CASE("schedule flat: Verma's linear warmup over 2000 of 5000 steps, then lr to the end", "[optim]") {
  const float lr = 3e-4f, min_lr = 1e-5f;
  CHECK(lr_at(0, 5000, 2000, lr, min_lr, "flat") == Approx(1.5e-7).epsilon(1e-6));  // lr / 2000
  CHECK(lr_at(999, 5000, 2000, lr, min_lr, "flat") == Approx(1.5e-4).epsilon(1e-6));
  CHECK(lr_at(1999, 5000, 2000, lr, min_lr, "flat") == Approx(3e-4).epsilon(1e-6));
  // flat: min_lr plays no part, at the last step and beyond
  for (int64_t s : {2000, 3500, 4999, 5000, 7000}) CHECK(lr_at(s, 5000, 2000, lr, min_lr, "flat") == lr);
  // the warmup is the cosine schedule's
  for (int64_t s = 0; s < 2000; s += 97)
    CHECK(lr_at(s, 5000, 2000, lr, min_lr, "flat") == lr_at(s, 5000, 2000, lr, min_lr, "cosine"));
  CHECK_THROWS_WITH(lr_at(0, 10, 2, lr, min_lr, "linear"), Catch::Contains("unknown schedule 'linear'"));
}

TEST_CASE("clip_grad_norm returns the global norm and scales to max_norm", "[optim]") {
  // 15 gradient elements over weight and bias: three nonzero, 3, 4 (weight) and 12
  // (bias): global norm sqrt(9 + 16 + 144) = 13.
  TinyModel m;
  auto set = [&] {
    m.flat.grads.fill_(0.0f);
    m.lin.weight.grad().set({0, 1}, 3.0f);
    m.lin.weight.grad().set({2, 3}, -4.0f);
    m.lin.bias.grad().set({1}, 12.0f);
  };
  set();
  Tensor before = m.flat.grads.clone();

  SECTION("over the limit: scaled down to max_norm") {
    float norm = clip_grad_norm(m.flat, 1.0f);
    CHECK(norm == Approx(13.0f).epsilon(1e-6));
    CHECK(m.lin.weight.grad().at({0, 1}) == Approx(3.0 / 13).epsilon(1e-5));
    CHECK(m.lin.weight.grad().at({2, 3}) == Approx(-4.0 / 13).epsilon(1e-5));
    CHECK(m.lin.bias.grad().at({1}) == Approx(12.0 / 13).epsilon(1e-5));
    double ss = 0;
    for (float g : m.flat.grads.to_vector()) ss += (double)g * g;
    CHECK(std::sqrt(ss) == Approx(1.0).epsilon(1e-5));
    // a second call sees the clipped norm and leaves it as it is
    CHECK(clip_grad_norm(m.flat, 1.0f) == Approx(1.0f).epsilon(1e-5));
  }
  SECTION("under the limit: a no-op, bit for bit") {
    float norm = clip_grad_norm(m.flat, 20.0f);
    CHECK(norm == Approx(13.0f).epsilon(1e-6));
    CHECK(m.flat.grads.to_vector() == before.to_vector());
  }
  SECTION("max_norm 0 turns clipping off but still measures") {
    float norm = clip_grad_norm(m.flat, 0.0f);
    CHECK(norm == Approx(13.0f).epsilon(1e-6));
    CHECK(m.flat.grads.to_vector() == before.to_vector());
  }
  SECTION("all-zero gradients: norm 0, nothing changes") {
    m.flat.grads.fill_(0.0f);
    CHECK(clip_grad_norm(m.flat, 1.0f) == 0.0f);
    for (float g : m.flat.grads.to_vector()) CHECK(g == 0.0f);
  }
}

namespace {

// A flat buffer of n gradients on the CPU: all clip_grad_norm reads.
FlatParameters gradients(const std::vector<float>& g) {
  FlatParameters flat;
  flat.values = Tensor::zeros({(int64_t)g.size()});
  flat.grads = Tensor::from_vector(g, {(int64_t)g.size()});
  return flat;
}

// 40 000 gradients: two whole blocks of 16 384 (clip_grad_norm sums fixed blocks) and
// a partial third one of 7 232.
constexpr int64_t kManyGrads = 40000;

// A single non-zero gradient v at index i: the norm is |v| exactly, and clipping to 1
// scales v alone by 1 / (|v| + 1e-6) and leaves every other gradient zero.
void check_single_gradient(int64_t i, float v) {
  INFO("the only non-zero gradient at index " << i << " of " << kManyGrads);
  std::vector<float> g((size_t)kManyGrads, 0.0f);
  g[(size_t)i] = v;
  FlatParameters flat = gradients(g);
  CHECK(clip_grad_norm(flat, 1.0f) == std::fabs(v));
  std::vector<float> expected((size_t)kManyGrads, 0.0f);
  expected[(size_t)i] = v * (1.0f / (std::fabs(v) + 1e-6f));
  CHECK_CLOSE(flat.grads, Tensor::from_vector(expected, {kManyGrads}), 1e-6, 0);
}

}  // namespace

TEST_CASE("clip_grad_norm over 40 000 random gradients (three blocks, the last partial) is the double-precision norm",
          "[optim]") {
  Generator gen(11);
  const std::vector<float> g = gen.normal({kManyGrads}).to_vector();
  double ss = 0;
  for (float x : g) ss += (double)x * x;
  const double norm = std::sqrt(ss);
  FlatParameters flat = gradients(g);
  const float max_norm = (float)(norm / 2);
  CHECK(clip_grad_norm(flat, max_norm) == Approx(norm).epsilon(1e-6));
  // every gradient, the last included, scaled by max_norm / (norm + 1e-6)
  std::vector<float> expected(g.size());
  for (size_t i = 0; i < g.size(); ++i) expected[i] = (float)(g[i] * (max_norm / (norm + 1e-6)));
  CHECK_CLOSE(flat.grads, Tensor::from_vector(expected, {kManyGrads}), 1e-6, 0);
}

TEST_CASE("clip_grad_norm sees a gradient that is non-zero in the last element only", "[optim]") {
  check_single_gradient(kManyGrads - 1, -3.0f);
}

TEST_CASE("clip_grad_norm sees a single non-zero gradient on each side of each block boundary", "[optim]") {
  for (int64_t i : {16383, 16384, 32767, 32768}) check_single_gradient(i, 2.5f);
}
