// Tests of nn/module.h on the GPT: the dotted parameter names, the parameter count of
// each norm worked out by hand, train/eval reaching every submodule, and the flat
// parameter buffer (values and grads are views into it).
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "nn/gpt.h"
#include "tests/nn/model_fixtures.h"
#include "tests/test_util.h"

using namespace nl;
using nl::test::random_ids;
using Catch::Contains;

namespace {

GPTConfig small_config(const std::string& norm, int64_t layers = 2) {
  return nl::test::gpt_config(16, layers, 16, 2, 8, norm);
}

std::vector<std::string> names_of(const Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, p] : m.named_parameters()) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("module names: a 2-layer LayerNorm GPT has exactly the GPT-2 parameter names", "[nn]") {
  Generator gen(1);
  GPT model(small_config("ln"), gen);
  std::vector<std::string> expected = {"wte.weight", "wpe.weight"};
  for (const std::string b : {"blocks.0.", "blocks.1."}) {
    for (const std::string n :
         {"ln1.weight", "ln1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias",
          "ln2.weight", "ln2.bias", "mlp.fc.weight", "mlp.fc.bias", "mlp.proj.weight", "mlp.proj.bias"})
      expected.push_back(b + n);
  }
  expected.push_back("ln_f.weight");
  expected.push_back("ln_f.bias");

  std::vector<std::string> got = names_of(model);
  INFO("names: " << [&] {
    std::string s;
    for (auto& n : got) s += n + " ";
    return s;
  }());
  CHECK(got.size() == expected.size());
  CHECK(std::set<std::string>(got.begin(), got.end()).size() == got.size());  // no duplicates
  std::vector<std::string> a = got, b = expected;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  CHECK(a == b);
  // the shapes behind a few names (W stored (out, in))
  CHECK(model.parameter("blocks.0.attn.qkv.weight").shape() == Shape{48, 16});
  CHECK(model.parameter("blocks.1.mlp.fc.weight").shape() == Shape{64, 16});
  CHECK(model.parameter("blocks.1.mlp.proj.weight").shape() == Shape{16, 64});
  CHECK(model.parameter("wpe.weight").shape() == Shape{8, 16});
  CHECK(model.parameter("ln_f.bias").shape() == Shape{16});
  // parameter() hands out the very Var the model computes with
  CHECK(model.parameter("blocks.0.attn.qkv.weight").impl() == model.blocks[0]->attn->qkv->weight.impl());
  CHECK(model.parameter("wte.weight").impl() == model.wte->weight.impl());
}

TEST_CASE("module names: each norm's parameters under ln1, ln2, ln_f", "[nn]") {
  struct Want {
    std::string norm;
    std::vector<std::string> norm_params, final_params;  // final: the default final norm's (bhyt: an RMSNorm)
  };
  const std::vector<Want> wants = {{"ln", {"weight", "bias"}, {"weight", "bias"}},
                                   {"rms", {"weight"}, {"weight"}},
                                   {"cbwc", {"weight", "bias"}, {"weight", "bias"}},
                                   {"dyt", {"alpha", "weight", "bias"}, {"alpha", "weight", "bias"}},
                                   {"bhyt", {"weight", "lambda"}, {"weight"}},
                                   {"bhyt-exact", {"weight", "lambda"}, {"weight"}}};
  for (const auto& w : wants) {
    INFO("norm " << w.norm);
    Generator gen(1);
    GPT model(small_config(w.norm, 1), gen);
    std::set<std::string> got;
    for (auto& n : names_of(model))
      if (n.rfind("blocks.0.ln", 0) == 0 || n.rfind("ln_f.", 0) == 0) got.insert(n);
    std::set<std::string> expected;
    for (const std::string site : {"blocks.0.ln1.", "blocks.0.ln2."})
      for (auto& p : w.norm_params) expected.insert(site + p);
    for (auto& p : w.final_params) expected.insert("ln_f." + p);
    CHECK(got == expected);
    // the rest of the model does not depend on the norm
    CHECK(names_of(model).size() == 2 + 8 + 2 * w.norm_params.size() + w.final_params.size());
  }
}

TEST_CASE("module parameter(): an unknown name throws naming it", "[nn]") {
  Generator gen(1);
  GPT model(small_config("ln"), gen);
  CHECK_THROWS_AS(model.parameter("blocks.7.attn.qkv.weight"), Error);
  CHECK_THROWS_WITH(model.parameter("blocks.0.attn.nope"), Contains("blocks.0.attn.nope"));
}

TEST_CASE("module parameter count of the tiny demo config, by hand", "[nn]") {
  // tiny: V 256, L 4, C 128, T 64 (BENCHMARKS.md: 0.83 M). Per block:
  //   qkv 3C*C + 3C = 49152 + 384 = 49536      attn proj C*C + C = 16384 + 128 = 16512
  //   fc  4C*C + 4C = 65536 + 512 = 66048      mlp proj 4C*C + C = 65536 + 128 = 65664
  //   linears: 197760 = 12 C^2 + 9 C
  // plus 2 norm sites per block and a final one; wte V*C = 32768, wpe T*C = 8192.
  //   ln, cbwc:     2C per site:  4 * (197760 + 512) + 256 + 40960 = 834304
  //   rms:          C per site:   4 * (197760 + 256) + 128 + 40960 = 833152
  //   dyt:     2C + 1 per site:   834304 + 9 = 834313
  //   bhyt:     C + 1 per block site, a final RMSNorm's C:   833152 + 8 = 833160
  const std::vector<std::pair<std::string, int64_t>> counts = {
      {"ln", 834304}, {"cbwc", 834304}, {"rms", 833152}, {"dyt", 834313}, {"bhyt", 833160}, {"bhyt-exact", 833160}};
  for (const auto& [norm, n] : counts) {
    INFO("norm " << norm);
    Generator gen(3);
    GPT model(nl::test::gpt_config(256, 4, 128, 4, 64, norm), gen);
    CHECK(model.num_parameters() == n);
    int64_t sum = 0;
    for (auto& p : model.parameters()) sum += p.value().numel();
    CHECK(sum == n);
  }
}

TEST_CASE("module parameter count of the small test config, by the formula", "[nn]") {
  // V C + T C + L (12 C^2 + 9 C + 2 * 2C) + 2C for LayerNorm; V 16, C 16, T 8, L 2:
  //   256 + 128 + 2 * (3072 + 144 + 64) + 32 = 6976
  Generator gen(1);
  GPT model(small_config("ln"), gen);
  CHECK(model.num_parameters() == 6976);
}

TEST_CASE("module train and eval reach every submodule", "[nn]") {
  Generator gen(1);
  GPT model(small_config("dyt"), gen);
  auto all_modules = [&]() {
    std::vector<const Module*> m = {&model, model.wte.get(), model.wpe.get(), model.ln_f.get()};
    for (auto& b : model.blocks) {
      m.push_back(b.get());
      m.push_back(b->ln1.get());
      m.push_back(b->ln2.get());
      m.push_back(b->attn.get());
      m.push_back(b->attn->qkv.get());
      m.push_back(b->attn->proj.get());
      m.push_back(b->mlp.get());
      m.push_back(b->mlp->fc.get());
      m.push_back(b->mlp->proj.get());
    }
    return m;
  };
  for (auto* m : all_modules()) CHECK(m->training());  // modules start in training mode
  model.eval();
  for (auto* m : all_modules()) CHECK_FALSE(m->training());
  model.train();
  for (auto* m : all_modules()) CHECK(m->training());
  model.train(false);
  for (auto* m : all_modules()) CHECK_FALSE(m->training());
  // a submodule switched alone does not switch its parent
  model.train();
  model.blocks[1]->eval();
  CHECK(model.training());
  CHECK(model.blocks[0]->mlp->fc->training());
  CHECK_FALSE(model.blocks[1]->mlp->fc->training());
}

TEST_CASE("module flatten_parameters: values and grads become views into two buffers", "[nn]") {
  Generator gen(5);
  GPT model(small_config("ln"), gen);
  Generator data_gen(9);
  Tensor ids = random_ids(data_gen, 2, 8, 16), targets = random_ids(data_gen, 2, 8, 16);

  std::vector<std::pair<std::string, Tensor>> before;
  for (auto& [name, p] : model.named_parameters()) before.emplace_back(name, p.value().clone());
  float loss_before;
  {
    NoGradGuard ng;
    loss_before = model.loss(ids, targets).item();
  }

  FlatParameters flat = flatten_parameters(model);
  const int64_t total = model.num_parameters();
  REQUIRE(flat.values.shape() == Shape{total});
  REQUIRE(flat.grads.shape() == Shape{total});
  REQUIRE(flat.params.size() == before.size());
  REQUIRE(flat.offsets.size() == before.size());

  // offsets tile the buffer in order, with no gaps or overlaps
  int64_t next = 0;
  for (size_t i = 0; i < flat.params.size(); ++i) {
    INFO(flat.params[i].first);
    CHECK(flat.offsets[i] == next);
    next += flat.params[i].second.value().numel();
  }
  CHECK(next == total);

  // the values survived the move, the model still computes the same loss
  for (size_t i = 0; i < before.size(); ++i) {
    INFO(before[i].first);
    CHECK(flat.params[i].first == before[i].first);
    CHECK(flat.params[i].second.value().to_vector() == before[i].second.to_vector());
    // the model's own parameter is the same Var as the one in flat.params
    CHECK(model.parameter(before[i].first).impl() == flat.params[i].second.impl());
    CHECK(model.parameter(before[i].first).value().shares_storage(flat.values));
    CHECK(model.parameter(before[i].first).grad().shares_storage(flat.grads));
  }
  {
    NoGradGuard ng;
    CHECK(model.loss(ids, targets).item() == loss_before);
  }

  SECTION("writing the value buffer changes the parameter") {
    Var w = model.parameter("blocks.1.attn.proj.weight");  // (16, 16)
    size_t idx = 0;
    while (flat.params[idx].first != "blocks.1.attn.proj.weight") ++idx;
    const int64_t off = flat.offsets[idx];
    flat.values.data()[off + 2 * 16 + 5] = 42.0f;  // row 2, column 5
    CHECK(w.value().at({2, 5}) == 42.0f);
    flat.values.fill_(0.25f);
    CHECK(model.wte->weight.value().at({3, 1}) == 0.25f);
    CHECK(model.ln_f->parameters()[1].value().at({7}) == 0.25f);  // ln_f.bias
    // and the other way round
    model.blocks[0]->mlp->fc->bias.value().set({63}, -3.0f);
    size_t j = 0;
    while (flat.params[j].first != "blocks.0.mlp.fc.bias") ++j;
    CHECK(flat.values.data()[flat.offsets[j] + 63] == -3.0f);
  }

  SECTION("backward accumulates into the grad buffer") {
    Var loss = model.loss(ids, targets);
    loss.backward();
    double ss = 0;
    for (float g : flat.grads.to_vector()) ss += (double)g * g;
    CHECK(ss > 0);
    for (size_t i = 0; i < flat.params.size(); ++i) {
      INFO(flat.params[i].first);
      const Var& p = flat.params[i].second;
      CHECK(p.grad().shares_storage(flat.grads));
      std::vector<float> slice(flat.grads.data() + flat.offsets[i],
                               flat.grads.data() + flat.offsets[i] + p.value().numel());
      CHECK(p.grad().to_vector() == slice);
    }
    // a second backward adds to the first: the buffer holds twice the gradient
    Tensor once = flat.grads.clone();
    model.loss(ids, targets).backward();
    CHECK_CLOSE(flat.grads, mul_scalar(once, 2.0f), 1e-6, 1e-9);

    SECTION("zero_grad zeroes every grad and keeps them views") {
      model.zero_grad();
      for (float g : flat.grads.to_vector()) CHECK(g == 0.0f);
      for (auto& [name, p] : model.named_parameters()) {
        INFO(name);
        CHECK(p.grad().shares_storage(flat.grads));
      }
      // gradients after zero_grad equal those of a single backward
      model.loss(ids, targets).backward();
      CHECK_CLOSE(flat.grads, once, 1e-6, 1e-9);
    }
    SECTION("filling the grad buffer zeroes every parameter's grad") {
      flat.grads.fill_(0.0f);
      for (auto& [name, p] : model.named_parameters())
        for (float g : p.grad().to_vector()) CHECK(g == 0.0f);
    }
  }
}

TEST_CASE("module zero_grad without a flat buffer", "[nn]") {
  Generator gen(2);
  GPT model(small_config("rms", 1), gen);
  Generator data_gen(3);
  Tensor ids = random_ids(data_gen, 2, 4, 16), targets = random_ids(data_gen, 2, 4, 16);
  model.loss(ids, targets).backward();
  int with_grad = 0;
  for (auto& p : model.parameters())
    if (p.grad().defined()) ++with_grad;
  CHECK(with_grad == (int)model.parameters().size());
  model.zero_grad();
  for (auto& [name, p] : model.named_parameters()) {
    INFO(name);
    REQUIRE(p.grad().defined());
    for (float g : p.grad().to_vector()) CHECK(g == 0.0f);
  }
}
