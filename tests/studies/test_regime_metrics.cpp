// Tests of the regime study's measurements of a GPT (studies/instruments/regime_metrics.h) and of the
// DyT screening probe (studies/instruments/screening.h): held-out saturation equals the per-batch
// activation statistics averaged by hand; the effective rank and noise stability of
// layer 0 have known answers (the stream entering block 1 is emb_scale times the
// embedding sum); a model whose logits ignore the input has noise stability 0 there; the
// model's mode is restored; screening refuses what it cannot judge and measures at its step.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "tensor/random.h"
#include "tests/needs.h"
#include "tests/nn/model_fixtures.h"
#include "tests/test_files.h"
#include "tests/test_util.h"
#include "studies/instruments/act_stats.h"
#include "studies/instruments/spectra.h"
#include "studies/instruments/regime_metrics.h"
#include "studies/instruments/screening.h"

using namespace nl;
using nl::test::random_ids;
using Catch::Contains;

namespace {

GPTConfig small_dyt(float emb_scale0) {
  GPTConfig c = nl::test::gpt_config(32, 2, 16, 2, 8, "dyt");
  c.norm.set("dyt-alpha0", 2.0f);
  c.emb_scale0 = emb_scale0;
  return c;
}

}  // namespace

TEST_CASE("held-out saturation is the per-batch saturation of every tanh site averaged over batches", "[regime]") {
  Generator gen(1);
  GPT model(small_dyt(40.0f), gen);  // stream RMS about 1.1, alpha 2: the tanh sites are partly saturated
  model.train();
  std::vector<Tensor> batches = {random_ids(gen, 3, 8, 32), random_ids(gen, 3, 8, 32)};
  const SaturationReport rep = held_out_saturation(model, batches);
  CHECK(model.training());  // mode restored
  // 2 blocks x (ln1, ln2) + ln_f
  REQUIRE(rep.sites.size() == 5);
  const auto a = activation_stats(model, batches[0]), b = activation_stats(model, batches[1]);
  double mean_gt2 = 0;
  for (const ActStat& s : rep.sites) {
    const ActStat *ra = find_stat(a, s.layer, s.site), *rb = find_stat(b, s.layer, s.site);
    REQUIRE(ra);
    REQUIRE(rb);
    for (int k = 0; k < 3; ++k) CHECK(s.saturation[k] == Approx((ra->saturation[k] + rb->saturation[k]) / 2));
    mean_gt2 += s.saturation[1] / 5.0;
  }
  CHECK(rep.mean[1] == Approx(mean_gt2));
  CHECK(rep.mean[1] > 0.05);  // the test means something: not all zero
  CHECK(rep.mean[1] < 0.95);

  GPTConfig ln = small_dyt(0.0f);
  ln.norm.name = "ln";
  GPT ln_model(ln, gen);
  CHECK(held_out_saturation(ln_model, batches).empty());
}

TEST_CASE("effective rank per layer: layer 0 is the centred embedding sum's; every layer is in [1, C]", "[regime]") {
  Generator gen(2);
  GPT model(small_dyt(3.0f), gen);
  Tensor ids = random_ids(gen, 4, 8, 32);
  const std::vector<double> ranks = residual_effective_rank(model, ids);
  REQUIRE(ranks.size() == 3);
  // layer 0 is 3 e: a scalar multiple has the same normalised singular values
  const Tensor e = model.embed(ids).value().contiguous().reshape({-1, 16});
  CHECK(ranks[0] == Approx(centred_effective_rank(e)).epsilon(1e-6));
  CHECK(ranks[0] != Approx(effective_rank(e)).epsilon(1e-4));  // centred, not the plain rank
  for (double r : ranks) {
    CHECK(r >= 1.0);
    CHECK(r <= 16.0);
  }
}

TEST_CASE("noise stability per layer: layer 0 moves by exactly the embedding scale", "[regime]") {
  Generator gen(3);
  for (float scale : {0.0f, 4.0f}) {
    GPT model(small_dyt(scale), gen);
    Tensor ids = random_ids(gen, 2, 8, 32);
    const auto s = residual_noise_stability(model, ids, {0.01, 0.1}, 2, 7);
    REQUIRE(s.size() == 2);  // the two eps
    for (const auto& per_eps : s) {
      REQUIRE(per_eps.size() == 4);  // layers 0, 1, 2 and the logits
      CHECK(per_eps[0].mean == Approx(scale == 0.0f ? 1.0 : scale).epsilon(1e-4));
      for (const NoiseStability& v : per_eps) CHECK(std::isfinite(v.mean));
      CHECK(per_eps[3].mean > 0.0);  // the logits depend on e
    }
  }
}

TEST_CASE("noise stability of a GPT whose output ignores its input is 0 at the logits", "[regime]") {
  // a LayerNorm final norm with gain 0 outputs its bias whatever the stream: constant logits
  GPTConfig c = small_dyt(0.0f);
  c.final_norm = "ln";
  Generator gen(4);
  GPT model(c, gen);
  model.parameter("ln_f.weight").value().fill_(0.0f);
  const auto s = residual_noise_stability(model, random_ids(gen, 2, 8, 32), {0.01}, 3, 7);
  CHECK(s[0][3].mean == 0.0);
  CHECK(s[0][2].mean > 0.0);  // the stream still moves
}

TEST_CASE("screen_dyt refuses other norms, a screening step past the run, and a resume", "[regime]") {
  GPTRunConfig c;
  c.model = small_dyt(0.0f);
  c.steps = 10;
  // the kinds that declare the screen, not every tanh norm without statistics
  for (const NormKind& kind : norm_kinds()) {
    if (kind.screened) continue;
    INFO("norm " << kind.name);
    c.model.norm.name = kind.name;
    CHECK_THROWS_WITH(screen_dyt(c, 5), Contains("applies only to the norms that declare it (dyt)"));
  }
  c.model.norm.name = "dyt";
  CHECK_THROWS_WITH(screen_dyt(c, 11), Contains("must lie in [1, --steps 10]"));
  c.resume = true;
  CHECK_THROWS_WITH(screen_dyt(c, 5), Contains("cannot --resume"));
}

TEST_CASE("screen_dyt trains to the screening step, measures and gives a verdict", "[regime][needs-fortunes]") {
  REQUIRE_RESOURCE(nl::test::missing_fortunes());
  nl::test::TempDir dir;
  GPTRunConfig c;
  c.model = small_dyt(4.0f);
  c.model.vocab = 256;  // bytes
  c.batch = 2, c.steps = 6, c.eval_every = 3, c.eval_batches = 1;
  c.threads = 1, c.quiet = true, c.out_dir = dir.sub("run");
  const ScreenResult r = screen_dyt(c, 3, 2);
  CHECK(r.steps == 3);
  REQUIRE(r.saturation.sites.size() == 5);
  CHECK(r.predicts_help() == (r.saturation_gt2() > 0.43));
  CHECK(std::isfinite(r.val_loss));
  CHECK(std::filesystem::exists(dir.sub("run/checkpoint.safetensors")));
  const std::string msg = screen_message(r);
  CHECK_THAT(msg, Contains("verdict:"));
  CHECK_THAT(msg, Contains("0.43"));
  CHECK_THAT(msg, Contains("weak evidence"));
}
