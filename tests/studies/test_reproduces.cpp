// The rows of the "what reproduces" table that the BHyT and CBWC studies compute
// (studies/depth/depth_report.h: depth_claims; studies/fold/cbwc_claims.h), and the table's
// own rules (studies/reproduces/reproduces.h), on made-up results with known answers.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "studies/depth/depth_report.h"
#include "studies/fold/cbwc_claims.h"
#include "studies/report/claims.h"
#include "studies/reproduces/reproduces.h"
#include "tests/test_files.h"

using namespace nl;
using nlohmann::json;
using Catch::Matchers::Contains;

namespace {

// One depth-study run: its residual-stream variance at layers 0..L at the end, and for a
// BHyT run its site-2 pairs (approx, exact) at every layer.
json depth_run(const std::string& variant, const std::string& block, const std::string& norm, int64_t seed,
               std::vector<double> var_end, double val_loss, std::vector<std::pair<double, double>> site2 = {}) {
  json pairs = json::array();
  for (size_t i = 0; i < site2.size(); ++i) pairs.push_back({(int64_t)i, 100, site2[i].first, site2[i].second});
  const bool bhyt = norm == "bhyt";
  return {{"depth", (int64_t)var_end.size() - 1},
          {"variant", variant},
          {"seed", seed},
          {"exit_code", 0},
          {"kept", false},
          {"block", block},
          {"norm", norm},
          {"kappa", bhyt ? json(10.0) : json()},
          {"train_loss", val_loss},
          {"val_loss", val_loss},
          {"tok_s", 1000.0},
          {"diverged", false},
          {"var_init", std::vector<double>(var_end.size(), 1.0)},
          {"var_end", var_end},
          {"site2", pairs},
          {"lambda_min", bhyt ? json(0.1) : json()},
          {"lambda_max", bhyt ? json(0.2) : json()}};
}

// A depth study's results: 4 layers, 3 seeds of Pre-LN (variance growing 1 -> 16 from
// block 1), LayerNorm Scaling, and BHyT given its per-layer variance and site-2 pairs.
json depth_results(std::vector<double> bhyt_var, std::vector<std::pair<double, double>> site2,
                   double bhyt_val_loss_seed3 = 2.0) {
  json runs = json::array();
  for (int64_t s = 1; s <= 3; ++s) {
    const double wobble = 0.01 * (double)s;
    runs.push_back(depth_run("pre+ln", "pre", "ln", s, {1, 2 + wobble, 4, 8, 32}, 2.0));
    runs.push_back(depth_run("lns+rms", "lns", "rms", s, {1, 2, 3, 4, 5 + wobble}, 2.0));
    std::vector<double> v = bhyt_var;
    for (double& x : v) x += wobble;
    runs.push_back(depth_run("pre+bhyt", "pre", "bhyt", s, v, s == 3 ? bhyt_val_loss_seed3 : 2.0, site2));
  }
  return {{"study", "depth"},     {"recipe", {{"bhyt_p", 0.99}}},
          {"date", "2026-12-04"}, {"command", "depth_study"},
          {"out", "runs/depth"},  {"jobs", 2},
          {"threads", 1},         {"cores", 2},
          {"cells_run", 9},       {"cells_kept", 0},
          {"loads", {1.0}},       {"seconds", 60.0},
          {"depths", {4}},        {"seeds", {1, 2, 3}},
          {"variants", json::array()}, {"plot_script", ""},
          {"speed", nullptr},     {"speed_reps", 0},
          {"runs", runs}};
}

const json* row_with(const json& rows, const std::string& claim_part) {
  for (const json& r : rows)
    if (r["claim"].get<std::string>().find(claim_part) != std::string::npos) return &r;
  return nullptr;
}

const std::vector<std::pair<double, double>> kTracking = {{1.0, 1.0}, {2.0, 2.1}, {3.0, 2.9}, {4.0, 4.2}};

}  // namespace

TEST_CASE("depth_claims: BHyT's flat stream, its place below LayerNorm Scaling, the site-2 correlation",
          "[reproduces]") {
  // BHyT's stream: 1.0 -> 1.3 from block 1 (flat), against Pre-LN's 2 -> 32; below lns at every layer
  const json rows = depth_claims(depth_results({1, 1.0, 1.1, 1.2, 1.3}, kTracking));
  const json* flat = row_with(rows, "flat with depth");
  REQUIRE(flat);
  CHECK((*flat)["status"] == "reproduced");
  CHECK_THAT((*flat)["claim"].get<std::string>(), Contains("4 layers, pre+bhyt against pre+ln"));
  const json* lns = row_with(rows, "below LayerNorm Scaling");
  REQUIRE(lns);
  CHECK((*lns)["status"] == "reproduced");
  CHECK((*lns)["here"] == "below at 4 of 4 layers");
  const json* corr = row_with(rows, "correlate");
  REQUIRE(corr);
  CHECK((*corr)["status"] == "reproduced");
  // no speed section: the speed claim is untestable and says why
  const json* speed = row_with(rows, "cheaper than BHyT*");
  REQUIRE(speed);
  CHECK((*speed)["status"] == "untestable here");
  CHECK_THAT((*speed)["why"].get<std::string>(), Contains("--speed-steps 0"));
}

TEST_CASE("depth_claims: a growing stream, variance above LNS, a poor correlation are not reproduced", "[reproduces]") {
  // BHyT's stream grows as Pre-LN's (2 -> 40 from block 1), above lns at layers 2-4
  const json rows = depth_claims(depth_results({1, 2, 6, 12, 40}, {{1.0, 3.0}, {2.0, 1.0}, {3.0, 4.0}, {4.0, 1.0}}));
  CHECK((*row_with(rows, "flat with depth"))["status"] == "not reproduced");
  CHECK((*row_with(rows, "below LayerNorm Scaling"))["status"] == "not reproduced");
  CHECK((*row_with(rows, "correlate"))["status"] == "not reproduced");
}

TEST_CASE("depth_claims: a BHyT seed that did not learn makes its claims untestable, never reproduced",
          "[reproduces]") {
  const json rows = depth_claims(depth_results({1, 1.0, 1.1, 1.2, 1.3}, kTracking, /*seed 3's loss=*/3.3));
  for (const char* claim : {"flat with depth", "below LayerNorm Scaling", "correlate"}) {
    const json* r = row_with(rows, claim);
    REQUIRE(r);
    CHECK((*r)["status"] == "untestable here");
    CHECK((*r)["why"] == "pre+bhyt did not train in 1 of 3 seeds");
  }
}

TEST_CASE("depth_claims: a results file lacking a field is refused naming it", "[reproduces]") {
  json r = depth_results({1, 1.0, 1.1, 1.2, 1.3}, kTracking);
  r.erase("depths");
  CHECK_THROWS_WITH(depth_claims(r), Contains("depths is missing"));
}

namespace {

// A comparison's run (compare_norms' results.json): label, norm, lr, its validation curve.
json comparison_run(const std::string& label, const std::string& norm, double lr, std::vector<double> curve,
                    int exit_code = 0) {
  json c = json::array();
  for (size_t i = 0; i < curve.size(); ++i) c.push_back({(int64_t)(100 * (i + 1)), std::to_string(curve[i])});
  return {{"label", label},
          {"flags", "--norm " + norm},
          {"exit_code", exit_code},
          {"config", {{"norm", norm}, {"lr", lr}, {"final_norm", ""}}},
          {"curve", c},
          {"train_curve", json::array()},
          {"result",
           {{"diverged", exit_code != 0}, {"val_loss", curve.back()}, {"steps", 300}, {"final_train_loss", 2.5},
            {"seconds", 1.0}}}};
}

// A comparison's results.json (its header, and the runs)
json comparison_of(const json& runs) {
  return {{"date", "2026-12-05"}, {"jobs", 2},       {"threads", 1},          {"cores", 2},
          {"load", 1.0},          {"seconds", 60.0}, {"recipe", json::object()}, {"runs", runs}};
}

json claims_of_runs(const json& runs) { return cbwc_training_claims(comparison_of(runs).get<ComparisonResults>()); }

}  // namespace

TEST_CASE("cbwc_training_claims: cbwc against its ln twin, the same trajectory or not", "[reproduces]") {
  json rows = claims_of_runs({comparison_run("ln", "ln", 1e-3, {2.7, 2.5, 2.4}),
                              comparison_run("rms", "rms", 1e-3, {2.7}),
                              comparison_run("cbwc", "cbwc", 1e-3, {2.7, 2.50001, 2.4})});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["status"] == "reproduced");
  CHECK_THAT(rows[0]["here"].get<std::string>(), Contains("of 3 validation losses"));
  // a difference of 1e-3 nats at one evaluation is another trajectory
  rows = claims_of_runs(
      {comparison_run("ln", "ln", 1e-3, {2.7, 2.5, 2.4}), comparison_run("cbwc", "cbwc", 1e-3, {2.7, 2.501, 2.4})});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["status"] == "not reproduced");
  // a failed run decides nothing
  CHECK(claims_of_runs({comparison_run("ln", "ln", 1e-3, {2.7, 2.5, 2.4}),
                        comparison_run("cbwc", "cbwc", 1e-3, {2.7, 2.5, 2.4}, 2)})[0]["status"] == "untestable here");
  // an ln run at another lr is not cbwc's twin: no row
  CHECK(claims_of_runs(
            {comparison_run("ln", "ln", 3e-3, {2.7, 2.5, 2.4}), comparison_run("cbwc", "cbwc", 1e-3, {2.7, 2.5, 2.4})})
            .empty());
}

TEST_CASE("fold_claims: identical predictions within the threshold, and the speed left to benchmarks",
          "[reproduces]") {
  json gpt = {{"study", "fold"}, {"model", "gpt"}, {"max_logit_diff", 3.3e-6}, {"loss_ln", 2.47},
              {"loss_folded", 2.47}, {"samples_identical", true}};
  json rows = fold_claims(gpt);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["status"] == "reproduced");
  CHECK(rows[1]["status"] == "untestable here");
  gpt["max_logit_diff"] = 1e-3;
  CHECK(fold_claims(gpt)[0]["status"] == "not reproduced");
  gpt["max_logit_diff"] = 1e-6;
  gpt["samples_identical"] = false;
  CHECK(fold_claims(gpt)[0]["status"] == "not reproduced");
  const json vit = {{"model", "vit"}, {"max_logit_diff", 1e-6}, {"images", 10000}, {"same_classes", 9999}};
  CHECK(fold_claims(vit)[0]["status"] == "not reproduced");
  CHECK(fold_claims(json{{"model", "gpt"}})[0]["status"] == "untestable here");
  // a field the verdict reads is refused by name when missing or of another kind: read as
  // false or 0, it printed "not reproduced" from a file that said nothing of it
  json no_samples = gpt;
  no_samples.erase("samples_identical");
  CHECK_THROWS_WITH(fold_claims(no_samples), Contains("samples_identical is missing"));
  json vit_without_images = vit;
  vit_without_images.erase("images");
  CHECK_THROWS_WITH(fold_claims(vit_without_images), Contains("images is missing"));
  json vit_text_count = vit;
  vit_text_count["same_classes"] = "9999";
  CHECK_THROWS_WITH(fold_claims(vit_text_count), Contains("same_classes is a string, not an integer"));
  json text_difference = gpt;
  text_difference["max_logit_diff"] = "1e-6";
  CHECK_THROWS_WITH(fold_claims(text_difference), Contains("max_logit_diff is a string"));
}

TEST_CASE("what_reproduces: which study wrote a results file, and a section per paper", "[reproduces]") {
  CHECK(study_kind(json{{"study", "fold"}}) == "fold");
  CHECK(study_kind(json{{"arms", json::array()}, {"runs", json::array()}}) == "regime");  // before "study"
  CHECK(study_kind(json{{"depths", json::array()}}) == "depth");
  CHECK(study_kind(json{{"runs", json::array()}}) == "comparison");
  CHECK_THROWS_WITH(study_kind(json::object()), Contains("not a results file"));
  CHECK_THROWS_WITH(claim_row("c", "p", "h", "maybe", ""), Contains("unknown status 'maybe'"));

  const json fold = {{"study", "fold"}, {"model", "gpt"}, {"max_logit_diff", 1e-6}, {"samples_identical", true}};
  const std::string page = render_reproduces(
      {{depth_results({1, 1.0, 1.1, 1.2, 1.3}, kTracking), "depth.md"}, {fold, "folding.md"}}, "cmd", "today");
  CHECK_THAT(page, Contains("## BHyT (Byun et al. 2026)"));
  CHECK_THAT(page, Contains("## CBWC + RMSNorm"));
  // no regime page given: its section says so and where its rows come from
  CHECK_THAT(page, Contains("## DyT regimes (Verma 2026)\n\nNo rows: none of the pages given holds its claims"));
  // counts per recipe within a section: BHyT 3 reproduced and the untestable speed
  CHECK_THAT(page, Contains("| the depth study's (GPT-2 block) | 3 | 0 | 0 | 1 |"));
  // a "|" inside a cell (here a run's label) is escaped so that the row keeps its columns
  const json piped =
      comparison_of({comparison_run("ln|a", "ln", 1e-3, {2.7, 2.5}), comparison_run("cbwc", "cbwc", 1e-3, {2.7, 2.5})});
  CHECK_THAT(reproduces_rows({{piped, "f.md"}})[0]["claim"].get<std::string>(), Contains("against ln\\|a)"));
}

TEST_CASE("what_reproduces: a claim of an arm that is not the paper's says how it differs", "[reproduces][cli]") {
  // the committed regime pages' results, through the program: our HardTanh learns an alpha
  // and the paper's has none, so each of its rows must say so (before: only the page's
  // "could not be tested" list did, while the table counted its rows as reproduced)
  test::TempDir tmp;
  const std::string pages = "docs/results/regime_full.md,docs/results/regime_verma.md";
  const test::RunResult r =
      test::run_program(test::build_dir() + "/what_reproduces", "--pages " + pages + " --out " + tmp.sub("r.md"), tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  int rows = 0;
  std::istringstream table(test::read_bytes(tmp.sub("r.md")));
  for (std::string line; std::getline(table, line);) {
    if (line.rfind("| hardtanh-a1 against", 0) != 0) continue;
    ++rows;
    CHECK_THAT(line, Contains("ours learns an alpha, the paper's has none"));
  }
  CHECK(rows == 6);  // three regimes, two recipes
}
