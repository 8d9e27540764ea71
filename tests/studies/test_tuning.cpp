// Tests of compare_norms --tune: the selection rule on made-up trials (it reads the tuning
// loss only, the lowest, and never a failed or non-finite trial), the axes as --tune reads
// them, the rows and report of a hand-made tuned results.json, the notes make demo's report
// takes from it, and the program on a tiny grid (studies/compare/tuning.h, tuned_comparison.h).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "studies/compare/compare_norms.h"
#include "studies/compare/tuned_comparison.h"
#include "studies/compare/tuning.h"
#include "tests/needs.h"
#include "tests/studies/demo_doc.h"
#include "tests/studies/study_programs.h"
#include "tests/test_files.h"
#include "train/data/text_data.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;
namespace fs = std::filesystem;

TEST_CASE("select_tuned: the lowest tuning loss of the finished trials, never the reported one", "[tune]") {
  // the reported validation losses favour other trials than the tuning losses do: a rule
  // that read them would pick trial 4 (2.0) or the unfinished 3; the max would be 4 (2.9)
  const std::vector<TuneTrial> trials = {
      {true, NAN, 1.0},    // no tuning loss (its evaluation failed): never chosen, even first
      {true, 2.5, 2.1},
      {true, 2.3, 2.6},    // the best on the tuning split
      {false, 1.0, 1.0},   // did not finish (diverged or failed): its numbers are no result
      {true, 2.9, 2.0},
      {true, INFINITY, 0.5},
  };
  CHECK(select_tuned(trials) == 2);
  // equal tuning losses: the first, so that the choice does not depend on anything else
  CHECK(select_tuned({{true, 2.0, 3.0}, {true, 2.0, 1.0}}) == 0);
  CHECK(select_tuned({{false, 2.0, 2.0}, {true, NAN, 2.0}, {true, -INFINITY, 2.0}}) == -1);
  CHECK(select_tuned({}) == -1);
}

TEST_CASE("--tune axes: NAME=V1,V2;NAME=...; the settings are their product; bad grids named", "[tune]") {
  const std::vector<TuneAxis> axes = parse_tune_axes("lr=3e-4,1e-3,3e-3;warmup=50,500", "--tune");
  REQUIRE(axes.size() == 2);
  CHECK(axes[0].name == "lr");
  CHECK(axes[1].values == std::vector<std::string>{"50", "500"});
  CHECK(tune_setting_count(axes) == 6);
  const std::vector<TuneSetting> s = tune_settings(axes);
  REQUIRE(s.size() == 6);
  CHECK(s[0].label == "lr_3e-4+warmup_50");
  CHECK(s[1].args == std::vector<std::string>{"--lr", "3e-4", "--warmup", "500"});
  CHECK(s[5].label == "lr_3e-3+warmup_500");
  // alpha0: every DyT site's, the per-site flags a recipe sets included
  const std::vector<TuneSetting> d = tune_settings(parse_tune_axes("alpha0=0.1", "--tune-dyt"));
  CHECK(d.at(0).args == std::vector<std::string>{"--dyt-alpha0", "0.1", "--dyt-alpha0-attn", "0.1", "--dyt-alpha0-mlp",
                                                 "0.1", "--dyt-alpha0-final", "0.1"});
  for (const auto& [text, needle] : std::vector<std::pair<std::string, std::string>>{
           {"", "no axis"},
           {"lr", "not NAME=V1,V2"},
           {"lr=", "has no values"},
           {"lr=1e-3;lr=3e-3", "given twice"},
           {"lr=1e-3,1e-3", "names a value twice"},
           {"--lr=1e-3", "not a flag name"},
           {"lr=a/b", "'a/b' of lr"},
           {"out=x", "--out is the study's"},
           {"train-bytes=100", "--train-bytes is the study's"}}) {
    INFO(text);
    CHECK_THROWS_WITH(parse_tune_axes(text, "--tune"), Contains("--tune") && Contains(needle));
  }
}

namespace {

json cell(double tuning, double val, int exit_code = 0) {
  const bool ok = exit_code == 0 && std::isfinite(val);
  return {{"folder", "x"},
          {"exit_code", exit_code},
          {"diverged", !ok},
          {"val_loss", std::isfinite(val) ? json(val) : json()},
          {"train_loss", std::isfinite(val) ? json(val + 0.1) : json()},
          {"tuning_loss", std::isfinite(tuning) ? json(tuning) : json()}};
}

// a run with two settings: (tuning, val) of each, and its shared cell's val
json tuned_run(const std::string& label, const std::string& norm, const std::string& recipe, double shared_val,
               std::pair<double, double> a, std::pair<double, double> b, int b_exit = 0) {
  return {{"label", label},
          {"flags", recipe.empty() ? "--norm " + norm : "--recipe " + recipe},
          {"norm", norm},
          {"block", recipe.empty() ? "pre" : "llama"},
          {"recipe", recipe},
          {"shared", cell(shared_val, shared_val)},
          {"trials", json::array({{{"setting", "lr_1e-3"}, {"flags", "--lr 1e-3"}, {"is_shared", true},
                                   {"cell", cell(a.first, a.second)}},
                                  {{"setting", "lr_3e-3"}, {"flags", "--lr 3e-3"}, {"is_shared", false},
                                   {"cell", cell(b.first, b.second, b_exit)}}})}};
}

json tuned_json(const json& runs) {
  return {{"date", "2026-12-04"}, {"jobs", 2}, {"threads", 1}, {"cores", 2}, {"load", 0.5}, {"seconds", 600.0},
          {"unigram_loss", 3.3},  {"command", "build/release/compare_norms --tune 'lr=1e-3,3e-3'"},
          {"tuning", {{"axes", "lr=1e-3,3e-3"}, {"dyt_axes", "lr=1e-3,3e-3"}, {"settings", 2}, {"tune_bytes", 65536},
                      {"train_bytes", 1000000}}},
          {"recipe", tiny_recipe()}, {"runs", runs}};
}

TunedResults tuned_results(const json& runs) {
  return comparison_results_of<TunedResults>(tuned_json(runs), "", "hand-made");
}

}  // namespace

TEST_CASE("tuned rows: each run at its best on the tuning split, against its ln at ln's best; the report shows "
          "the count and the sweep",
          "[tune]") {
  const TunedResults results = tuned_results(json::array({
      // ln: lr 3e-3 is best on the tuning split (2.30) though its reported val is the worse one
      tuned_run("ln", "ln", "", 2.40, {2.35, 2.40}, {2.30, 2.45}),
      // dyt: stuck at the shared settings; lr 3e-3 trains it, to 2.70 (against ln's best, 2.45)
      tuned_run("dyt", "dyt", "", 3.35, {3.34, 3.35}, {2.69, 2.70}),
      // bhyt: the lower tuning loss diverged, so the finished one is chosen
      tuned_run("bhyt", "bhyt", "", 2.60, {2.55, 2.60}, {1.00, NAN}, 1),
  }));
  const std::vector<TunedRow> rows = tuned_rows(results);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].best_setting == "lr_3e-3");
  CHECK(rows[0].best_val == Approx(2.45));
  CHECK(rows[0].shared_val == Approx(2.40));
  CHECK(rows[1].shared_status == "stuck near unigram loss");
  CHECK(rows[1].best_setting == "lr_3e-3");
  CHECK(rows[1].ln_label == "ln");
  CHECK(rows[1].best_vs_ln == Approx(100.0 * (2.70 - 2.45) / 2.45));
  CHECK(rows[1].best_status == "behind ln by 10.2 %");
  CHECK(rows[2].best_setting == "lr_1e-3");
  CHECK(rows[2].settings == 2);

  const std::string md = render_tuned_report(results);
  CHECK_THAT(md, Contains("**2 settings**") && Contains("build/release/compare_norms --tune 'lr=1e-3,3e-3'") &&
                     Contains("| dyt | - | pre | dyt | 3.3500 | stuck near unigram loss | lr_3e-3 | `--lr 3e-3` | "
                              "2.7000 | 2.6900 | +10.2 % | ln | behind ln by 10.2 % |") &&
                     Contains("| bhyt | lr_3e-3 | `--lr 3e-3` | 1.0000 | - | DIVERGED (NaN/inf) |  |") &&
                     Contains("| ln | lr_1e-3 (= shared) | `--lr 1e-3` | 2.3500 | 2.4000 | finished |  |") &&
                     Contains("| ln | lr_3e-3 | `--lr 3e-3` | 2.3000 | 2.4500 | finished | **best** |"));
  CHECK(md.find("{{") == std::string::npos);
}

TEST_CASE("make demo's report: a row that is not ok says what tuning found, only when tuned results are given",
          "[tune]") {
  const json demo_runs = json::array({demo_run("ln", "pre", "ln", "", 2.4), demo_run("dyt", "pre", "dyt", "", 3.35),
                                      demo_run("bhyt", "pre", "bhyt", "", 2.6),
                                      demo_run("verma", "pre", "dyt", "", 3.36)});
  json tuned_runs = json::array({
      tuned_run("ln", "ln", "", 2.40, {2.35, 2.40}, {2.30, 2.45}),
      tuned_run("dyt", "dyt", "", 3.35, {3.34, 3.35}, {2.69, 2.70}),
      tuned_run("bhyt", "bhyt", "", 2.60, {2.55, 2.60}, {2.56, 2.50}),  // the reported 2.50 is not the choice
  });
  const TunedResults tuned = tuned_results(tuned_runs);
  const DemoResults demo = comparison_results_of<DemoResults>(demo_doc(demo_runs), "", "hand-made");
  const std::string without = render_demo_report(demo);
  CHECK(without.find("What tuning found") == std::string::npos);
  CHECK(without.find("demo_tuned.md)") == std::string::npos);
  const std::string md = render_demo_report(demo, &tuned, "demo_tuned.md");
  CHECK_THAT(md, Contains("What tuning found") &&
                     Contains("- `dyt` (stuck near unigram loss): tuning trains it: its best of 2 settings on the "
                              "tuning split, `lr_3e-3` (`--lr 3e-3`) reaches 2.7000 on validation (3.3500 at the "
                              "shared settings on the same data): behind ln by 10.2 % against ln at its best, 2.4500 "
                              "([demo_tuned.md](demo_tuned.md)).") &&
                     Contains("- `bhyt` (behind ln by 8.3 %): its best of 2 tuned settings on the tuning split, "
                              "`lr_1e-3` (`--lr 1e-3`), reaches 2.6000") &&
                     Contains("- `verma` (stuck near unigram loss): not among the runs of the tuned comparison"));
  CHECK(md.find("- `ln` (") == std::string::npos);  // an ok row says nothing
  // a tuned grid in which nothing trains the stuck run
  tuned_runs[1] = tuned_run("dyt", "dyt", "", 3.35, {3.34, 3.35}, {3.33, 3.36});
  const TunedResults stuck = tuned_results(tuned_runs);
  CHECK_THAT(render_demo_report(demo, &stuck, "demo_tuned.md"),
             Contains("- `dyt` (stuck near unigram loss): none of the 2 settings of the tuned grid trains it: the "
                      "best on the tuning split, `lr_3e-3` (`--lr 3e-3`), reaches 3.3600"));
}

namespace {

const std::string kTinyTuneFlags =
    "--layers 2 --dim 16 --heads 2 --seq 8 --batch 2 --steps 6 --warmup 1 --eval-every 3 --eval-batches 1 --jobs 2";

}  // namespace

TEST_CASE("compare_norms --tune: bad grids refused in one line, exit 2, before any file", "[tune][cli]") {
  TempDir tmp;
  expect_each_refused(kCompareNorms, kTinyTuneFlags, tmp.sub("out"),
                      {{"--runs ln --tune lr", "--tune: 'lr' is not NAME=V1,V2"},
                       {"--runs ln --tune 'lr=1e-3,3e-3' --tune-dyt 'alpha0=1,2,3'",
                        "--tune-dyt: 3 settings, but --tune has 2"},
                       {"--runs ln --tune 'out=x'", "--out is the study's"},
                       {"--runs ln --tune 'bogus=1'", "unknown flag '--bogus'"},
                       {"--runs ln --tune-dyt 'alpha0=1'", "--tune-dyt: only with --tune"},
                       {"--runs ln --tune 'lr=1e-3' --tune-bytes 99999999", "--tune-bytes 99999999"},
                       {"--runs 'x=--norm ln --train-bytes 100' --tune 'lr=1e-3'", "sets --train-bytes"}},
                      tmp);
}

TEST_CASE("compare_norms --tune: a tiny grid, the best chosen on the tuning split; --dry-run writes nothing; --reuse",
          "[tune][cli][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string out = tmp.sub("tuned"), doc = tmp.sub("doc.md");
  const std::string flags =
      kTinyTuneFlags + " --out " + out + " --runs ln,dyt --tune 'lr=1e-3,3e-3' --tune-dyt 'alpha0=0.5,2'";
  const RunResult dry = run_program(kCompareNorms, flags + " --dry-run", tmp);
  INFO("stdout: " << dry.out << "\nstderr: " << dry.err);
  REQUIRE(dry.code == 0);
  CHECK_THAT(dry.out, Contains("2 runs x 2 settings each, 5 cells (0 finished already"));
  CHECK_FALSE(fs::exists(out));

  const RunResult r = run_program(kCompareNorms, flags + " --doc " + doc, tmp);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.code == 0);
  // ln at lr 1e-3 is the shared settings' cell; each cell trained on the text less the tuning split
  CHECK_FALSE(fs::exists(out + "/ln/lr_1e-3"));
  const json config = json::parse(read_bytes(out + "/dyt/alpha0_2/config.json"));
  CHECK(config["dyt_alpha0_final"] == 2.0);
  CHECK(config["train_bytes"] == (int64_t)load_fortunes().train.size() - 65536);
  CHECK(fs::file_size(out + "/tuning.txt") == 65536);
  const json results = json::parse(read_bytes(out + "/results.json"));
  CHECK(results["tuning"]["train_bytes"] == config["train_bytes"]);
  const auto sweep = read_csv_rows(out + "/sweep.csv");
  REQUIRE(sweep.size() == 5);
  CHECK(sweep[0] == std::vector<std::string>{"run", "setting", "flags", "tuning_loss", "val_loss", "train_loss",
                                             "exit_code", "best"});
  // the chosen setting of each run is the one with the lower tuning loss
  for (size_t run = 0; run < 2; ++run) {
    const auto& a = sweep[1 + 2 * run];
    const auto& b = sweep[2 + 2 * run];
    CHECK((std::stod(a[3]) <= std::stod(b[3]) ? a[7] : b[7]) == "1");
  }
  const std::string md = read_bytes(doc);
  CHECK(md == read_bytes(out + "/report.md"));
  CHECK(fs::exists(tmp.sub("doc.json")));
  CHECK_THAT(md, Contains("**2 settings**") && Contains("| dyt | alpha0_2 |") && Contains("--tune lr=1e-3,3e-3"));
  // --reuse renders the same report from results.json alone
  fs::remove_all(out + "/ln");
  fs::remove(out + "/report.md");
  const RunResult again = run_program(kCompareNorms, flags + " --reuse", tmp);
  INFO("stderr: " << again.err);
  REQUIRE(again.code == 0);
  CHECK(read_bytes(out + "/report.md") == md);

  // make demo's report reads the tuned results of its own recipe, and nothing from another one
  const std::string demo = tmp.sub("demo");
  const RunResult plain = run_program(
      kCompareNorms, kTinyTuneFlags + " --out " + demo + " --runs ln,dyt --tuned-results " + tmp.sub("doc.json"), tmp);
  INFO("stderr: " << plain.err);
  REQUIRE(plain.code == 0);
  CHECK_THAT(read_bytes(demo + "/report.md"), Contains("What tuning found") && Contains("[doc.md](doc.md)"));
  const std::string other_recipe = kTinyTuneFlags + " --steps 5 --out " + tmp.sub("demo5");
  const RunResult other =
      run_program(kCompareNorms, other_recipe + " --runs ln,dyt --tuned-results " + tmp.sub("doc.json"), tmp);
  REQUIRE(other.code == 0);
  CHECK_THAT(other.err, Contains("a tuned comparison of another recipe (--steps 6 there, 5 here)"));
  CHECK(read_bytes(tmp.sub("demo5") + "/report.md").find("What tuning found") == std::string::npos);
}
