// Tests of the ViT (nn/vit.h): patchify against the pixel positions worked out by hand,
// the patch embedding's shapes and gradients, non-causal attention and a whole LayerNorm
// ViT against plain loops in double, the initial loss of a zero head, the class token
// seeing every patch, ln = cbwc, and finite-difference gradients of a tiny ViT for
// every norm.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/vit.h"
#include "tests/nn/vit_fixtures.h"
#include "tests/param_gradcheck.h"
#include "tests/nn/naive_layers.h"
#include "tests/test_util.h"

using namespace nl;
using namespace nl::test;

namespace {

double vit_loss_of(const ViT& model, const Tensor& images, const Tensor& labels) {
  NoGradGuard ng;
  return model.loss(Var(images), labels).item();
}

Tensor labels_of(std::vector<int32_t> v) { return Tensor::from_ints(v, {(int64_t)v.size()}); }

}  // namespace

// ------------------------------------------------------------------ patchify

TEST_CASE("vit patchify puts pixel (r, c) of patch k where worked out by hand", "[vit]") {
  // image b holds the value 1000 b + 28 r + c at pixel (r, c): every value names its pixel
  std::vector<float> v(2 * 28 * 28);
  for (int b = 0; b < 2; ++b)
    for (int r = 0; r < 28; ++r)
      for (int c = 0; c < 28; ++c) v[(b * 28 + r) * 28 + c] = (float)(1000 * b + 28 * r + c);
  Var images(Tensor::from_vector(v, {2, 1, 28, 28}));

  SECTION("patch 7: a 4 x 4 grid of 49-pixel patches") {
    Tensor p = patchify(images, 7).value();
    REQUIRE(p.shape() == Shape{2, 16, 49});
    // pixel (9, 15): grid row 9/7 = 1, column 15/7 = 2, so patch 1*4 + 2 = 6; inside
    // it row 9-7 = 2, column 15-14 = 1, so position 2*7 + 1 = 15
    CHECK(p.at({0, 6, 15}) == 28 * 9 + 15);
    CHECK(p.at({1, 6, 15}) == 1000 + 28 * 9 + 15);
    // patch 0 position 0 is pixel (0, 0); patch 3 position 6 is pixel (0, 27);
    // patch 15 position 48 is pixel (27, 27); patch 4 position 0 is pixel (7, 0)
    CHECK(p.at({0, 0, 0}) == 0);
    CHECK(p.at({0, 3, 6}) == 27);
    CHECK(p.at({0, 15, 48}) == 28 * 27 + 27);
    CHECK(p.at({0, 4, 0}) == 28 * 7);
    // and every element, from the same rule written the other way round
    for (int k = 0; k < 16; ++k)
      for (int j = 0; j < 49; ++j) {
        const int r = (k / 4) * 7 + j / 7, c = (k % 4) * 7 + j % 7;
        INFO("patch " << k << " position " << j);
        REQUIRE(p.at({1, k, j}) == 1000 + 28 * r + c);
      }
  }
  SECTION("patch 4: a 7 x 7 grid of 16-pixel patches") {
    Tensor p = patchify(images, 4).value();
    REQUIRE(p.shape() == Shape{2, 49, 16});
    // pixel (9, 15): grid (2, 3) -> patch 2*7 + 3 = 17; inside (1, 3) -> position 7
    CHECK(p.at({0, 17, 7}) == 28 * 9 + 15);
    // pixel (27, 0): grid (6, 0) -> patch 42; inside (3, 0) -> position 12
    CHECK(p.at({1, 42, 12}) == 1000 + 28 * 27);
  }
  SECTION("two channels: a patch holds channel 0's p x p pixels, then channel 1's") {
    // (1, 2, 4, 4), value 100 ch + 4 r + c, patch 2: patch 1 is grid (0, 1)
    std::vector<float> w(32);
    for (int ch = 0; ch < 2; ++ch)
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) w[(ch * 4 + r) * 4 + c] = (float)(100 * ch + 4 * r + c);
    Tensor p = patchify(Var(Tensor::from_vector(w, {1, 2, 4, 4})), 2).value();
    REQUIRE(p.shape() == Shape{1, 4, 8});
    CHECK(p.to_vector() == std::vector<float>({0, 1, 4, 5, 100, 101, 104, 105,           // patch 0
                                               2, 3, 6, 7, 102, 103, 106, 107,           // patch 1
                                               8, 9, 12, 13, 108, 109, 112, 113,         // patch 2
                                               10, 11, 14, 15, 110, 111, 114, 115}));    // patch 3
  }
  SECTION("a patch size that does not divide the image is an error") {
    CHECK_THROWS_AS(patchify(images, 5), Error);
    CHECK_THROWS_AS(patchify(Var(Tensor::zeros({2, 28, 28})), 7), Error);
  }
}

TEST_CASE("vit patch embedding: shapes, and gradients by finite differences", "[vit]") {
  Generator gen(1);
  ViTConfig c;  // 28 x 28, patch 7
  c.dim = 64;
  ViT model(c, gen);
  Tensor images = gen.normal({3, 1, 28, 28});
  Var tokens = model.patch->forward(patchify(Var(images), 7));
  CHECK(tokens.shape() == Shape{3, 16, 64});
  CHECK(model.patch->weight.shape() == Shape{64, 49});
  CHECK(model.pos_embed.shape() == Shape{17, 64});
  CHECK(model.cls_token.shape() == Shape{64});
  CHECK(model.forward(Var(images)).shape() == Shape{3, 10});

  // patchify + Linear as a function of the images and of the projection's weight and bias
  Generator g2(2);
  auto fn = [](const std::vector<Var>& v) {
    Var p = patchify(v[0], 2);  // (2, 4, 4 C)
    return ag::add(ag::matmul(p, v[1], false, true), v[2]);
  };
  CHECK_GRADCHECK(gradcheck(fn, {g2.normal({2, 1, 4, 4}), g2.normal({3, 4}), g2.normal({3})}));
  CHECK_GRADCHECK(gradcheck(fn, {g2.normal({2, 2, 4, 4}), g2.normal({5, 8}), g2.normal({5})}));
  // a non-contiguous image batch (a transposed view) patchifies the same way
  Tensor base = g2.normal({2, 1, 4, 4});
  CHECK_GRADCHECK(gradcheck(fn, {base.transpose(2, 3), g2.normal({3, 4}), g2.normal({3})}));
}

// ------------------------------------------------------------------ attention

TEST_CASE("vit attention (causal = false) equals plain loops over every key", "[vit]") {
  Generator gen(3);
  const int64_t B = 2, T = 5, C = 8, H = 2;
  SelfAttention attn(C, H, false, gen, 0.3f, false);
  attn.qkv->weight.value().copy_from(gen.normal({3 * C, C}, 0.0f, 0.4f));
  attn.qkv->bias.value().copy_from(gen.normal({3 * C}, 0.0f, 0.2f));
  attn.proj->bias.value().copy_from(gen.normal({C}, 0.0f, 0.2f));
  Tensor x = gen.normal({B, T, C});
  auto expected =
      attention_naive(to_d(x), B, T, C, H, false, to_d(attn.qkv->weight.value()), to_d(attn.qkv->bias.value()),
                      to_d(attn.proj->weight.value()), to_d(attn.proj->bias.value()));
  CHECK_CLOSE(attn.forward(Var(x)).value(), from_d(expected, {B, T, C}), 1e-4, 1e-5);

  // token 0's output depends on the last token (a causal layer's would not)
  Tensor x2 = x.clone();
  x2.set({0, T - 1, 3}, x.at({0, T - 1, 3}) + 1.0f);
  Tensor y1 = attn.forward(Var(x)).value(), y2 = attn.forward(Var(x2)).value();
  double changed = 0;
  for (int64_t e = 0; e < C; ++e) changed = std::max(changed, (double)std::fabs(y1.at({0, 0, e}) - y2.at({0, 0, e})));
  CHECK(changed > 1e-3);
}

// ------------------------------------------------------------------ the model

TEST_CASE("vit parameters have stable dotted names and the documented initialisation", "[vit]") {
  Generator gen(4);
  ViTConfig c;
  c.layers = 2;
  c.dim = 64;
  ViT model(c, gen);
  std::vector<std::string> names;
  for (auto& [n, p] : model.named_parameters()) names.push_back(n);
  for (const char* n : {"patch.weight", "patch.bias", "cls_token", "pos_embed", "blocks.0.ln1.weight",
                        "blocks.0.attn.qkv.weight", "blocks.1.mlp.proj.bias", "ln_f.weight", "ln_f.bias",
                        "head.weight", "head.bias"}) {
    INFO(n);
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  }
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  // the count, by hand: patch 64*49 + 64, cls 64, pos 17*64, per block 2 LNs (4*64),
  // qkv 64*192 + 192, proj 64*64 + 64, fc 64*256 + 256, down 256*64 + 64; ln_f 128; head 64*10 + 10
  const int64_t block = 4 * 64 + (64 * 192 + 192) + (64 * 64 + 64) + (64 * 256 + 256) + (256 * 64 + 64);
  CHECK(model.num_parameters() == 64 * 49 + 64 + 64 + 17 * 64 + 2 * block + 128 + 64 * 10 + 10);

  auto std_of = [](const Tensor& t) {
    double s = 0, ss = 0;
    auto v = t.to_vector();
    for (float x : v) s += x, ss += (double)x * x;
    const double m = s / (double)v.size();
    return std::sqrt(ss / (double)v.size() - m * m);
  };
  CHECK(std_of(model.patch->weight.value()) == Approx(0.02).epsilon(0.1));
  CHECK(std_of(model.pos_embed.value()) == Approx(0.02).epsilon(0.1));
  CHECK(std_of(model.cls_token.value()) == Approx(0.02).epsilon(0.35));  // only 64 draws
  for (float v : model.head->weight.value().to_vector()) REQUIRE(v == 0.0f);
  for (float v : model.patch->bias.value().to_vector()) REQUIRE(v == 0.0f);
  for (float v : model.head->bias.value().to_vector()) REQUIRE(v == 0.0f);
}

TEST_CASE("vit: a fresh model's zero head predicts the uniform distribution, loss ln 10", "[vit]") {
  for (const std::string& norm : kNorms) {
    INFO("norm " << norm);
    ViTConfig c;
    c.norm.name = norm;
    Generator gen(5);
    ViT model(c, gen);
    Tensor images = gen.normal({4, 1, 28, 28});
    Var loss = model.loss(Var(images), labels_of({0, 3, 9, 5}));
    CHECK(loss.item() == Approx(std::log(10.0)).epsilon(1e-6));
  }
}

TEST_CASE("vit forward of a LayerNorm model equals plain loops: patches, cls, positions, blocks, head", "[vit]") {
  ViTConfig c = tiny_config("ln");
  c.layers = 2;
  Generator gen(6);
  ViT model(c, gen);
  scramble(model, gen);
  const int64_t B = 2, P = 4, N = 4, T = N + 1, C = c.dim, K = c.classes;
  Tensor images = gen.normal({B, 1, 8, 8});
  auto P_ = [&](const std::string& n) { return to_d(model.parameter(n).value()); };

  // tokens: row 0 the class token, row 1 + k the patch k = (gr, gc) projected; + positions
  std::vector<double> img = to_d(images), x(B * T * C);
  auto Wp = P_("patch.weight"), bp = P_("patch.bias"), cls = P_("cls_token"), pos = P_("pos_embed");
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = 0; o < C; ++o) {
        double v = cls[o];
        if (t > 0) {
          const int64_t k = t - 1, gr = k / 2, gc = k % 2;
          v = bp[o];
          for (int64_t r = 0; r < P; ++r)
            for (int64_t q = 0; q < P; ++q) v += Wp[o * 16 + r * P + q] * img[(b * 8 + gr * P + r) * 8 + gc * P + q];
        }
        x[(b * T + t) * C + o] = v + pos[t * C + o];
      }
  for (int l = 0; l < 2; ++l) {
    const std::string pre = "blocks." + std::to_string(l) + ".";
    auto a = attention_naive(layernorm_naive(x, C, P_(pre + "ln1.weight"), P_(pre + "ln1.bias")), B, T, C, c.heads,
                             false, P_(pre + "attn.qkv.weight"), P_(pre + "attn.qkv.bias"),
                             P_(pre + "attn.proj.weight"), P_(pre + "attn.proj.bias"));
    for (size_t i = 0; i < x.size(); ++i) x[i] += a[i];
    auto f = linear_naive(layernorm_naive(x, C, P_(pre + "ln2.weight"), P_(pre + "ln2.bias")), B * T, C,
                        P_(pre + "mlp.fc.weight"), P_(pre + "mlp.fc.bias"), 4 * C);
    for (double& v : f) v = gelu_naive(v);
    auto m = linear_naive(f, B * T, 4 * C, P_(pre + "mlp.proj.weight"), P_(pre + "mlp.proj.bias"), C);
    for (size_t i = 0; i < x.size(); ++i) x[i] += m[i];
  }
  std::vector<double> first(B * C);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < C; ++o) first[b * C + o] = x[(b * T) * C + o];
  auto logits = linear_naive(layernorm_naive(first, C, P_("ln_f.weight"), P_("ln_f.bias")), B, C, P_("head.weight"),
                           P_("head.bias"), K);
  CHECK_CLOSE(model.forward(Var(images)).value(), from_d(logits, {B, K}), 1e-4, 1e-5);
  // a probe sees the stream at each block's input and after the last block
  struct Streams : ActivationProbe {
    std::vector<int64_t> layers;
    void record(int64_t layer, const std::string& site, const Tensor&) override {
      if (site == "resid") layers.push_back(layer);
    }
    bool wants_detail() const override { return false; }
  } probe;
  model.set_probe(&probe);
  model.forward(Var(images));
  model.set_probe(nullptr);
  CHECK(probe.layers == std::vector<int64_t>{0, 1, 2});
}

TEST_CASE("vit: the class token sees every patch, the last one included, for every norm", "[vit]") {
  for (const std::string& norm : kNorms) {
    INFO("norm " << norm);
    ViTConfig c = tiny_config(norm);
    Generator gen(7);
    ViT model(c, gen);
    scramble(model, gen);
    NoGradGuard ng;
    Tensor images = gen.normal({2, 1, 8, 8});
    Tensor logits = model.forward(Var(images)).value();
    // change only the bottom-right patch (rows 4-7, columns 4-7) of image 1
    Tensor changed = images.clone();
    for (int64_t r = 4; r < 8; ++r)
      for (int64_t q = 4; q < 8; ++q) changed.set({1, 0, r, q}, images.at({1, 0, r, q}) + 0.5f);
    Tensor l2 = model.forward(Var(changed)).value();
    CHECK_CLOSE(l2.slice(0, 0, 1), logits.slice(0, 0, 1), 0, 1e-6);  // image 0 untouched
    double diff = 0;
    for (int64_t k = 0; k < c.classes; ++k) diff = std::max(diff, (double)std::fabs(l2.at({1, k}) - logits.at({1, k})));
    CHECK(diff > 1e-4);
  }
}

TEST_CASE("vit ln and cbwc from the same seed give the same logits and gradients", "[vit]") {
  Generator g1(8), g2(8);
  ViTConfig cl = tiny_config("ln"), cc = tiny_config("cbwc");
  cl.layers = cc.layers = 2;
  ViT ln(cl, g1), cb(cc, g2);
  auto pl = ln.named_parameters(), pc = cb.named_parameters();
  REQUIRE(pl.size() == pc.size());
  Generator gen(9);
  for (size_t i = 0; i < pl.size(); ++i) {
    REQUIRE(pl[i].first == pc[i].first);
    // trained-looking values, shared: the input of every norm gets a large mean offset
    Tensor v = gen.normal(pl[i].second.shape(), 0.0f, 0.4f);
    if (pl[i].first.find("ln") != std::string::npos && pl[i].first.find("weight") != std::string::npos)
      v = add_scalar(v, 1.0f);
    if (pl[i].first == "cls_token" || pl[i].first == "pos_embed") v = add_scalar(v, 3.0f);
    pl[i].second.value().copy_from(v);
    pc[i].second.value().copy_from(v);
  }
  Tensor images = gen.normal({3, 1, 8, 8});
  Tensor labels = labels_of({0, 2, 1});
  Var a = ln.loss(Var(images), labels), b = cb.loss(Var(images), labels);
  CHECK(b.item() == Approx(a.item()).margin(1e-5));
  a.backward();
  b.backward();
  // CBWC's projected weights get the LayerNorm model's gradient after projection; the
  // free ones that no projection touches get the same gradient outright
  for (const char* n : {"patch.weight", "cls_token", "blocks.1.attn.qkv.weight", "ln_f.bias", "head.weight"}) {
    INFO(n);
    Tensor ga = ln.parameter(n).grad(), gb = cb.parameter(n).grad();
    double scale = 0;
    for (float v : ga.to_vector()) scale = std::max(scale, (double)std::fabs(v));
    CHECK_CLOSE(gb, ga, 1e-3, 1e-3 * scale);
  }
}

TEST_CASE("vit rejects a bad config and a wrongly shaped batch", "[vit]") {
  Generator gen(10);
  ViTConfig c;
  c.patch = 5;
  CHECK_THROWS_WITH(ViT(c, gen), Catch::Contains("--patch 5"));
  c.patch = 7;
  c.dim = 30;
  c.heads = 4;
  CHECK_THROWS_WITH(ViT(c, gen), Catch::Contains("not divisible"));
  c.dim = 32;
  c.norm.name = "batchnorm";
  CHECK_THROWS_WITH(ViT(c, gen), Catch::Contains("unknown norm"));
  c.norm.name = "ln";
  ViT model(c, gen);
  CHECK_THROWS_AS(model.forward(Var(Tensor::zeros({2, 1, 27, 27}))), Error);
  CHECK_THROWS_AS(model.loss(Var(Tensor::zeros({2, 1, 28, 28})), labels_of({1, 2, 3})), Error);
}

namespace {

// Finite-difference check of d loss / d p for selected elements of every parameter:
// the largest-|grad| element and a few random ones (all of a small parameter).
void check_vit_gradients(const std::string& norm) {
  ViTConfig c = tiny_config(norm);
  Generator gen(11);
  ViT model(c, gen);
  scramble(model, gen);
  Tensor images = gen.normal({3, 1, 8, 8});
  Tensor labels = labels_of({2, 0, 1});
  model.zero_grad();
  model.loss(Var(images), labels).backward();
  const int checked = nl::test::check_parameter_gradients(
      model, [&] { return vit_loss_of(model, images, labels); }, gen, 4, "norm " + norm);
  CHECK(checked > 50);
}

}  // namespace

TEST_CASE("vit gradients of a tiny ViT match finite differences: ln", "[vit]") { check_vit_gradients("ln"); }
TEST_CASE("vit gradients of a tiny ViT match finite differences: rms", "[vit]") { check_vit_gradients("rms"); }
TEST_CASE("vit gradients of a tiny ViT match finite differences: cbwc", "[vit]") { check_vit_gradients("cbwc"); }
TEST_CASE("vit gradients of a tiny ViT match finite differences: dyt", "[vit]") { check_vit_gradients("dyt"); }
TEST_CASE("vit gradients of a tiny ViT match finite differences: bhyt", "[vit]") { check_vit_gradients("bhyt"); }
TEST_CASE("vit gradients of a tiny ViT match finite differences: bhyt-exact", "[vit]") {
  check_vit_gradients("bhyt-exact");
}
