// Tests of bhyt_gap (studies/compare/bhyt_gap.h): the long run's verdict and the share of
// BHyT's gap on made-up numbers, the run plan, and the program on a tiny grid (the report,
// --reuse) and on a tuned comparison it must refuse.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "studies/compare/bhyt_gap.h"
#include "tests/needs.h"
#include "tests/studies/study_programs.h"
#include "tests/test_files.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;
namespace fs = std::filesystem;

TEST_CASE("bhyt_gap verdict: slower and catching up, slower and ending worse, worse, level, split seeds",
          "[bhyt-gap]") {
  auto verdict = [](std::vector<double> early, std::vector<double> end, int untrained = 0) {
    return catch_up_verdict("bhyt-released", "ln-released", 500, 5000, early, end, untrained);
  };
  const std::string caught = verdict({5, 6, 4}, {0.5, -0.2, 0.9});
  CHECK_THAT(caught, Contains("`bhyt-released` learns more slowly and catches up") &&
                         Contains("+5.0 % (+4.0 to +6.0) at step 500") &&
                         Contains("+0.4 % (-0.2 to +0.9) at step 5000") && Contains("against `ln-released`"));
  CHECK_THAT(verdict({10, 12, 11}, {5, 6, 4}), Contains("learns more slowly and ends worse"));
  // behind at the end in every seed, but one seed's gap grew: not "slower"
  CHECK_THAT(verdict({3, 4, 5}, {5, 3.5, 4}), Contains("ends worse and does not close the gap"));
  CHECK_THAT(verdict({0.5, 0.2, -0.3}, {0.1, 0.2, 0.3}), Contains("is not behind"));
  CHECK_THAT(verdict({3, 0.5, 4}, {0.1, 0.2, 0.3}),
             Contains("ends level; early it was behind by more than 1 % in 2 of 3 seeds"));
  CHECK_THAT(verdict({4, 4, 4}, {2, 0.5, 3}), Contains("the seeds disagree") && Contains("more than 1 % in 2 of 3"));
  // a gap of exactly 1 % is a tie, just above it is behind
  CHECK_THAT(verdict({4}, {1.0}), Contains("catches up"));
  CHECK_THAT(verdict({4}, {1.01}), Contains("ends worse"));
  // seeds that did not train are counted apart, and alone give no verdict
  CHECK(verdict({}, {}, 3) == "`bhyt-released` did not train in 3 of 3 seeds");
  CHECK_THAT(verdict({10, 12}, {5, 6}, 1), Contains("ends worse") && Contains("did not train in 1 of 3 seeds"));
}

TEST_CASE("bhyt_gap share: a control's gap over BHyT's, undefined when BHyT is not behind", "[bhyt-gap]") {
  CHECK(gap_share(5, 10) == Approx(50));
  CHECK(gap_share(-2, 10) == Approx(-20));
  CHECK(gap_share(12, 10) == Approx(120));
  CHECK(std::isnan(gap_share(5, 0)));
  CHECK(std::isnan(gap_share(5, -3)));
  CHECK(std::isnan(gap_share(NAN, 10)));
}

TEST_CASE("bhyt_gap plan: every control per seed, the long runs at their tuned flags; an untuned arm is named",
          "[bhyt-gap]") {
  const std::map<std::string, std::string> tuned = {{"ln-released", "--lr 3e-3 --warmup 50"},
                                                    {"bhyt-released", "--lr 3e-3 --warmup 500"},
                                                    {"rms-released", "--lr 1e-3 --warmup 50"}};
  const std::vector<std::string> specs = bhyt_gap_run_specs({1, 2}, 5000, 250, tuned, "t.json");
  REQUIRE(specs.size() == 2 * bhyt_gap_controls().size() + 2 * 3);
  CHECK(specs[0] == "ln-released-s1=--recipe bhyt-released --norm ln --seed 1");
  CHECK(std::count(specs.begin(), specs.end(),
                   "rms-gain-fixed-s2=--recipe bhyt-released --norm rms --rms-gain0-attn 0.2 --rms-gain0-mlp 0.1 "
                   "--rms-gain fixed --seed 2") == 1);
  CHECK(std::count(specs.begin(), specs.end(),
                   "long-bhyt-released-s1=--recipe bhyt-released --lr 3e-3 --warmup 500 --steps 5000 --eval-every "
                   "250 --seed 1") == 1);
  CHECK(specs.back() ==
        "long-rms-released-s2=--recipe bhyt-released --norm rms --lr 1e-3 --warmup 50 --steps 5000 --eval-every 250 "
        "--seed 2");
  CHECK_THROWS_WITH(bhyt_gap_run_specs({1}, 5000, 250, {{"ln-released", "--lr 1e-3"}}, "a.json, b.json"),
                    Contains("no tuned run 'bhyt-released'") && Contains("a.json, b.json") &&
                        Contains("compare_norms --tune"));
  // every control but the reference says what it is read against
  for (const SeededArm& a : bhyt_gap_controls()) CHECK((a.label == "ln-released") == a.reference.empty());
}

namespace {

const std::string kTinyGapFlags = "--steps 4 --layers 1 --dim 16 --heads 2 --seq 8 --eval-batches 1 --batch 4";

}  // namespace

TEST_CASE("bhyt_gap: the controls and long runs on a tiny grid, the report, --reuse; a tuned comparison of another "
          "recipe or none is refused before any run",
          "[bhyt-gap][cli][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string tuned = tmp.sub("tuned.md");
  const RunResult t = run_program(kCompareNorms,
                                  kTinyGapFlags + " --out " + tmp.sub("tuning") +
                                      " --arms 'ln-released=--recipe bhyt-released --norm ln,bhyt-released,"
                                      "rms-released=--recipe bhyt-released --norm rms' --tune 'lr=1e-3,2e-3' "
                                      "--tune-bytes 2048 --doc " + tuned,
                                  tmp);
  INFO("tuning: " << t.err);
  REQUIRE(t.code == 0);
  const std::string tuned_json = tmp.sub("tuned.json");
  const std::string out = tmp.sub("gap");
  expect_each_refused(
      kBhytGap, kTinyGapFlags + " --seeds 1", out,
      {{"--tuned-results " + tmp.sub("none.json"), "--tuned-results: no file"},
       {"--tuned-results " + tuned_json + " --layers 2", "a tuned comparison of another recipe (--layers"},
       {"--tuned-results " + tuned_json + " --seeds ''", "--seeds"}},
      tmp);
  const std::string flags =
      kTinyGapFlags + " --seeds 1,2 --long-steps 6 --long-eval-every 2 --tuned-results " + tuned_json;
  // --dry-run prices the runs and trains none
  const RunResult dry = run_program(kBhytGap, flags + " --out " + out + " --dry-run --step-ms 1000 --jobs 2", tmp);
  INFO("dry run: " << dry.out << dry.err);
  REQUIRE(dry.code == 0);
  // 2 x 10 controls of 4 steps and 2 x 3 long runs of 6: 116 s at 2 at a time
  CHECK_THAT(dry.out, Contains("bhyt_gap: 26 runs (2 seeds) in " + out + ", 0 finished already") &&
                          Contains("about 1.0 minutes at 2"));
  CHECK_FALSE(fs::exists(out));
  const RunResult r = run_program(kBhytGap, flags + " --out " + out, tmp);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.code == 0);
  CHECK(fs::exists(out + "/rms-gain-fixed-s2/result.json"));
  CHECK(fs::exists(out + "/long-rms-released-s1/result.json"));
  const nlohmann::json config = nlohmann::json::parse(read_bytes(out + "/long-bhyt-released-s2/config.json"));
  CHECK(config["steps"] == 6);
  CHECK(config["seed"] == 2);
  CHECK(read_csv_rows(out + "/long_val_loss.csv")[0].size() == 1 + 3 * 2);
  // the results keep the validation curves, not the training loss of every step (log.csv has it)
  const nlohmann::json results = nlohmann::json::parse(read_bytes(out + "/results.json"));
  CHECK(results["runs"][0]["train_curve"].empty());
  CHECK_FALSE(results["runs"][0]["curve"].empty());
  const std::string md = read_bytes(out + "/report.md");
  for (const SeededArm& a : bhyt_gap_controls()) CHECK_THAT(md, Contains("| " + a.label + " | " + a.tests + " |"));
  CHECK_THAT(md, Contains("| run | its tuned flags | step 3 | step 4 | step 6 |"));
  // four steps train nothing: every non-reference arm is "did not train", never a verdict
  CHECK_THAT(md, Contains("- `bhyt-released` did not train in 2 of 2 seeds.") &&
                     Contains("- `rms-released` did not train in 2 of 2 seeds."));
  fs::remove(out + "/report.md");
  fs::remove_all(out + "/ln-released-s1");
  const RunResult again = run_program(kBhytGap, flags + " --out " + out + " --reuse", tmp);
  INFO("stderr: " << again.err);
  REQUIRE(again.code == 0);
  CHECK(read_bytes(out + "/report.md") == md);
  CHECK_THAT(run_program(kBhytGap, flags + " --out " + out + " --dry-run", tmp).out, Contains("25 finished"));
}
