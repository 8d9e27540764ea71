// The norms' initial gains as options (BHyT's controls, studies/compare/bhyt_gap.h):
// RMSNorm's gain per block site, learnt or fixed, and BHyT's gamma at kappa / lambda.
// Each value is checked against a formula written out here, and the fixed gain's layer
// against loops and finite differences.
#include <catch2/catch.hpp>

#include <cmath>

#include "autograd/gradcheck.h"
#include <nlohmann/json.hpp>

#include "nn/gpt.h"
#include "nn/model_json.h"
#include "nn/norms/norms.h"
#include "nn/norms/registry.h"
#include "tensor/random.h"
#include "tests/test_util.h"

using namespace nl;
using Catch::Contains;

namespace {

NormConfig rms_gains(double attn, double mlp, const std::string& gain) {
  NormConfig c;
  c.name = "rms";
  c.set("rms-gain0-attn", attn).set("rms-gain0-mlp", mlp).set_choice("rms-gain", gain);
  return c;
}

std::vector<float> values_of(const Norm& norm, const std::string& name) {
  for (const auto& [n, p] : norm.named_parameters())
    if (n == name) return p.value().to_vector();
  return {};
}

}  // namespace

TEST_CASE("rms gains: each block site starts at its own gain, the final norm at 1", "[nn][norm-gains]") {
  const NormConfig c = rms_gains(0.2, 0.1, "learnt");
  CHECK(values_of(*make_norm(c, 4, NormPlace::Attention), "weight") == std::vector<float>(4, 0.2f));
  CHECK(values_of(*make_norm(c, 4, NormPlace::Mlp), "weight") == std::vector<float>(4, 0.1f));
  CHECK(values_of(*make_norm(c, 4, NormPlace::Final), "weight") == std::vector<float>(4, 1.0f));
  NormConfig plain;
  plain.name = "rms";
  CHECK(values_of(*make_norm(plain, 4, NormPlace::Attention), "weight") == std::vector<float>(4, 1.0f));
}

TEST_CASE("rms gains: a fixed gain is no parameter and scales x / rms(x); its gradient matches finite differences",
          "[nn][norm-gains]") {
  const NormConfig c = rms_gains(0.2, 0.1, "fixed");
  auto attn = make_norm(c, 5, NormPlace::Attention);
  CHECK(attn->named_parameters().empty());
  CHECK(make_norm(c, 5, NormPlace::Final)->named_parameters().size() == 1);  // ln_f learns its gain
  Generator gen(3);
  const Tensor x = gen.normal({3, 5}, 0.4f, 1.3f);
  const std::vector<float> xs = x.to_vector(), y = attn->forward(Var(x)).value().to_vector(),
                           yc = attn->composite(Var(x)).value().to_vector();
  for (int r = 0; r < 3; ++r) {
    double ms = 0;
    for (int j = 0; j < 5; ++j) ms += (double)xs[r * 5 + j] * xs[r * 5 + j] / 5;
    for (int j = 0; j < 5; ++j) {
      const double want = 0.2 * xs[r * 5 + j] / std::sqrt(ms + 1e-5);
      CHECK(y[r * 5 + j] == Approx(want).epsilon(1e-5));
      CHECK(yc[r * 5 + j] == Approx(want).epsilon(1e-5));
    }
  }
  auto mlp = make_norm(c, 5, NormPlace::Mlp);
  CHECK_GRADCHECK(gradcheck([&](const std::vector<Var>& v) { return mlp->forward(v[0]); }, {x}));
  CHECK_GRADCHECK(gradcheck([&](const std::vector<Var>& v) { return mlp->composite(v[0]); }, {x}));
}

TEST_CASE("bhyt gamma0: kappa-over-lambda starts each site's gamma at kappa / lambda0; lambda 0 is refused",
          "[nn][norm-gains]") {
  for (const char* kind : {"bhyt", "bhyt-exact"}) {
    NormConfig c;
    c.name = kind;
    c.set("bhyt-lambda-attn", 2).set("bhyt-lambda-mlp", 1).set("bhyt-lambda", 4).set("bhyt-p", 0.96);
    CHECK(values_of(*make_norm(c, 3, NormPlace::Attention), "weight") == std::vector<float>(3, 1.0f));
    c.set_choice("bhyt-gamma0", "kappa-over-lambda");
    // kappa = 1 / sqrt(1 - 0.96) = 5
    CHECK(values_of(*make_norm(c, 3, NormPlace::Attention), "weight")[0] == Approx(2.5));
    CHECK(values_of(*make_norm(c, 3, NormPlace::Mlp), "weight")[0] == Approx(5.0));
    if (std::string(kind) == "bhyt-exact")
      CHECK(values_of(*make_norm(c, 3, NormPlace::Final), "weight")[0] == Approx(1.25));
    c.set("bhyt-lambda-mlp", 0);
    CHECK_THROWS_WITH(make_norm(c, 3, NormPlace::Mlp), Contains("--bhyt-gamma0 kappa-over-lambda") &&
                                                           Contains("nonzero initial lambda"));
  }
}

TEST_CASE("bhyt gamma0: for a small argument, BHyT at kappa / lambda is an RMSNorm of gain 1 (the code form)",
          "[nn][norm-gains]") {
  NormConfig c;
  c.name = "bhyt-exact";
  // lambda 0.01: the tanh's argument lambda x / (kappa rms) is below 0.003 in size
  c.set("bhyt-lambda-attn", 0.01).set_choice("bhyt-form", "code").set_choice("bhyt-gamma0", "kappa-over-lambda");
  NormConfig rms;
  rms.name = "rms";
  Generator gen(5);
  const Tensor x = gen.normal({2, 6}, 0.0f, 1.0f);
  const std::vector<float> b = make_norm(c, 6, NormPlace::Attention)->forward(Var(x)).value().to_vector();
  const std::vector<float> r = make_norm(rms, 6, NormPlace::Attention)->forward(Var(x)).value().to_vector();
  for (size_t i = 0; i < b.size(); ++i) CHECK(b[i] == Approx(r[i]).epsilon(1e-4).margin(1e-5));
}

TEST_CASE("norm gains: a description names the gain options only when set, so older checkpoints still match",
          "[nn][norm-gains]") {
  GPTConfig c;
  c.norm.name = "rms";
  const std::string plain = describe_gpt(c);
  CHECK(plain.find("rms_gain") == std::string::npos);
  c.norm = rms_gains(0.2, 1.0, "fixed");
  const nlohmann::json d = nlohmann::json::parse(describe_gpt(c));
  CHECK(d["rms_gain0_attn"] == Approx(0.2));
  CHECK_FALSE(d.contains("rms_gain0_mlp"));  // at its default
  CHECK(d["rms_gain"] == "fixed");
  const GPTConfig back = gpt_config_from_json(describe_gpt(c));
  CHECK(back.norm.choice("rms-gain") == "fixed");
  CHECK(back.norm.option("rms-gain0-attn") == Approx(0.2));
  GPTConfig b;
  b.norm.name = "bhyt";
  CHECK(describe_gpt(b).find("gamma0") == std::string::npos);
  b.norm.set_choice("bhyt-gamma0", "kappa-over-lambda");
  CHECK(nlohmann::json::parse(describe_gpt(b))["bhyt_gamma0"] == "kappa-over-lambda");
}
