// Tests of LayerNorm folding on the ViT (nn/fold.h, nn/fold_vit.cpp): the detector finds
// all 2L+1 norms foldable with exactly the token sum's parameters and the blocks'
// output projections centred; the folded cbwc ViT computes the ln ViT's logits; the
// fold refuses what is not the cbwc form; the description is read back from JSON.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "nn/fold.h"
#include "tests/nn/vit_fixtures.h"
#include "tests/test_util.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;

namespace {

ViTConfig two_layer(const std::string& norm) {
  ViTConfig c = tiny_config(norm);
  c.layers = 2;
  return c;
}

// Largest |mean| over the rows of m (R, C).
float max_row_mean_f32(const Tensor& m) {
  const Tensor means = nl::mean(m, {1});
  float worst = 0;
  for (float v : means.to_vector()) worst = std::max(worst, std::fabs(v));
  return worst;
}

}  // namespace

// The ViT's stream is [cls ; patches W^T + b] + pos_embed plus the blocks' projections.
// Each norm site k sees the token sum and the projections written before it. Unlike the
// GPT (an embedding lookup, made zero-mean by an inserted centring), every term of the
// token sum is a parameter or a linear: centring cls_token and pos_embed along the
// channels, and the patch projection like any linear, makes the sum zero-mean.
TEST_CASE("fold: every LayerNorm of the ViT folds with its token sum and out-projections centred", "[fold][vit]") {
  Generator gen(30);
  ViT model(two_layer("ln"), gen);
  const FoldReport r = detect_vit(model);
  INFO(r.to_string());
  const std::vector<std::string> sites = {"blocks.0.ln1", "blocks.0.ln2", "blocks.1.ln1", "blocks.1.ln2", "ln_f"};
  REQUIRE(r.norms.size() == sites.size());
  for (size_t k = 0; k < sites.size(); ++k) {
    CHECK(r.norms[k].name == sites[k]);
    CHECK(r.norms[k].verdict.status == ZeroMean::IfCentred);
    // patch W and b, cls_token, pos_embed; then W and b per projection written before
    CHECK(r.norms[k].verdict.needs.size() == 4 + 2 * k);
  }
  CHECK(r.all_foldable());
  std::set<std::string> planned;
  for (const Centring& c : r.plan) {
    CHECK(c.kind == Centring::Kind::Parameter);
    planned.insert(c.name + "@" + std::to_string(c.axis));
  }
  const std::set<std::string> expected = {
      "patch.weight@0", "patch.bias@0", "cls_token@0", "pos_embed@1",
      "blocks.0.attn.proj.weight@0", "blocks.0.attn.proj.bias@0", "blocks.0.mlp.proj.weight@0",
      "blocks.0.mlp.proj.bias@0", "blocks.1.attn.proj.weight@0", "blocks.1.attn.proj.bias@0",
      "blocks.1.mlp.proj.weight@0", "blocks.1.mlp.proj.bias@0"};
  CHECK(planned == expected);
  CHECK(r.insertions().empty());
}

TEST_CASE("fold: a folded ViT computes the ln ViT's logits, with its token sum and projections centred",
          "[fold][vit]") {
  Generator gen(31);
  ViT ln(two_layer("ln"), gen);
  scramble(ln, gen);
  const Tensor images = gen.normal({5, 1, 8, 8}, 0.3f, 1.0f);
  const Tensor expected = ln.forward(Var(images)).value();
  const FoldReport report = detect_vit(ln);
  for (bool weights_folded : {true, false}) {
    INFO("weights_folded " << weights_folded);
    std::shared_ptr<ViT> folded = fold_vit(ln, report, weights_folded);
    CHECK(folded->config.norm.name == "cbwc");
    CHECK(folded->blocks[1]->mlp->proj->folded() == weights_folded);
    CHECK_CLOSE(folded->forward(Var(images)).value(), expected, 1e-4, 1e-4);
    // centred: cls_token and every row of pos_embed sum to zero over the channels, and
    // the patch projection's columns over its outputs; the ln model's did not
    CHECK(max_row_mean_f32(folded->cls_token.value().reshape({1, -1})) < 1e-6);
    CHECK(max_row_mean_f32(folded->pos_embed.value()) < 1e-6);
    CHECK(max_row_mean_f32(folded->patch->weight.value().transpose(0, 1).contiguous()) < 1e-6);
    CHECK(max_row_mean_f32(ln.pos_embed.value()) > 1e-3);
    CHECK_CLOSE(folded->parameter("ln_f.bias").value(), ln.parameter("ln_f.bias").value(), 0, 0);
  }
}

TEST_CASE("fold: fold_vit refuses a model that is not ln, and a report of another graph", "[fold][vit]") {
  Generator gen(32);
  ViT cbwc(two_layer("cbwc"), gen);
  CHECK_THROWS_WITH(fold_vit(cbwc, FoldReport{}), Contains("only an ln model"));
  ViT one(tiny_config("ln"), gen);  // 1 layer: 3 norm sites
  const FoldReport small = detect_vit(one);
  ViT two(two_layer("ln"), gen);
  CHECK_THROWS_WITH(fold_vit(two, small), Contains("3 layer_norm nodes, the ViT has 5"));
  // a plan that leaves a projection uncentred is not the cbwc form
  FoldReport partial = detect_vit(two);
  partial.plan.erase(std::remove_if(partial.plan.begin(), partial.plan.end(),
                                    [](const Centring& c) { return c.name == "blocks.1.mlp.proj.weight"; }),
                     partial.plan.end());
  CHECK_THROWS_WITH(fold_vit(two, partial), Contains("leaves blocks.1.mlp.proj.weight uncentred"));
}

TEST_CASE("fold: a ViT description is read back into a ViTConfig; a GPT's is refused", "[fold][vit]") {
  const ViTConfig c = vit_config_from_json(
      "{\"arch\": \"vit\", \"image\": 28, \"channels\": 1, \"patch\": 4, \"classes\": 10, \"layers\": 3, \"dim\": 24, "
      "\"heads\": 3, \"norm\": \"ln\", \"eps\": 1e-06, \"dyt_alpha0\": 0.5, \"bhyt_lambda\": 1, \"bhyt_p\": 0.99}");
  CHECK(c.patch == 4);
  CHECK(c.layers == 3);
  CHECK(c.dim == 24);
  CHECK(c.heads == 3);
  CHECK(c.norm.eps == 1e-6f);
  CHECK_THROWS_WITH(vit_config_from_json("{\"vocab\": 256, \"layers\": 2, \"norm\": \"ln\"}"), Contains("not a ViT"));
  CHECK_THROWS_WITH(vit_config_from_json("{\"arch\": \"vit\", \"image\": 28, \"channels\": 1, \"patch\": \"x\"}"),
                    Contains("'patch' is not an integer"));
}
