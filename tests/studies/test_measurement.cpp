// Tests of the regime study's record of one trained GPT (studies/instruments/measurement.h):
// every field holds what the instrument it names gives on its own, the summary averages
// them as documented, the record survives a JSON round trip, and bad batches are refused.
#include <catch2/catch.hpp>

#include <cmath>

#include "studies/instruments/measurement.h"
#include "studies/instruments/regime_metrics.h"
#include "tests/test_util.h"

using namespace nl;
using nl::test::random_ids;
using Catch::Contains;
using nlohmann::json;

namespace {

GPTConfig small(const std::string& norm) {
  GPTConfig c;
  c.vocab = 32, c.layers = 2, c.dim = 16, c.heads = 2, c.context = 8;
  c.norm.name = norm;
  if (norm == "dyt") {
    c.norm.set("dyt-alpha0", 2.0f);
    c.emb_scale0 = 40.0f;  // a partly saturated tanh
  }
  return c;
}

}  // namespace

TEST_CASE("measure_gpt's record holds each instrument's own values", "[measurement]") {
  Generator gen(1);
  GPT model(small("dyt"), gen);
  model.train();
  const std::vector<Tensor> batches = {random_ids(gen, 3, 8, 32), random_ids(gen, 3, 8, 32)};
  MeasureSettings s;
  s.noise_draws = 3;
  s.min_evals = 8;  // width 16: fit the matrices anyway
  const json r = json::parse(measure_gpt(model, batches, s).dump());  // JSON-serialisable, and read back
  CHECK(model.training());  // mode restored

  CHECK(r["settings"]["batches"] == 2);
  CHECK(r["settings"]["batch"] == 3);
  CHECK(r["settings"]["tokens"] == 8);
  CHECK(r["settings"]["noise_draws"] == 3);
  CHECK(r["settings"]["eps"] == json({0.01, 0.1}));

  const std::vector<double> ranks = residual_effective_rank(model, batches[0]);
  const auto noise = residual_noise_stability(model, batches[0], s.eps, s.noise_draws, s.noise_seed);
  const SaturationReport sat = held_out_saturation(model, batches);
  REQUIRE(r["layers"].size() == 3);
  size_t sites_seen = 0;
  for (int l = 0; l <= 2; ++l) {
    const json& layer = r["layers"][l];
    CHECK(layer["layer"] == l);
    CHECK(layer["effective_rank"].get<double>() == Approx(ranks[l]).epsilon(1e-12));
    for (size_t i = 0; i < 2; ++i) {
      CHECK(layer["noise_stability"][i]["eps"] == s.eps[i]);
      CHECK(layer["noise_stability"][i]["mean"].get<double>() == Approx(noise[i][l].mean).epsilon(1e-12));
      CHECK(layer["noise_stability"][i]["std_error"].get<double>() == Approx(noise[i][l].std_error).epsilon(1e-9));
    }
    for (const json& site : layer["saturation"]) {
      const ActStat* want = find_stat(sat.sites, l, site["site"].get<std::string>());
      REQUIRE(want);
      CHECK(site["gt2"].get<double>() == Approx(want->saturation[1]).epsilon(1e-12));
      ++sites_seen;
    }
  }
  CHECK(r["layers"][2]["saturation"][0]["site"] == "ln_f");
  CHECK(sites_seen == 5);  // ln1, ln2 of 2 blocks, ln_f
  CHECK(r["layers"][0]["noise_stability"][0]["mean"].get<double>() == Approx(40.0).epsilon(1e-4));  // the scale

  const Tensor logits = [&] {
    NoGradGuard no_grad;
    model.eval();
    Tensor out = model.forward(batches[0]).value();
    model.train();
    return out;
  }();
  CHECK(r["logits"]["logit_variance"].get<double>() == Approx(logit_variance(logits)).epsilon(1e-6));
  CHECK(r["logits"]["noise_stability"][1]["mean"].get<double>() == Approx(noise[1][3].mean).epsilon(1e-12));

  const HtsrReport htsr = htsr_alphas(model, 8);
  REQUIRE(r["matrices"].size() == htsr.matrices.size());
  for (size_t i = 0; i < htsr.matrices.size(); ++i) {
    CHECK(r["matrices"][i]["name"] == htsr.matrices[i].name);
    CHECK(r["matrices"][i]["fitted"] == true);
    CHECK(r["matrices"][i]["alpha"].get<double>() == Approx(htsr.matrices[i].fit.alpha).epsilon(1e-12));
    CHECK(r["matrices"][i]["tail"] == htsr.matrices[i].fit.tail);
  }

  const json& sum = r["summary"];
  CHECK(sum["saturation"]["gt2"].get<double>() == Approx(sat.mean[1]).epsilon(1e-12));
  CHECK(sum["saturation"]["gt2"].get<double>() > 0.05);  // the test means something
  CHECK(sum["tanh_sites"] == 5);
  CHECK(sum["effective_rank_mean"].get<double>() == Approx((ranks[1] + ranks[2]) / 2).epsilon(1e-12));
  CHECK(sum["noise_stability"] == r["logits"]["noise_stability"]);
  CHECK(sum["logit_variance"] == r["logits"]["logit_variance"]);
  CHECK(sum["alpha_mean"].get<double>() == Approx(htsr.alpha_mean).epsilon(1e-12));
  CHECK(sum["matrices_fitted"] == htsr.fitted);
}

TEST_CASE("measure_gpt on a model without tanh sites or fitted matrices writes nulls; bad batches are refused",
          "[measurement]") {
  Generator gen(2);
  GPT model(small("ln"), gen);
  const std::vector<Tensor> batches = {random_ids(gen, 2, 8, 32)};
  MeasureSettings s;
  s.noise_draws = 2;
  const json r = measure_gpt(model, batches, s);  // default min_evals 50: width 16 fits nothing
  CHECK(r["summary"]["saturation"].is_null());
  CHECK(r["summary"]["tanh_sites"] == 0);
  CHECK(r["summary"]["alpha_mean"].is_null());
  CHECK(r["summary"]["matrices_fitted"] == 0);
  for (const json& layer : r["layers"]) CHECK(layer["saturation"].empty());
  for (const json& m : r["matrices"]) {
    CHECK(m["fitted"] == false);
    CHECK_FALSE(m.contains("alpha"));
  }
  CHECK_THROWS_WITH(measure_gpt(model, {}, s), Contains("no held-out batches"));
  CHECK_THROWS_WITH(measure_gpt(model, {random_ids(gen, 2, 8, 32), random_ids(gen, 2, 4, 32)}, s),
                    Contains("held-out batches of different shapes"));
}
