// Tests of the foldable-LayerNorm detector and the GPT folding (nn/fold.h). Small graphs
// built here for one rule each, whose verdicts follow from the algebra of NORMS.md:
// a linear then LN (foldable once it is centred), a GELU between (not), a residual
// stream of two linears (both needed), dropout in train and eval mode, attention's
// heads, the orientation of a weight, a change that would reach the output; then the
// Pre-LN GPT, a Post-LN block, a cbwc GPT, and folding a GPT with its logits unchanged.
// Where a verdict says "foldable", the fold is applied by hand and LN is compared with
// RMSNorm + beta; where it says "not foldable", the numbers show why.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "autograd/norms.h"
#include "autograd/ops.h"
#include "nn/fold.h"
#include "tests/nn/model_fixtures.h"
#include "tests/test_util.h"

using namespace nl;
using nl::test::random_ids;
using Catch::Contains;

namespace {

// A module to hang named layers on, so the detector can name their parameters.
struct Bag : Module {
  Generator gen{11};
  std::shared_ptr<Linear> linear(const std::string& name, int64_t in, int64_t out) {
    return register_module(name, std::make_shared<Linear>(in, out, true, gen, 0.5f));
  }
  std::shared_ptr<LayerNorm> norm(const std::string& name, int64_t dim) {
    auto ln = register_module(name, std::make_shared<LayerNorm>(dim, 1e-5f));
    ln->weight.value().copy_from(gen.normal({dim}, 1.0f, 0.3f));  // gamma, beta away from 1, 0
    ln->bias.value().copy_from(gen.normal({dim}, 0.0f, 0.5f));
    return ln;
  }
  Var& param(const std::string& name, Tensor value) { return register_parameter(name, std::move(value)); }
};

// Inputs with a large offset: their rows are far from zero-mean. They require gradients,
// so the ops applied to them are recorded (constants would enter the graph as inputs).
Var input(Generator& gen, const Shape& shape) { return Var(gen.normal(shape, 3.0f, 1.0f), true); }

Var centre(const Var& x) { return ag::sub(x, ag::mean(x, {-1}, true)); }
Var rms_beta(const Var& x, const LayerNorm& ln) { return ag::rms_norm(x, ln.weight, ln.bias, ln.eps); }

// Largest |mean| of the rows over the last axis.
double max_row_mean(const Tensor& t) {
  const auto v = t.contiguous().to_vector();
  const int64_t C = t.size(-1);
  double worst = 0;
  for (size_t r = 0; r < v.size() / C; ++r) {
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += v[r * C + c];
    worst = std::max(worst, std::abs(s / (double)C));
  }
  return worst;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const auto x = a.to_vector(), y = b.to_vector();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, (double)std::fabs(x[i] - y[i]));
  return worst;
}

std::set<std::string> plan_names(const FoldReport& r) {
  std::set<std::string> names;
  for (const auto& c : r.plan)
    if (c.kind == Centring::Kind::Parameter) names.insert(c.name);
  return names;
}

const ZeroMeanVerdict& verdict_of(const FoldReport& r, const std::string& site) {
  for (const auto& s : r.norms)
    if (s.name == site) return s.verdict;
  FAIL("no norm site " << site << " in\n" << r.to_string());
  throw;
}

// How many nodes of `op` the graph behind v holds.
int count_ops(const Var& v, const std::string& op) {
  std::unordered_set<const VarImpl*> seen;
  std::vector<const VarImpl*> stack{v.impl().get()};
  int n = 0;
  while (!stack.empty()) {
    const VarImpl* t = stack.back();
    stack.pop_back();
    if (!t || !seen.insert(t).second || !t->node) continue;
    n += t->node->op == op;
    for (const auto& in : t->node->inputs) stack.push_back(in.get());
  }
  return n;
}

GPTConfig small_gpt(const std::string& norm, float dropout = 0.0f) {
  GPTConfig c = nl::test::gpt_config(19, 2, 16, 4, 8, norm);
  c.dropout = dropout;
  return c;
}

// Every parameter moved off its initialisation, so no centring or norm is trivial:
// gamma near 1, beta and biases of order 0.3, weights of order 0.2.
void perturb(Module& m, Generator& gen) {
  for (auto& [name, p] : m.named_parameters()) {
    Tensor noise = gen.normal(p.shape(), 0.0f, name.find("weight") != std::string::npos ? 0.2f : 0.3f);
    p.value().copy_from(nl::add(p.value(), noise));
  }
}

}  // namespace

TEST_CASE("fold: a linear followed by LayerNorm is foldable once that linear is centred", "[fold]") {
  Bag net;
  auto lin = net.linear("lin", 6, 5);
  auto ln = net.norm("ln", 5);
  Generator gen(1);
  Var x = input(gen, {3, 4, 6});
  Var y = ln->forward(lin->forward(x));
  const FoldReport r = detect_foldable(y, &net);
  INFO(r.to_string());
  REQUIRE(r.norms.size() == 1);
  CHECK(r.norms[0].name == "ln");
  CHECK(r.norms[0].verdict.status == ZeroMean::IfCentred);
  CHECK(r.linears() == std::vector<std::string>{"lin.weight"});
  CHECK(plan_names(r) == std::set<std::string>{"lin.bias", "lin.weight"});
  CHECK(r.insertions().empty());
  for (const auto& c : r.plan) CHECK(c.axis == 0);  // W is (out, in): centred over the outputs
  CHECK_THAT(r.to_string(), Contains("1 foldable (0 as is, 1 if centred)"));

  // Without the centring RMSNorm + beta is not LayerNorm here (the rows have an offset) ...
  CHECK(max_abs_diff(rms_beta(lin->forward(x), *ln).value(), y.value()) > 1e-2);
  // ... with it, the linear's rows are zero-mean and it is, to float rounding.
  centre_parameters(net, r.plan);
  Var z = lin->forward(x);
  CHECK(max_row_mean(z.value()) < 1e-5);
  CHECK_CLOSE(rms_beta(z, *ln).value(), y.value(), 1e-4, 1e-5);
}

TEST_CASE("fold: a GELU between the linear and LayerNorm breaks it, and is named", "[fold]") {
  Bag net;
  auto lin = net.linear("lin", 6, 5);
  auto ln = net.norm("ln", 5);
  Generator gen(2);
  Var y = ln->forward(ag::gelu(lin->forward(input(gen, {4, 6}))));
  const FoldReport r = detect_foldable(y, &net);
  INFO(r.to_string());
  REQUIRE(r.norms.size() == 1);
  const ZeroMeanVerdict& v = r.norms[0].verdict;
  CHECK(v.status == ZeroMean::No);
  CHECK(v.breaker_op == "gelu");
  CHECK_THAT(v.breaker, Contains("after lin"));  // the module it follows
  CHECK_THAT(v.why, Contains("non-linearity"));
  CHECK(r.plan.empty());
  CHECK_THAT(r.to_string(), Contains("not foldable: gelu after lin"));
}

TEST_CASE("fold: a linear with the GELU in its epilogue breaks zero-mean, and is named", "[fold]") {
  Bag net;
  auto lin = net.linear("lin", 6, 5);
  auto ln = net.norm("ln", 5);
  Generator gen(2);
  Var y = ln->forward(lin->forward(input(gen, {4, 6}), Activation::Gelu));
  const FoldReport r = detect_foldable(y, &net);
  INFO(r.to_string());
  REQUIRE(r.norms.size() == 1);
  const ZeroMeanVerdict& v = r.norms[0].verdict;
  CHECK(v.status == ZeroMean::No);
  CHECK(v.breaker_op == "linear");
  CHECK_THAT(v.breaker, Contains("lin"));
  CHECK_THAT(v.why, Contains("GELU"));
  CHECK(r.plan.empty());
}

// One bias b in two linears: y1 = x W1^T + b, read by ln1 (foldable once W1 and b are
// centred), and y2 = act(x W2^T + b), read by ln2, which ignores a shift of its input.
// Centring b shifts y2's every row by a constant: harmless when act is the identity, but
// the GELU would turn it into a change of ln2's input. So the fused GELU must block it.
TEST_CASE("fold: a centring whose shift reaches the GELU of a fused linear is refused", "[fold]") {
  for (Activation act : {Activation::None, Activation::Gelu}) {
    const bool gelu = act == Activation::Gelu;
    INFO((gelu ? "with" : "without") << " the GELU");
    Bag net;
    Generator gen(5);
    Var w1 = net.param("w1", gen.normal({5, 6})), w2 = net.param("w2", gen.normal({5, 6}));
    Var b = net.param("b", gen.normal({5}));
    auto ln1 = net.norm("ln1", 5), ln2 = net.norm("ln2", 5);
    const Var x = input(gen, {4, 6});
    Var y = ag::add(ln1->forward(ag::linear(x, w1, b)), ln2->forward(ag::linear(x, w2, b, act)));
    const FoldReport r = detect_foldable(y, &net);
    INFO(r.to_string());
    const ZeroMeanVerdict& v = verdict_of(r, "ln1");
    if (!gelu) {
      CHECK(v.status == ZeroMean::IfCentred);
      CHECK(plan_names(r) == std::set<std::string>{"b", "w1", "w2"});
      continue;
    }
    CHECK(v.status == ZeroMean::No);
    CHECK(v.breaker_op == "linear");
    CHECK_THAT(v.why, Contains("GELU"));
    CHECK_THAT(v.change, Contains("centring b"));
  }
}

// x -> xc = x - mean(x);  h = xc + lin1(ln_a(xc));  y = ln_b(h + lin2(gelu(fc(ln_c(h)))))
// ln_a reads a centred input: foldable as is. ln_c reads h: lin1 must be centred. ln_b
// reads h + lin2(...): lin1 and lin2. fc feeds a GELU, not the stream: never named.
TEST_CASE("fold: a residual stream of two linears needs both centred, and nothing else", "[fold]") {
  Bag net;
  auto ln_a = net.norm("ln_a", 8), ln_b = net.norm("ln_b", 8), ln_c = net.norm("ln_c", 8);
  auto lin1 = net.linear("lin1", 8, 8), fc = net.linear("fc", 8, 12), lin2 = net.linear("lin2", 12, 8);
  Generator gen(3);
  Var x = input(gen, {2, 3, 8});
  auto forward = [&](bool folded) {
    auto norm = [&](const LayerNorm& ln, const Var& v) { return folded ? rms_beta(v, ln) : ln.forward(v); };
    Var xc = centre(x);
    Var h = ag::add(xc, lin1->forward(norm(*ln_a, xc)));
    return norm(*ln_b, ag::add(h, lin2->forward(ag::gelu(fc->forward(norm(*ln_c, h))))));
  };
  Var y = forward(false);
  const FoldReport r = detect_foldable(y, &net);
  INFO(r.to_string());
  REQUIRE(r.norms.size() == 3);
  CHECK(verdict_of(r, "ln_a").status == ZeroMean::Yes);
  CHECK(verdict_of(r, "ln_c").status == ZeroMean::IfCentred);
  CHECK(verdict_of(r, "ln_c").needs.size() == 2);  // lin1's W and b
  CHECK(verdict_of(r, "ln_b").needs.size() == 4);  // lin1's and lin2's
  CHECK(r.linears() == std::vector<std::string>{"lin1.weight", "lin2.weight"});
  CHECK(plan_names(r) == std::set<std::string>{"lin1.bias", "lin1.weight", "lin2.bias", "lin2.weight"});

  centre_parameters(net, r.plan);
  CHECK_CLOSE(forward(true).value(), y.value(), 1e-4, 1e-5);
}

// The same stream with the MLP reading h itself: centring lin1 shifts h, which fc reads,
// so the fold would change the MLP's output. The detector must refuse and say so.
TEST_CASE("fold: a centring whose shift reaches a linear's input is refused, naming that linear", "[fold]") {
  Bag net;
  auto ln_b = net.norm("ln_b", 8);
  auto lin1 = net.linear("lin1", 8, 8), fc = net.linear("fc", 8, 12), lin2 = net.linear("lin2", 12, 8);
  Generator gen(4);
  Var xc = centre(input(gen, {2, 3, 8}));
  auto forward = [&](bool folded) {
    Var h = ag::add(xc, lin1->forward(xc));
    Var z = ag::add(h, lin2->forward(ag::gelu(fc->forward(h))));
    return folded ? rms_beta(z, *ln_b) : ln_b->forward(z);
  };
  Var y = forward(false);
  const FoldReport r = detect_foldable(y, &net);
  INFO(r.to_string());
  const ZeroMeanVerdict& v = verdict_of(r, "ln_b");
  CHECK(v.status == ZeroMean::No);
  CHECK(v.breaker_op == "linear");  // a Linear records one op, ag::linear
  CHECK_THAT(v.breaker, Contains("fc"));
  CHECK_THAT(v.change, Contains("centring lin1"));
  CHECK(r.plan.empty());

  // Centring lin1 and lin2 anyway does make the norm input zero-mean, but changes y.
  std::vector<Centring> plan;
  for (const char* name : {"lin1.weight", "lin1.bias", "lin2.weight", "lin2.bias"})
    plan.push_back({Centring::Kind::Parameter, nullptr, 0, name, false});
  centre_parameters(net, plan);
  CHECK(max_abs_diff(forward(true).value(), y.value()) > 1e-3);
}

TEST_CASE("fold: a change that would shift the graph's output is refused", "[fold]") {
  Bag net;
  auto lin = net.linear("lin", 5, 5);
  auto ln = net.norm("ln", 5);
  Generator gen(5);
  Var z = lin->forward(input(gen, {3, 5}));
  Var out = ag::add(ln->forward(z), z);  // z also reaches the output without a norm
  const FoldReport r = detect_foldable(out, &net);
  INFO(r.to_string());
  REQUIRE(r.norms.size() == 1);
  CHECK(r.norms[0].verdict.status == ZeroMean::No);
  CHECK(r.norms[0].verdict.breaker_op == "output");
  CHECK_THAT(r.norms[0].verdict.change, Contains("centring lin."));
  CHECK_THAT(r.to_string(), Contains("would change the graph's output"));
}

TEST_CASE("fold: dropout breaks zero-mean in training mode and keeps it in eval mode", "[fold]") {
  Bag net;
  auto lin = net.linear("lin", 6, 6);
  auto ln = net.norm("ln", 6);
  Generator gen(6), masks(7);
  Var xc = centre(input(gen, {4, 6}));
  auto detect = [&](float p, bool training) {
    Var y = ln->forward(ag::add(xc, ag::dropout(lin->forward(xc), p, training, masks)));
    return detect_foldable(y, &net);
  };
  const FoldReport train = detect(0.5f, true);
  INFO(train.to_string());
  CHECK(train.norms[0].verdict.status == ZeroMean::No);
  CHECK(train.norms[0].verdict.breaker_op == "dropout");
  CHECK_THAT(train.norms[0].verdict.breaker, Contains("after lin"));

  const FoldReport eval = detect(0.5f, false);
  INFO(eval.to_string());
  CHECK(eval.norms[0].verdict.status == ZeroMean::IfCentred);
  CHECK(eval.linears() == std::vector<std::string>{"lin.weight"});

  // p = 0 in training mode is the identity
  CHECK(detect(0.0f, true).norms[0].verdict.status == ZeroMean::IfCentred);

  // why training-mode dropout breaks it: a zero-mean row, masked, is no longer zero-mean
  Var zc = centre(input(gen, {16, 32}));
  CHECK(max_row_mean(zc.value()) < 1e-5);
  CHECK(max_row_mean(ag::dropout(zc, 0.5f, true, masks).value()) > 1e-2);
}

// Heads split the channel axis. matmul(P, v) is zero-mean over hd when v is, for any P:
// sum_j (P v)_tj = sum_s P_ts sum_j v_sj. Merging heads back, (B, T, H, hd) -> (B, T, C),
// keeps it. But a row zero-mean over all C channels, split into heads, is not zero-mean
// per head, and different P per head mix the heads' sums differently: broken at the split.
TEST_CASE("fold: attention keeps zero-mean per head; splitting channels into heads breaks it", "[fold]") {
  const int64_t B = 2, H = 3, T = 4, hd = 5, C = H * hd;
  Bag net;
  auto ln = net.norm("ln", C);
  Generator gen(8);
  Var P = ag::softmax(input(gen, {B, H, T, T}));
  auto merge_heads = [&](const Var& y) { return ag::reshape(ag::permute(y, {0, 2, 1, 3}), {B, T, C}); };

  Var v = centre(input(gen, {B, H, T, hd}));  // zero-mean within each head
  Var per_head = merge_heads(ag::matmul(P, v));
  const FoldReport good = detect_foldable(ln->forward(per_head), &net);
  INFO(good.to_string());
  CHECK(good.norms[0].verdict.status == ZeroMean::Yes);
  CHECK(max_row_mean(per_head.value()) < 1e-5);

  Var xc = centre(input(gen, {B, T, C}));  // zero-mean over all channels only
  Var split = ag::permute(ag::reshape(xc, {B, T, H, hd}), {0, 2, 1, 3});
  Var mixed = merge_heads(ag::matmul(P, split));
  const FoldReport bad = detect_foldable(ln->forward(mixed), &net);
  INFO(bad.to_string());
  CHECK(bad.norms[0].verdict.status == ZeroMean::No);
  CHECK(bad.norms[0].verdict.breaker_op == "reshape");
  CHECK_THAT(bad.norms[0].verdict.why, Contains("splits"));
  CHECK(max_row_mean(mixed.value()) > 1e-3);  // and indeed it is not zero-mean
}

TEST_CASE("fold: the fused attention op keeps zero-mean per head from its values, like matmul(P, v)", "[fold]") {
  const int64_t B = 2, H = 3, T = 4, hd = 5, C = H * hd;
  Bag net;
  auto ln = net.norm("ln", C);
  Generator gen(9);
  const Var q = input(gen, {B, H, T, hd}), k = input(gen, {B, H, T, hd});
  auto merge_heads = [&](const Var& y) { return ag::reshape(ag::permute(y, {0, 2, 1, 3}), {B, T, C}); };

  Var per_head = merge_heads(ag::attention(q, k, centre(input(gen, {B, H, T, hd})), 0.5f, true));
  const FoldReport good = detect_foldable(ln->forward(per_head), &net);
  INFO(good.to_string());
  CHECK(good.norms[0].verdict.status == ZeroMean::Yes);
  CHECK(max_row_mean(per_head.value()) < 1e-5);

  Var xc = centre(input(gen, {B, T, C}));
  Var split = ag::permute(ag::reshape(xc, {B, T, H, hd}), {0, 2, 1, 3});
  const FoldReport bad = detect_foldable(ln->forward(merge_heads(ag::attention(q, k, split, 0.5f, true))), &net);
  INFO(bad.to_string());
  CHECK(bad.norms[0].verdict.breaker_op == "reshape");
  CHECK_THAT(bad.norms[0].verdict.why, Contains("splits"));
}

// y = x op(W) is zero-mean over its outputs when every row of op(W) sums to zero: for
// x W (W stored (in, out)) that is W centred along axis 1; for x W^T (W stored (out, in),
// as Linear) along axis 0. W is square, so only the values tell the two layouts apart.
TEST_CASE("fold: a weight is centred along the axis the matmul reads as outputs", "[fold]") {
  for (bool trans_b : {false, true}) {
    Bag net;
    Generator gen(9);
    Var W = net.param("w", gen.normal({4, 4}, 0.5f, 1.0f));
    auto ln = net.norm("ln", 4);
    Var x = input(gen, {6, 4});
    Var y = ln->forward(ag::matmul(x, W, false, trans_b));
    const FoldReport r = detect_foldable(y, &net);
    INFO("trans_b " << trans_b << "\n" << r.to_string());
    REQUIRE(r.plan.size() == 1);
    CHECK(r.plan[0].name == "w");
    CHECK(r.plan[0].axis == (trans_b ? 0 : 1));
    CHECK(r.plan[0].linear_weight);
    centre_parameters(net, r.plan);
    CHECK_CLOSE(rms_beta(ag::matmul(x, W, false, trans_b), *ln).value(), y.value(), 1e-4, 1e-5);
  }
}

TEST_CASE("fold: centre_parameters subtracts each column's mean over the outputs", "[fold]") {
  Bag net;
  Var W = net.param("w", Tensor::from_vector({1, 2, 3, 4, 5, 9}, {3, 2}));
  Var b = net.param("b", Tensor::from_vector({1, 2, 6}, {3}));
  centre_parameters(net, {{Centring::Kind::Parameter, nullptr, 0, "w", true},
                          {Centring::Kind::Parameter, nullptr, 0, "b", false}});
  // column means 3 and 5; mean of b 3
  CHECK_CLOSE(W.value(), Tensor::from_vector({-2, -3, 0, -1, 2, 4}, {3, 2}), 0, 1e-6);
  CHECK_CLOSE(b.value(), Tensor::from_vector({-2, -1, 3}, {3}), 0, 1e-6);
  CHECK_THROWS_WITH(centre_parameters(net, {{Centring::Kind::Parameter, nullptr, 0, "nope", false}}),
                    Contains("nope"));
}

// The Pre-LN GPT's stream is x0 + attention and MLP out-projections. Norm site k sees
// the embedding sum and the projections written before it: blocks.l.ln1 those of blocks
// < l, blocks.l.ln2 also blocks.l.attn.proj, ln_f all of them. q/k/v and the MLP
// up-projection feed attention and the GELU, never a norm input, so are never named.
TEST_CASE("fold: every LayerNorm of the Pre-LN GPT folds with the embedding centred and the out-projections centred",
          "[fold]") {
  Generator gen(10);
  GPT model(small_gpt("ln"), gen);
  const FoldReport r = detect_gpt(model);
  INFO(r.to_string());
  const std::vector<std::string> sites = {"blocks.0.ln1", "blocks.0.ln2", "blocks.1.ln1", "blocks.1.ln2", "ln_f"};
  REQUIRE(r.norms.size() == sites.size());
  for (size_t k = 0; k < sites.size(); ++k) {
    CHECK(r.norms[k].name == sites[k]);
    CHECK(r.norms[k].verdict.status == ZeroMean::IfCentred);
    CHECK(r.norms[k].verdict.needs.size() == 1 + 2 * k);  // the insertion, then W and b per projection
    CHECK(r.norms[k].verdict.needs[0].kind == Centring::Kind::After);
  }
  CHECK(r.all_foldable());
  CHECK(r.linears() == std::vector<std::string>{"blocks.0.attn.proj.weight", "blocks.0.mlp.proj.weight",
                                                "blocks.1.attn.proj.weight", "blocks.1.mlp.proj.weight"});
  REQUIRE(r.insertions().size() == 1);  // one centring after the sum, not one per embedding
  CHECK_THAT(r.insertions()[0], Contains("add(embedding wte, embedding wpe)"));
  CHECK(r.plan.size() == 9);
  CHECK_THAT(r.to_string(), Contains("5 foldable (0 as is, 5 if centred), 0 not foldable"));
}

// Post-LN: h = LN1(x + Attn(x)), out = LN2(h + MLP(h)).
//  - x an input: LN1's input contains x itself, which nothing makes zero-mean: not
//    foldable, "input". LN2's input contains h, a norm's affine output gamma*xhat + beta,
//    whose mean is mean(gamma*xhat) + mean(beta), not 0: not foldable, "layer_norm ln1".
//  - x centred explicitly: LN1 folds once attn.proj is centred; LN2 still cannot.
//  - x an embedding lookup: centring after it would also change what attention reads
//    (its qkv projection), so LN1 is refused, naming attn.qkv's matmul; LN2 as before.
// The residual stream of Post-LN is made of normalised outputs: only Pre-LN folds.
struct PostLN : Module {
  std::shared_ptr<Embedding> wte;
  std::shared_ptr<SelfAttention> attn;
  std::shared_ptr<MLP> mlp;
  std::shared_ptr<LayerNorm> ln1, ln2;
  PostLN(int64_t dim, Generator& gen) {
    wte = register_module("wte", std::make_shared<Embedding>(11, dim, gen));
    attn = register_module("attn", std::make_shared<SelfAttention>(dim, 2, true, gen, 0.02f, false));
    ln1 = register_module("ln1", std::make_shared<LayerNorm>(dim, 1e-5f));
    mlp = register_module("mlp", std::make_shared<MLP>(dim, gen, 0.02f, false));
    ln2 = register_module("ln2", std::make_shared<LayerNorm>(dim, 1e-5f));
  }
  Var forward(const Var& x) const {
    Var h = ln1->forward(ag::add(x, attn->forward(x)));
    return ln2->forward(ag::add(h, mlp->forward(h)));
  }
};

TEST_CASE("fold: a Post-LN block: the second norm never folds, the first only from a centred input", "[fold]") {
  Generator gen(12);
  PostLN block(8, gen);
  Var x = input(gen, {2, 3, 8});

  const FoldReport plain = detect_foldable(block.forward(x), &block);
  INFO(plain.to_string());
  REQUIRE(plain.norms.size() == 2);
  CHECK(verdict_of(plain, "ln1").status == ZeroMean::No);
  CHECK(verdict_of(plain, "ln1").breaker_op == "input");
  CHECK(verdict_of(plain, "ln2").status == ZeroMean::No);
  CHECK(verdict_of(plain, "ln2").breaker_op == "layer_norm");
  CHECK_THAT(verdict_of(plain, "ln2").breaker, Contains("ln1"));

  const FoldReport centred = detect_foldable(block.forward(centre(x)), &block);
  INFO(centred.to_string());
  CHECK(verdict_of(centred, "ln1").status == ZeroMean::IfCentred);
  CHECK(centred.linears() == std::vector<std::string>{"attn.proj.weight"});
  CHECK(verdict_of(centred, "ln2").breaker_op == "layer_norm");

  const Tensor ids = random_ids(gen, 2, 3, 11);
  const FoldReport embedded = detect_foldable(block.forward(block.wte->forward(ids)), &block);
  INFO(embedded.to_string());
  CHECK(verdict_of(embedded, "ln1").status == ZeroMean::No);
  CHECK(verdict_of(embedded, "ln1").breaker_op == "linear");
  CHECK_THAT(verdict_of(embedded, "ln1").breaker, Contains("attn.qkv"));
  CHECK_THAT(verdict_of(embedded, "ln1").change, Contains("after embedding wte"));
  CHECK(verdict_of(embedded, "ln2").breaker_op == "layer_norm");
  CHECK(embedded.plan.empty());
}

TEST_CASE("fold: a cbwc GPT has no layer_norm, and every rms_norm input is already zero-mean", "[fold]") {
  Generator gen(13);
  GPT cbwc(small_gpt("cbwc"), gen);
  Var logits = cbwc.forward(random_ids(gen, 2, 8, 19));
  CHECK(detect_foldable(logits, &cbwc).norms.empty());
  const FoldReport r = detect_foldable(logits, &cbwc, "rms_norm");
  INFO(r.to_string());
  REQUIRE(r.norms.size() == 5);
  for (const auto& s : r.norms) CHECK(s.verdict.status == ZeroMean::Yes);
  CHECK(r.plan.empty());

  // an rms GPT builds the same norm sites without the centring: none is zero-mean as is
  GPT rms(small_gpt("rms"), gen);
  const FoldReport rr = detect_foldable(rms.forward(random_ids(gen, 2, 8, 19)), &rms, "rms_norm");
  INFO(rr.to_string());
  REQUIRE(rr.norms.size() == 5);
  for (const auto& s : rr.norms) CHECK(s.verdict.status != ZeroMean::Yes);
}

TEST_CASE("fold: GPT dropout is a node only when p > 0; in training it breaks folding, in eval it does not", "[fold]") {
  Generator gen(14);
  const Tensor ids = random_ids(gen, 2, 8, 19);
  Generator g0(15), g1(15);
  GPT plain(small_gpt("ln"), g0), dropped(small_gpt("ln", 0.1f), g1);  // same initialisation
  dropped.dropout_gen.manual_seed(3);
  CHECK(count_ops(plain.forward(ids), "dropout") == 0);
  Var train_logits = dropped.forward(ids);
  CHECK(count_ops(train_logits, "dropout") == 4);  // two per block

  const FoldReport train = detect_foldable(train_logits, &dropped);
  INFO(train.to_string());
  CHECK(verdict_of(train, "blocks.0.ln1").status == ZeroMean::IfCentred);  // before any dropout
  CHECK(verdict_of(train, "blocks.0.ln2").breaker_op == "dropout");
  CHECK(verdict_of(train, "ln_f").breaker_op == "dropout");
  CHECK(detect_gpt(dropped).all_foldable());  // detect_gpt runs in eval mode
  CHECK(dropped.training());                   // and restores the mode

  // masks differ between training forwards; eval is the dropout-free model exactly
  CHECK(max_abs_diff(dropped.forward(ids).value(), train_logits.value()) > 1e-6);
  dropped.eval();
  plain.eval();
  CHECK_CLOSE(dropped.forward(ids).value(), plain.forward(ids).value(), 0, 0);
  CHECK_THROWS_WITH(GPT(small_gpt("ln", 1.0f), gen), Contains("dropout"));
}

TEST_CASE("fold: a folded GPT computes the ln GPT's logits, with centred projections and RMSNorm + beta", "[fold]") {
  Generator gen(16);
  GPT ln(small_gpt("ln"), gen);
  perturb(ln, gen);
  const Tensor ids = random_ids(gen, 3, 8, 19);
  const Tensor expected = ln.forward(ids).value();
  const FoldReport report = detect_gpt(ln);  // needs recording on: no NoGradGuard here
  for (bool weights_folded : {true, false}) {
    INFO("weights_folded " << weights_folded);
    std::shared_ptr<GPT> folded = fold_gpt(ln, report, weights_folded);
    CHECK(folded->config.norm.name == "cbwc");
    CHECK(folded->blocks[0]->attn->proj->centred());
    CHECK(folded->blocks[1]->mlp->proj->folded() == weights_folded);
    Var logits = folded->forward(ids);
    CHECK_CLOSE(logits.value(), expected, 1e-4, 1e-4);
    // folded weights are used as they are: the only mean left is the embedding centring;
    // recomputed, each of the 2L centred linears adds one for W and one for b
    CHECK(count_ops(logits, "mean") == (weights_folded ? 1 : 1 + 2 * 2 * 2));
    // V has zero-sum columns, c sums to zero; LN gamma/beta became RMSNorm's by name
    const Tensor V = folded->parameter("blocks.1.attn.proj.weight").value();
    CHECK(max_row_mean(V.transpose(0, 1).contiguous()) < 1e-6);
    CHECK(max_row_mean(folded->parameter("blocks.0.mlp.proj.bias").value().reshape({1, -1})) < 1e-6);
    CHECK(max_row_mean(ln.parameter("blocks.1.attn.proj.weight").value().transpose(0, 1).contiguous()) > 1e-3);
    CHECK_CLOSE(folded->parameter("ln_f.bias").value(), ln.parameter("ln_f.bias").value(), 0, 0);
  }
}

TEST_CASE("fold: fold_gpt refuses a model whose plan is not the cbwc form", "[fold]") {
  Generator gen(17);
  GPT cbwc(small_gpt("cbwc"), gen);
  CHECK_THROWS_WITH(fold_gpt(cbwc, FoldReport{}), Contains("only an ln model"));
  // a training-mode graph with dropout: the norms after a dropout are not foldable
  GPT dropped(small_gpt("ln", 0.1f), gen);
  const FoldReport train = detect_foldable(dropped.forward(random_ids(gen, 1, 8, 19)), &dropped);
  CHECK_THROWS_WITH(fold_gpt(dropped, train), Contains("blocks.0.ln2 is not foldable: dropout"));
  // a report of another graph (one LayerNorm) does not fit the GPT's 2L + 1 sites
  Bag net;
  auto ln = net.norm("ln", 4);
  const FoldReport other = detect_foldable(ln->forward(centre(input(gen, {2, 4}))), &net);
  GPT plain(small_gpt("ln"), gen);
  CHECK_THROWS_WITH(fold_gpt(plain, other), Contains("1 layer_norm nodes"));
}

TEST_CASE("fold: the model description of a checkpoint is read back into a GPTConfig", "[fold]") {
  const GPTConfig c = gpt_config_from_json(
      "{\"vocab\": 256, \"layers\": 3, \"dim\": 48, \"heads\": 6, \"context\": 32, \"norm\": \"ln\", "
      "\"eps\": 1e-06, \"dyt_alpha0\": 0.5, \"bhyt_lambda\": 1, \"bhyt_p\": 0.9}");
  CHECK(c.vocab == 256);
  CHECK(c.layers == 3);
  CHECK(c.dim == 48);
  CHECK(c.heads == 6);
  CHECK(c.context == 32);
  CHECK(c.norm.name == "ln");
  CHECK(c.norm.eps == 1e-6f);
  CHECK((float)c.norm.option("bhyt-p") == 0.9f);
  CHECK_THROWS_WITH(
      gpt_config_from_json("{\"vocab\": 256, \"dim\": 8, \"heads\": 2, \"context\": 4, \"norm\": \"ln\"}"),
      Contains("'layers'"));
  CHECK_THROWS_WITH(gpt_config_from_json("{\"vocab\": \"2x\", \"layers\": 1, \"dim\": 8, \"heads\": 2, "
                                         "\"context\": 4, \"norm\": \"ln\"}"),
                    Contains("'vocab' is not an integer"));
  CHECK_THROWS_WITH(gpt_config_from_json("{\"vocab\": 2x, \"layers\": 1, \"dim\": 8, \"heads\": 2, \"context\": 4, "
                                         "\"norm\": \"ln\"}"),
                    Contains("not valid JSON"));
  CHECK_THROWS_WITH(gpt_config_from_json("{\"vocab\": 2, \"layers\": 1, \"dim\": 8, \"heads\": 3, \"context\": 4, "
                                         "\"norm\": \"ln\"}"),
                    Contains("divisible"));
  CHECK_THROWS_AS(gpt_config_from_json("[1, 2]"), Error);
}
