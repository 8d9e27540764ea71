// The model options the papers' recipes need, at the nn level: BHyT's released defaults
// (lambda 2 / 1, a final RMSNorm) and its code form, DyT's per-site alpha0 and missing
// beta, linears without biases, an untied head, and the Llama block (RoPE, no learned
// positions). Shapes, parameter names and counts, values against plain loops, gradients
// against finite differences, model descriptions read back, and that the defaults build
// the model they built before.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "nn/gpt.h"
#include "nn/model_json.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"
#include "tensor/ops.h"
#include "tests/nn/naive_layers.h"
#include "tests/param_gradcheck.h"
#include "tests/test_util.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;

namespace {

GPTConfig small(const std::string& norm, const std::string& block = "pre") {
  GPTConfig c;
  c.vocab = 16;
  c.layers = 2;
  c.dim = 8;
  c.heads = 2;
  c.context = 6;
  c.norm.name = norm;
  c.block = block;
  return c;
}

// The Llama model of --block llama with the flags it implies.
GPTConfig llama(const std::string& norm) {
  GPTConfig c = small(norm, "llama");
  c.mlp = "swiglu";
  c.bias = false;
  c.tied_head = false;
  return c;
}

std::set<std::string> parameter_name_set(const Module& m) {
  std::set<std::string> names;
  for (const auto& [name, p] : m.named_parameters()) names.insert(name);
  return names;
}

int64_t count_of(const Module& m) { return m.num_parameters(); }

// Every parameter moved off its initialisation (unit gains, zero biases, equal lambdas
// hide mistakes), lambdas and alphas kept positive and near their scale. Moves of 0.15:
// with 0.3 the loss of the Llama block, whose stream starts as the token embedding
// alone, curves enough that the finite differences' step 1e-2 misses by 6 %.
void perturb_keeping_scalars_positive(GPT& model, Generator& gen) {
  for (auto& [name, p] : model.named_parameters()) {
    const bool scalar = name.find("lambda") != std::string::npos || name.find("alpha") != std::string::npos;
    Tensor r = scalar ? gen.uniform(p.shape(), 0.6f, 1.4f) : gen.normal(p.shape(), 0.0f, 0.15f);
    p.value().copy_from(scalar ? r : add(p.value(), r));
  }
}

void check_gradients(const GPTConfig& c, const std::string& label) {
  Generator gen(71);
  GPT model(c, gen);
  perturb_keeping_scalars_positive(model, gen);
  const Tensor ids = random_ids(gen, 2, 5, c.vocab), targets = random_ids(gen, 2, 5, c.vocab);
  model.zero_grad();
  model.loss(ids, targets).backward();
  const int checked = check_parameter_gradients(
      model,
      [&] {
        NoGradGuard ng;
        return (double)model.loss(ids, targets).item();
      },
      gen, 4, label);
  CHECK(checked > 40);
}

}  // namespace

TEST_CASE("bhyt defaults are the released recipe: lambda 2 before attention, 1 before the MLP, a final RMSNorm",
          "[nn][bhyt]") {
  for (const char* norm : {"bhyt", "bhyt-exact"}) {
    INFO(norm);
    Generator gen(1);
    GPT model(small(norm), gen);
    for (const auto& b : model.blocks) {
      CHECK(static_cast<const BHyT&>(*b->ln1).lambda.value().item() == 2.0f);
      CHECK(static_cast<const BHyT&>(*b->ln2).lambda.value().item() == 1.0f);
      CHECK(static_cast<const BHyT&>(*b->ln1).centred);
    }
    CHECK(dynamic_cast<const RMSNorm*>(model.ln_f.get()) != nullptr);
    CHECK(parameter_name_set(model).count("ln_f.lambda") == 0);
    CHECK(model.config.final_norm_name() == "rms");
    // the old recipe, by its options: BHyT everywhere with lambda 1
    GPTConfig old = small(norm);
    old.final_norm = "bhyt";
    old.norm.set("bhyt-lambda-attn", 1).set("bhyt-lambda-mlp", 1);
    Generator gen2(1);
    GPT before(old, gen2);
    CHECK(static_cast<const BHyT&>(*before.blocks[1]->ln1).lambda.value().item() == 1.0f);
    REQUIRE(dynamic_cast<const BHyT*>(before.ln_f.get()) != nullptr);
    CHECK(static_cast<const BHyT&>(*before.ln_f).lambda.value().item() == 1.0f);
  }
  CHECK(final_norm_kind("ln", "") == "ln");
  CHECK(final_norm_kind("dyt", "") == "dyt");
  CHECK(final_norm_kind("bhyt", "ln") == "ln");
}

TEST_CASE("bhyt code form: the module's denominator is kappa sqrt(mean(x^2) + eps), no centring", "[nn][bhyt]") {
  NormConfig c;
  c.name = "bhyt-exact";
  c.set_choice("bhyt-form", "code");
  CHECK(c.choice("bhyt-form") == "code");
  CHECK(c.option("bhyt-form") == 1);
  auto norm = make_norm(c, 6, NormPlace::Attention);
  const auto& b = static_cast<const BHyT&>(*norm);
  CHECK_FALSE(b.centred);
  Generator gen(2);
  const Tensor x = gen.normal({3, 6}, 2.0f, 1.0f);
  const auto xd = to_d(x);
  std::vector<double> want(3);
  for (int r = 0; r < 3; ++r) {
    double ms = 0;
    for (int e = 0; e < 6; ++e) ms += xd[r * 6 + e] * xd[r * 6 + e] / 6.0;
    want[r] = 10.0 * std::sqrt(ms + 1e-5);
  }
  const Tensor denom = b.denominator(Var(x)).value();
  CHECK_CLOSE(denom, from_d(want, {3, 1}), 1e-6, 1e-6);
  CHECK_CLOSE(b.forward(Var(x)).value(), tanh(mul_scalar(div(x, denom), 2.0f)), 1e-6, 1e-6);
  CHECK_THROWS_WITH(c.set_choice("bhyt-form", "torch"), Contains("paper, code"));
  c.options["bhyt-form"] = 2;
  CHECK_THROWS_WITH(check_norm_config(c), Contains("--bhyt-form"));
}

TEST_CASE("bhyt code form: the block-level site 2 uses the block input's mean square, exact when W_O = 0",
          "[nn][bhyt]") {
  GPTConfig c = small("bhyt");
  c.norm.set_choice("bhyt-form", "code");
  Generator gen(3);
  GPT model(c, gen);
  perturb_keeping_scalars_positive(model, gen);
  const Block& b = *model.blocks[0];
  REQUIRE(b.approximates_site2());
  const auto& s1 = static_cast<const BHyT&>(*b.ln1);
  const auto& s2 = static_cast<const BHyT&>(*b.ln2);
  const Tensor x = gen.normal({2, 5, 8}, 0.7f, 1.0f);
  NoGradGuard ng;
  Var h(add(x, b.attn->forward(b.ln1->forward(Var(x))).value()));
  // by hand: D2 = kappa sqrt(ms(x) + c_attn lambda1^2 / kappa^2 + eps), c_attn = ||W_V W_O||^2 / (T d)
  const float fro2 = b.attn->value_output_frobenius2(), lambda1 = s1.lambda.value().item();
  const double added = fro2 / (5.0 * 8.0) * lambda1 * lambda1 / 100.0;
  const auto xd = to_d(x);
  std::vector<double> denom(10);
  for (int r = 0; r < 10; ++r) {
    double ms = 0;
    for (int e = 0; e < 8; ++e) ms += xd[r * 8 + e] * xd[r * 8 + e] / 8.0;
    denom[r] = 10.0 * std::sqrt(ms + added + 1e-5);
  }
  BHyTSite2 site2 = bhyt_site2_approximation(s1, s2, Var(x), h, (float)(fro2 / 40.0));
  CHECK_CLOSE(site2.denom.value(), from_d(denom, {2, 5}), 1e-5, 1e-6);
  CHECK_CLOSE(site2.y.value(), s2.forward_with_denom(h, Var(from_d(denom, {2, 5}))).value(), 1e-5, 1e-6);
  // W_O = 0: h = x, c_attn = 0, and the approximated site 2 is the exact code-form BHyT of h
  b.attn->proj->weight.value().fill_(0.0f);
  b.attn->proj->bias.value().fill_(0.0f);
  Var h0(add(x, b.attn->forward(b.ln1->forward(Var(x))).value()));
  BHyTSite2 exact = bhyt_site2_approximation(s1, s2, Var(x), h0, 0.0f);
  CHECK_CLOSE(exact.y.value(), s2.forward(h0).value(), 1e-6, 1e-7);
}

TEST_CASE("bhyt-refresh auto: a run of S steps refreshes every max(1, min(1000, S / 50)) steps", "[nn][bhyt]") {
  NormConfig c;
  c.name = "bhyt";
  CHECK(c.option("bhyt-refresh") == 0);  // auto until a run resolves it
  CHECK(resolve_for_run(c, 500).option("bhyt-refresh") == 10);
  CHECK(resolve_for_run(c, 30).option("bhyt-refresh") == 1);
  CHECK(resolve_for_run(c, 1000000).option("bhyt-refresh") == 1000);
  c.set("bhyt-refresh", 7);
  CHECK(resolve_for_run(c, 500).option("bhyt-refresh") == 7);
  c.set("bhyt-refresh", -1);
  CHECK_THROWS_WITH(check_norm_config(c), Contains("--bhyt-refresh") && Contains("auto"));
}

TEST_CASE("dyt per-site alpha0: attention, MLP and final sites start from their own, else from dyt-alpha0",
          "[nn][dyt]") {
  GPTConfig c = small("dyt");
  c.norm.set("dyt-alpha0", 2.0);
  auto alphas = [](const GPT& m) {
    std::vector<float> a;
    for (const auto& b : m.blocks) {
      a.push_back(static_cast<const DyT&>(*b->ln1).alpha.value().item());
      a.push_back(static_cast<const DyT&>(*b->ln2).alpha.value().item());
    }
    a.push_back(static_cast<const DyT&>(*m.ln_f).alpha.value().item());
    return a;
  };
  Generator g1(4), g2(4);
  CHECK(alphas(GPT(c, g1)) == std::vector<float>{2, 2, 2, 2, 2});
  c.norm.set("dyt-alpha0-attn", 0.8).set("dyt-alpha0-mlp", 0.2).set("dyt-alpha0-final", 0.3);
  CHECK(alphas(GPT(c, g2)) == std::vector<float>{0.8f, 0.2f, 0.8f, 0.2f, 0.3f});
  // the description holds every site's value and builds the same model again
  const GPTConfig back = gpt_config_from_json(describe_gpt(c));
  CHECK(back.norm.option("dyt-alpha0-mlp") == Approx(0.2));
  CHECK(describe_gpt(back) == describe_gpt(c));
}

TEST_CASE("dyt without beta: no bias parameters, gamma tanh(alpha x), 2L + 1 fewer vectors", "[nn][dyt]") {
  GPTConfig c = small("dyt");
  Generator g1(5), g2(5);
  GPT with(c, g1);
  c.norm.set_choice("dyt-beta", "off");
  GPT without(c, g2);
  for (const auto& name : parameter_name_set(without))
    CHECK((name.find("ln") == std::string::npos || name.find(".bias") == std::string::npos));
  CHECK(count_of(with) - count_of(without) == (2 * 2 + 1) * 8);
  const auto& n = static_cast<const DyT&>(*without.ln_f);
  CHECK_FALSE(n.bias.defined());
  Generator gen(6);
  const Tensor x = gen.normal({2, 8});
  CHECK_CLOSE(n.forward(Var(x)).value(), tanh(mul_scalar(x, n.alpha.value().item())), 1e-6, 1e-7);
  CHECK(gpt_config_from_json(describe_gpt(c)).norm.choice("dyt-beta") == "off");
}

TEST_CASE("bias off: the blocks' linears have none, the norms keep theirs; forward shapes unchanged", "[nn]") {
  GPTConfig c = small("ln");
  Generator g1(7), g2(7);
  GPT with(c, g1);
  c.bias = false;
  GPT without(c, g2);
  for (const char* n :
       {"blocks.0.attn.qkv.bias", "blocks.1.attn.proj.bias", "blocks.0.mlp.fc.bias", "blocks.1.mlp.proj.bias"}) {
    CHECK(parameter_name_set(with).count(n) == 1);
    CHECK(parameter_name_set(without).count(n) == 0);
  }
  CHECK(parameter_name_set(without).count("blocks.0.ln1.bias") == 1);
  const int64_t C = 8;
  CHECK(count_of(with) - count_of(without) == 2 * (3 * C + C + 4 * C + C));
  // the weights start as in the model with biases (biases draw nothing)
  CHECK(without.blocks[1]->mlp->fc->weight.value().to_vector() == with.blocks[1]->mlp->fc->weight.value().to_vector());
  Generator gen(8);
  NoGradGuard ng;
  CHECK(without.forward(random_ids(gen, 3, 5, 16)).shape() == Shape{3, 5, 16});
}

// Verma's bias=False also removes the norms' beta (--norm-bias off): for every kind that
// has one, no norm keeps a shift, the rest of the model is unchanged, and the gradients
// of the bias-free model are those of the same model with a zero beta.
TEST_CASE("norm bias off: no norm has a beta (ln, cbwc, dyt, hardtanh, derf), the same function as a zero beta",
          "[nn]") {
  for (const char* norm : {"ln", "cbwc", "dyt", "hardtanh", "derf"}) {
    INFO(norm);
    GPTConfig c = small(norm);
    c.bias = false;
    Generator g1(11), g2(11);
    GPT with(c, g1);
    c.norm.bias = false;
    GPT without(c, g2);
    int64_t norm_biases = 0;
    for (const auto& name : parameter_name_set(with))
      if (name.find(".bias") != std::string::npos) {
        CHECK((name.find("ln") != std::string::npos));  // the linears have none (--bias off)
        CHECK(parameter_name_set(without).count(name) == 0);
        ++norm_biases;
      }
    CHECK(norm_biases == 2 * 2 + 1);  // ln1, ln2 per block and ln_f
    CHECK(count_of(with) - count_of(without) == norm_biases * c.dim);
    // described and read back with the switch
    CHECK_FALSE(gpt_config_from_json(describe_gpt(c)).norm.bias);
    CHECK(describe_gpt(c).find("\"norm_bias\":false") != std::string::npos);
    CHECK(describe_gpt(small(norm)).find("norm_bias") == std::string::npos);  // unchanged with the shift
    // the model without beta computes what the model with a zero beta does: its loss and the gradient of every
    // parameter they share (the fused ops without beta are held to finite differences in test_norms.cpp)
    Generator gen(12);
    perturb_keeping_scalars_positive(without, gen);
    for (auto& [name, p] : without.named_parameters())
      for (auto& [wname, wp] : with.named_parameters())
        if (wname == name) wp.value().copy_from(p.value());
    const Tensor ids = random_ids(gen, 2, 5, c.vocab), targets = random_ids(gen, 2, 5, c.vocab);
    with.zero_grad();
    without.zero_grad();
    Var lw = with.loss(ids, targets), lo = without.loss(ids, targets);
    CHECK(lo.item() == Approx(lw.item()).epsilon(1e-6));
    lw.backward();
    lo.backward();
    for (const auto& [name, p] : without.named_parameters())
      for (const auto& [wname, wp] : with.named_parameters())
        if (wname == name) {
          INFO(name);
          CHECK_CLOSE(p.grad(), wp.grad(), 1e-5, 1e-6);
        }
  }
}

TEST_CASE("untied head: lm_head (vocab, dim) of N(0, 0.02), drawn last; the head is used, wte only embeds", "[nn]") {
  GPTConfig c = small("rms");
  c.vocab = 64;
  c.dim = 32;
  c.heads = 4;
  Generator g1(9), g2(9);
  GPT tied(c, g1);
  c.tied_head = false;
  GPT untied(c, g2);
  REQUIRE(untied.lm_head);
  CHECK(untied.lm_head->weight.shape() == Shape{64, 32});
  CHECK(count_of(untied) - count_of(tied) == 64 * 32);
  CHECK(parameter_name_set(untied).count("lm_head.weight") == 1);
  CHECK_FALSE(untied.lm_head->bias.defined());
  double mean = 0, sq = 0;
  for (float v : untied.lm_head->weight.value().to_vector()) mean += v, sq += (double)v * v;
  mean /= 2048, sq /= 2048;
  CHECK(std::fabs(mean) < 0.003);
  CHECK(std::sqrt(sq - mean * mean) == Approx(0.02).epsilon(0.1));
  const auto tied_params = tied.named_parameters(), untied_params = untied.named_parameters();
  REQUIRE(untied_params.size() == tied_params.size() + 1);
  for (size_t i = 0; i < tied_params.size(); ++i) {
    INFO(tied_params[i].first);
    CHECK(untied_params[i].first == tied_params[i].first);
    CHECK(untied_params[i].second.value().to_vector() == tied_params[i].second.value().to_vector());
  }
  CHECK(untied_params.back().first == "lm_head.weight");
  // logits = ln_f(x) lm_head^T: a change of lm_head moves them, wte's table is not the head
  Generator gen(10);
  const Tensor ids = random_ids(gen, 1, 4, 64);
  NoGradGuard ng;
  const Tensor before = untied.forward(ids).value();
  untied.lm_head->weight.value().copy_from(gen.normal({64, 32}, 0.0f, 0.02f));
  CHECK_FALSE(compare(untied.forward(ids).value(), before, 1e-3, 1e-5).ok);
  CHECK(&untied.head_weight() == &untied.lm_head->weight);
  CHECK(&tied.head_weight() == &tied.wte->weight);
}

TEST_CASE("llama block: no wpe, RoPE attention equals plain loops, order matters, causal", "[nn][llama]") {
  Generator gen(11);
  GPT model(llama("rms"), gen);
  CHECK_FALSE(model.wpe);
  const auto names = parameter_name_set(model);
  CHECK(names.count("wpe.weight") == 0);
  CHECK(names.count("lm_head.weight") == 1);
  for (const auto& n : names) CHECK(n.find(".bias") == std::string::npos);  // rms has none, linears none
  CHECK(model.blocks[0]->attn->rope);
  GPTConfig odd = llama("rms");
  odd.dim = 6;
  odd.heads = 2;
  CHECK_THROWS_WITH(odd.validate(), Contains("even head dimension"));
  CHECK(model.blocks[0]->mlp->kind == "swiglu");
  // the attention of block 0 against plain loops with q and k rotated
  const auto& attn = *model.blocks[0]->attn;
  attn.qkv->weight.value().copy_from(gen.normal({24, 8}, 0.0f, 0.6f));
  attn.proj->weight.value().copy_from(gen.normal({8, 8}, 0.0f, 0.4f));
  const Tensor x = gen.normal({2, 6, 8});
  const std::vector<double> zeros24(24, 0.0), zeros8(8, 0.0);
  const auto ref = attention_naive(to_d(x), 2, 6, 8, 2, true, to_d(attn.qkv->weight.value()), zeros24,
                                   to_d(attn.proj->weight.value()), zeros8, /*rope=*/true);
  NoGradGuard ng;
  CHECK_CLOSE(attn.forward(Var(x)).value(), from_d(ref, {2, 6, 8}), 1e-5, 1e-5);
  // without learned positions only the rotation tells positions apart: swapping the first
  // two tokens changes the third position's logits (attention over unrotated keys would
  // not see the order), and a later token never changes an earlier output
  perturb_keeping_scalars_positive(model, gen);
  const Tensor ids = Tensor::from_ints({3, 8, 5, 1, 5, 2}, {1, 6});
  const Tensor logits = model.forward(ids).value();
  const Tensor swapped = model.forward(Tensor::from_ints({8, 3, 5, 1, 5, 2}, {1, 6})).value();
  CHECK_FALSE(compare(swapped.slice(1, 2, 3), logits.slice(1, 2, 3), 1e-3, 1e-4).ok);
  const Tensor changed = Tensor::from_ints({3, 8, 5, 9, 5, 2}, {1, 6});
  CHECK_CLOSE(model.forward(changed).value().slice(1, 0, 3), logits.slice(1, 0, 3), 1e-6, 1e-7);
}

TEST_CASE("gradients of the recipes' models match finite differences", "[nn][llama]") {
  check_gradients(llama("rms"), "llama rms");
  GPTConfig dyt = llama("dyt");
  dyt.norm.set("dyt-alpha0-attn", 1.2).set("dyt-alpha0-mlp", 0.4).set("dyt-alpha0-final", 0.5);
  dyt.norm.set_choice("dyt-beta", "off");
  dyt.emb_scale0 = std::sqrt(8.0f);
  check_gradients(dyt, "dyt-llm");
  GPTConfig bhyt = llama("bhyt");
  bhyt.norm.set_choice("bhyt-form", "code");
  bhyt.tied_head = true;
  check_gradients(bhyt, "bhyt-released");
  GPTConfig exact = small("bhyt-exact");
  exact.norm.set_choice("bhyt-form", "code");
  check_gradients(exact, "bhyt-exact code form");
  GPTConfig verma = small("dyt");
  verma.norm.set("dyt-alpha0", 2.0);
  verma.bias = false;
  check_gradients(verma, "dyt-verma");
}

TEST_CASE("model descriptions: the new fields round-trip, final_norm is written resolved where it is another kind",
          "[nn]") {
  GPTConfig c = llama("bhyt");
  c.norm.set_choice("bhyt-form", "code");
  const std::string d = describe_gpt(c);
  CHECK_THAT(d, Contains("\"bhyt_form\":\"code\"") && Contains("\"bias\":false") &&
                    Contains("\"tied_head\":false") && Contains("\"final_norm\":\"rms\"") &&
                    Contains("\"block\":\"llama\"") && Contains("\"bhyt_lambda_attn\":2"));
  const GPTConfig back = gpt_config_from_json(d);
  CHECK(describe_gpt(back) == d);
  CHECK_FALSE(back.bias);
  CHECK_FALSE(back.tied_head);
  CHECK(back.norm.choice("bhyt-form") == "code");
  // a GPT-2 model's description is as it was before these fields, so that its
  // checkpoints still resume: no bias or tied_head, and final_norm "" for the blocks' kind
  const std::string plain = describe_gpt(small("ln"));
  CHECK_THAT(plain, Contains("\"final_norm\":\"\"") && !Contains("\"bias\"") && !Contains("tied_head"));
  CHECK_THAT(describe_gpt(small("bhyt")), Contains("\"final_norm\":\"rms\""));
  // descriptions written before these fields existed read back as the GPT-2 model
  const GPTConfig old = gpt_config_from_json(
      R"({"arch":"gpt","vocab":16,"layers":1,"dim":8,"heads":2,"context":4,"norm":"ln","final_norm":""})");
  CHECK(old.bias);
  CHECK(old.tied_head);
  CHECK_THROWS_WITH(
      gpt_config_from_json(R"({"vocab":16,"layers":1,"dim":8,"heads":2,"context":4,"norm":"ln","bias":1})"),
      Contains("'bias' is not true or false"));
  CHECK_THROWS_WITH(
      gpt_config_from_json(R"({"vocab":16,"layers":1,"dim":8,"heads":2,"context":4,"norm":"bhyt","bhyt_form":"x"})"),
      Contains("bhyt-form"));
}

TEST_CASE("defaults build the model they built before: GPT-2 block, biases, tied head, one alpha0", "[nn]") {
  const GPTConfig c = small("dyt");
  CHECK(c.block == "pre");
  CHECK(c.bias);
  CHECK(c.tied_head);
  Generator gen(12);
  GPT model(c, gen);
  CHECK(model.wpe);
  CHECK_FALSE(model.lm_head);
  for (const auto& b : model.blocks) CHECK(static_cast<const DyT&>(*b->ln1).alpha.value().item() == 0.5f);
  const std::vector<std::string> first = {"wte.weight", "wpe.weight", "blocks.0.ln1.alpha", "blocks.0.ln1.weight",
                                          "blocks.0.ln1.bias", "blocks.0.attn.qkv.weight"};
  std::vector<std::string> got;
  for (const auto& [name, p] : model.named_parameters()) got.push_back(name);
  got.resize(first.size());
  CHECK(got == first);
}

TEST_CASE("parameter count of dyt-llm at the demo's size, by hand", "[nn][llama]") {
  // V 256, L 4, C 128, T 64, SwiGLU H = round(8C/3) = 341, no biases, untied head, DyT without beta:
  //   qkv 3C^2 = 49152, proj C^2 = 16384, fc C 2H = 87296, proj H C = 43648, 2 DyT (C + 1) = 258
  //   4 blocks 4 * 196738 = 786952; wte V C = 32768, lm_head V C = 32768, final DyT 129, emb_scale 1
  GPTConfig c;
  c.norm.name = "dyt";
  c.norm.set_choice("dyt-beta", "off");
  c.block = "llama";
  c.mlp = "swiglu";
  c.bias = false;
  c.tied_head = false;
  c.emb_scale0 = std::sqrt(128.0f);
  Generator gen(13);
  CHECK(GPT(c, gen).num_parameters() == 786952 + 32768 + 32768 + 129 + 1);
}
