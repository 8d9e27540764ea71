// Tests of the block variants of nn/block.h (NORMS.md, "Block variants"): LayerNorm
// Scaling (lns) is Pre-LN in layer 1 and scales each norm output of layer l by
// 1/sqrt(l), so its mean square is ~1/l; Peri-LN (peri) normalises each branch's output,
// so the branch writes RMS ~ |gain| into the stream whatever the branch's scale, and the
// GPT normalises its embedding output; parameter names stay dotted and stable, pre's as
// they were; an unknown variant is refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "nn/gpt.h"
#include "nn/norms/norms.h"
#include "tests/nn/block_config.h"
#include "tests/nn/naive_layers.h"  // registered_norms
#include "tests/nn/capture.h"
#include "tests/nn/model_fixtures.h"
#include "tests/test_util.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;

namespace {


// Moves every parameter of a block off its initialisation (gains, alpha, lambda near 1,
// the rest near 0 with a spread that makes attention non-uniform).
void scramble_block(Block& block, Generator& gen) {
  for (auto& [name, p] : block.named_parameters()) {
    const bool near_one = name.find("ln") != std::string::npos && name.find("bias") == std::string::npos;
    p.value().copy_from(add_scalar(gen.normal(p.shape(), 0.0f, 0.3f), near_one ? 1.0f : 0.0f));
  }
}

void copy_parameters(const Module& from, Module& to) {
  auto a = from.named_parameters(), b = to.named_parameters();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].first == b[i].first);
    b[i].second.value().copy_from(a[i].second.value());
  }
}

double mean_square(const Tensor& t) {
  double s = 0;
  auto v = t.to_vector();
  for (float x : v) s += (double)x * x;
  return s / (double)v.size();
}

// RMS over channels of each token of t (N tokens of C), in double
std::vector<double> token_rms(const Tensor& t) {
  const int64_t C = t.shape().back(), N = t.numel() / C;
  auto v = t.to_vector();
  std::vector<double> out(N);
  for (int64_t n = 0; n < N; ++n) {
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += (double)v[n * C + c] * v[n * C + c];
    out[n] = std::sqrt(s / (double)C);
  }
  return out;
}

GPTConfig tiny_gpt(const std::string& norm, const std::string& block, int64_t layers) {
  return gpt_config(16, layers, 8, 2, 4, norm, block);
}

}  // namespace

TEST_CASE("block lns: layer 1 is Pre-LN (same parameters, same output) for every norm", "[nn][block]") {
  for (const std::string& norm : kNorms) {
    INFO("norm " << norm);
    NormConfig nc;
    nc.name = norm;
    Generator g1(51), g2(51), gen(52);
    Block pre(block_config(8, 2, true, nc, 4, "pre", 1), g1), lns(block_config(8, 2, true, nc, 4, "lns", 1), g2);
    scramble_block(pre, gen);
    copy_parameters(pre, lns);
    CHECK(lns.out_scale == 1.0f);
    Var x(add_scalar(gen.normal({2, 3, 8}), 0.2f));
    CHECK_CLOSE(lns.forward(x).value(), pre.forward(x).value(), 0, 0);
    // a block with the default variant, as the ViT builds it, is the same pre-norm block
    Generator g3(51);
    Block vit_style(block_config(8, 2, true, nc, 4), g3);
    copy_parameters(pre, vit_style);
    CHECK(vit_style.config.variant == "pre");
    CHECK_CLOSE(vit_style.forward(x).value(), pre.forward(x).value(), 0, 0);
  }
}

TEST_CASE("block lns: layer l scales every norm output by 1/sqrt(l) (wiring by composition)", "[nn][block]") {
  for (const std::string norm : {"ln", "rms", "dyt", "bhyt-exact"}) {
    for (int64_t l : {2, 5}) {
      INFO("norm " << norm << ", layer " << l);
      NormConfig nc;
      nc.name = norm;
      Generator g(53), gen(54);
      Block lns(block_config(8, 2, true, nc, 6, "lns", l), g);
      scramble_block(lns, gen);
      Var x(gen.normal({2, 3, 8}));
      const float s = 1.0f / std::sqrt((float)l);
      Var h = ag::add(x, lns.attn->forward(ag::mul_scalar(lns.ln1->forward(x), s)));
      Var out = ag::add(h, lns.mlp->forward(ag::mul_scalar(lns.ln2->forward(h), s)));
      CHECK_CLOSE(lns.forward(x).value(), out.value(), 1e-6, 1e-6);
    }
  }
}

TEST_CASE("block lns: the mean square of a scaled norm output is ~1/l", "[nn][block]") {
  // LN and RMSNorm with gain 1, bias 0 give each token mean square s^2/(s^2 + eps) or
  // ms/(ms + eps), i.e. 1 - O(eps) for inputs of unit scale; scaled by 1/sqrt(l) that is 1/l.
  for (const std::string norm : {"ln", "rms"}) {
    for (int64_t l : {1, 2, 3, 8, 16}) {
      INFO("norm " << norm << ", layer " << l);
      NormConfig nc;
      nc.name = norm;
      Generator g(55), gen(56);
      Block lns(block_config(16, 2, true, nc, 16, "lns", l), g);
      Capture cap;
      lns.probe = &cap;
      Var x(add_scalar(gen.normal({2, 5, 16}), 0.5f));
      NoGradGuard ng;
      lns.forward(x);
      CHECK(mean_square(cap.at(l - 1, "ln1")) == Approx(1.0 / (double)l).epsilon(1e-4));
      CHECK(mean_square(cap.at(l - 1, "ln2")) == Approx(1.0 / (double)l).epsilon(1e-4));
    }
  }
}

TEST_CASE("block peri: h = x + N1o(Attn(N1(x))), out = h + N2o(MLP(N2(h))) for every norm", "[nn][block]") {
  for (const std::string& norm : kNorms) {
    INFO("norm " << norm);
    NormConfig nc;
    nc.name = norm;
    Generator g(57), gen(58);
    Block peri(block_config(8, 2, true, nc, 2, "peri", 1), g);
    REQUIRE(peri.ln1_out);
    REQUIRE(peri.ln2_out);
    scramble_block(peri, gen);
    Var x(gen.normal({2, 3, 8}));
    // bhyt has no block-level approximation in peri: every site is the exact BHyT*
    Var h = ag::add(x, peri.ln1_out->forward(peri.attn->forward(peri.ln1->forward(x))));
    Var out = ag::add(h, peri.ln2_out->forward(peri.mlp->forward(peri.ln2->forward(h))));
    CHECK_CLOSE(peri.forward(x).value(), out.value(), 1e-6, 1e-6);
    CHECK_FALSE(peri.approximates_site2());
  }
}

TEST_CASE("block peri: the output norm makes each branch's RMS equal its gain, whatever the branch's scale",
          "[nn][block]") {
  // RMSNorm with a constant gain g maps every token to RMS exactly g*sqrt(ms/(ms+eps)).
  // With the MLP's down-projection zero, N2o(0) = 0 and out - x is the attention branch.
  const float gain = 0.3f;
  for (float scale : {0.5f, 5.0f, 50.0f}) {
    INFO("attention out-projection std " << scale);
    NormConfig nc;
    nc.name = "rms";
    Generator g(59), gen(60);
    Block peri(block_config(16, 2, true, nc, 2, "peri", 1), g), pre(block_config(16, 2, true, nc, 2, "pre", 1), g);
    for (Block* b : {&peri, &pre}) {
      b->attn->qkv->weight.value().copy_from(gen.normal({48, 16}, 0.0f, 0.5f));
      b->attn->proj->weight.value().copy_from(gen.normal({16, 16}, 0.0f, scale));
      b->mlp->proj->weight.value().fill_(0.0f);
      b->mlp->proj->bias.value().fill_(0.0f);
    }
    static_cast<RMSNorm&>(*peri.ln1_out).weight.value().fill_(gain);
    Var x(gen.normal({2, 6, 16}));
    NoGradGuard ng;
    for (double r : token_rms(sub(peri.forward(x).value(), x.value()))) CHECK(r == Approx(gain).epsilon(1e-4));
    // pre has no output norm: its branch's RMS follows the projection's scale
    double pre_rms = 0;
    for (double r : token_rms(sub(pre.forward(x).value(), x.value()))) pre_rms += r / 12.0;
    CHECK(std::fabs(pre_rms - gain) > 0.05);
  }
}

TEST_CASE("gpt peri: the embedding output is normalised, then blocks, final norm, tied head", "[nn][block]") {
  GPTConfig c = tiny_gpt("ln", "peri", 2);
  Generator gen(61);
  GPT model(c, gen);
  REQUIRE(model.emb_norm);
  for (auto& [name, p] : model.named_parameters()) {
    const bool gain = name.find("ln") != std::string::npos || name.find("emb_norm") != std::string::npos;
    const bool leaf_weight = name.size() >= 6 && name.compare(name.size() - 6, 6, "weight") == 0;
    p.value().copy_from(add_scalar(gen.normal(p.shape(), 0.0f, 0.3f), gain && leaf_weight ? 1.0f : 0.0f));
  }
  std::vector<int32_t> raw = {3, 1, 4, 1, 5, 9, 2, 6};
  Tensor ids = Tensor::from_ints(raw, {2, 4});
  NoGradGuard ng;
  // x = wte[ids] + wpe[t], by loops
  auto wte = model.wte->weight.value().to_vector(), wpe = model.wpe->weight.value().to_vector();
  std::vector<float> x(2 * 4 * 8);
  for (int64_t r = 0; r < 8; ++r)
    for (int64_t e = 0; e < 8; ++e) x[r * 8 + e] = wte[raw[r] * 8 + e] + wpe[(r % 4) * 8 + e];
  Var h = model.emb_norm->forward(Var(Tensor::from_vector(x, {2, 4, 8})));
  for (auto& b : model.blocks) h = b->forward(h);
  Var logits = ag::matmul(model.ln_f->forward(h), model.wte->weight, false, true);
  CHECK_CLOSE(model.forward(ids).value(), logits.value(), 1e-5, 1e-6);
  // without emb_norm it would differ: the check is not vacuous
  Var h2(Tensor::from_vector(x, {2, 4, 8}));
  for (auto& b : model.blocks) h2 = b->forward(h2);
  Var other = ag::matmul(model.ln_f->forward(h2), model.wte->weight, false, true);
  CHECK_FALSE(test::compare(model.forward(ids).value(), other.value(), 1e-3, 1e-4).ok);
}

TEST_CASE("gpt block variants: parameter names are dotted and stable, pre's unchanged", "[nn][block]") {
  auto names_of = [](const GPTConfig& c) {
    Generator gen(62);
    GPT model(c, gen);
    std::vector<std::string> names;
    for (const auto& [n, p] : model.named_parameters()) names.push_back(n);
    return names;
  };
  const std::vector<std::string> block0 = {
      "blocks.0.ln1.weight",      "blocks.0.ln1.bias",      "blocks.0.attn.qkv.weight", "blocks.0.attn.qkv.bias",
      "blocks.0.attn.proj.weight", "blocks.0.attn.proj.bias", "blocks.0.ln2.weight",      "blocks.0.ln2.bias",
      "blocks.0.mlp.fc.weight",   "blocks.0.mlp.fc.bias",   "blocks.0.mlp.proj.weight", "blocks.0.mlp.proj.bias"};
  std::vector<std::string> pre = {"wte.weight", "wpe.weight"};
  pre.insert(pre.end(), block0.begin(), block0.end());
  pre.insert(pre.end(), {"ln_f.weight", "ln_f.bias"});
  CHECK(names_of(tiny_gpt("ln", "pre", 1)) == pre);
  CHECK(names_of(tiny_gpt("ln", "lns", 1)) == pre);  // lns adds no parameters

  const std::vector<std::string> peri = {
      "wte.weight",           "wpe.weight",           "blocks.0.ln1.weight",      "blocks.0.ln1.bias",
      "blocks.0.attn.qkv.weight", "blocks.0.attn.qkv.bias", "blocks.0.attn.proj.weight", "blocks.0.attn.proj.bias",
      "blocks.0.ln1_out.weight", "blocks.0.ln1_out.bias", "blocks.0.ln2.weight",      "blocks.0.ln2.bias",
      "blocks.0.mlp.fc.weight", "blocks.0.mlp.fc.bias", "blocks.0.mlp.proj.weight", "blocks.0.mlp.proj.bias",
      "blocks.0.ln2_out.weight", "blocks.0.ln2_out.bias", "ln_f.weight",             "ln_f.bias",
      "emb_norm.weight",      "emb_norm.bias"};
  CHECK(names_of(tiny_gpt("ln", "peri", 1)) == peri);

  // a parameter is found by its dotted name
  Generator gen(63);
  GPT model(tiny_gpt("rms", "peri", 3), gen);
  CHECK(model.parameter("blocks.2.ln2_out.weight").shape() == Shape{8});
  CHECK(model.parameter("emb_norm.weight").shape() == Shape{8});
}

TEST_CASE("gpt block variants: an unknown variant is refused, naming the choices", "[nn][block]") {
  Generator gen(64);
  GPTConfig c = tiny_gpt("ln", "post", 1);
  CHECK_THROWS_AS(GPT(c, gen), Error);
  CHECK_THROWS_WITH(GPT(c, gen), Contains("post") && Contains("pre") && Contains("peri") && Contains("lns"));
  NormConfig nc;
  CHECK_THROWS_WITH(Block(block_config(8, 2, true, nc, 2, "lns", 0), gen), Contains("1-based"));
}

TEST_CASE("gpt block variants: lns and peri GPTs are causal and their gradients match finite differences",
          "[nn][block]") {
  for (const std::string block : {"peri", "lns"}) {
    for (const std::string norm : {"rms", "bhyt"}) {
      INFO("block " << block << ", norm " << norm);
      GPTConfig c = tiny_gpt(norm, block, 2);
      // BHyT before the head too: behind bhyt's default final RMSNorm ln1.lambda's gradient
      // is small enough here that lambda1 of c_attn, which the block detaches (as the
      // released code does) and the numeric derivative sees, passes the tolerance
      c.final_norm = norm;
      Generator gen(65);
      GPT model(c, gen);
      for (auto& [name, p] : model.named_parameters()) {
        const bool one = (name.find("ln") != std::string::npos || name.find("emb_norm") != std::string::npos) &&
                         name.find("bias") == std::string::npos;
        p.value().copy_from(add_scalar(gen.normal(p.shape(), 0.0f, 0.3f), one ? 1.0f : 0.0f));
      }
      std::vector<int32_t> a = {1, 7, 3, 12, 0, 5, 9, 2}, t = {7, 3, 12, 4, 5, 9, 2, 11};
      Tensor ids = Tensor::from_ints(a, {2, 4}), targets = Tensor::from_ints(t, {2, 4});
      model.zero_grad();
      model.loss(ids, targets).backward();
      // causality: changing the last token leaves the first three positions' logits alone
      {
        NoGradGuard ng;
        Tensor l1 = model.forward(ids).value();
        std::vector<int32_t> b = a;
        b[3] = 15;
        Tensor l2 = model.forward(Tensor::from_ints(b, {2, 4})).value();
        CHECK_CLOSE(l2.slice(1, 0, 3), l1.slice(1, 0, 3), 0, 1e-6);
      }
      // central differences on the largest-|grad| element of every parameter
      for (auto& [name, p] : model.named_parameters()) {
        std::vector<float> g = p.grad().to_vector();
        int64_t best = 0;
        for (int64_t i = 1; i < (int64_t)g.size(); ++i)
          if (std::fabs(g[i]) > std::fabs(g[best])) best = i;
        float* d = p.value().data();
        const float orig = d[best], step = 1e-2f;
        double up, down;
        {
          NoGradGuard ng;
          d[best] = orig + step;
          up = model.loss(ids, targets).item();
          d[best] = orig - step;
          down = model.loss(ids, targets).item();
          d[best] = orig;
        }
        const double fd = (up - down) / (2.0 * step);
        INFO(name << "[" << best << "]: analytic " << g[best] << ", numeric " << fd);
        // as in test_layers: bhyt's numeric derivative also sees the detached c_attn
        CHECK(std::fabs(fd - g[best]) <= 1e-4 + 1e-2 * std::fabs(fd));
      }
    }
  }
}
