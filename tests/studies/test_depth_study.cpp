// Tests of the depth study (studies/depth/): its analysis functions on hand-made inputs
// with known answers, and depth_study run as a program on a tiny grid (the report has
// every section, --reuse renders the same report without training, bad input is refused
// before any run).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "studies/depth/depth_analysis.h"
#include "studies/instruments/act_stats.h"
#include "tests/needs.h"
#include "tests/studies/study_programs.h"
#include "tests/test_files.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;
namespace fs = std::filesystem;

TEST_CASE("depth analysis: growth from the embedding and from block 1", "[depth]") {
  const std::vector<double> var = {0.001, 0.5, 1.0, 4.0};  // layers 0..3
  CHECK(growth(var, 0) == Approx(4000.0));
  CHECK(growth(var, 1) == Approx(8.0));
  CHECK(std::isnan(growth({0.1, 0.2}, 1)));  // one block: no growth past block 1
}

TEST_CASE("depth analysis: ranges and the seed-range verdict", "[depth]") {
  const Range r = range_of({3.0, 1.0, 2.0, 10.0});
  CHECK(r.median == Approx(2.5));
  CHECK(r.min == 1.0);
  CHECK(r.max == 10.0);
  CHECK(r.n == 4);
  CHECK(std::isnan(range_of({}).median));
  CHECK(compare_ranges({1.0, 2.0}, {3.0, 4.0}) == RangeVerdict::Held);
  CHECK(compare_ranges({3.0, 5.0}, {1.0, 3.0}) == RangeVerdict::NotHeld);  // a's smallest equals b's largest
  CHECK(compare_ranges({1.0, 3.5}, {3.0, 4.0}) == RangeVerdict::Unclear);
  CHECK(compare_ranges({}, {1.0}) == RangeVerdict::Unclear);
  CHECK(all_layers({RangeVerdict::Held, RangeVerdict::Held}) == RangeVerdict::Held);
  CHECK(all_layers({RangeVerdict::Held, RangeVerdict::Unclear}) == RangeVerdict::Unclear);
  CHECK(all_layers({RangeVerdict::Held, RangeVerdict::NotHeld, RangeVerdict::Unclear}) == RangeVerdict::NotHeld);
  CHECK_THAT(verdict_text(RangeVerdict::Held), Contains("held"));
  CHECK_THAT(verdict_text(RangeVerdict::NotHeld), Contains("did not hold"));
}

TEST_CASE("depth analysis: LayerNorm Scaling's bound lambda/kappa < 1/sqrt(L)", "[depth]") {
  // kappa 10, L 16: the bound is 0.25, so lambda below 2.5 holds
  CHECK(lambda_condition(2.4, 10.0, 16));
  CHECK_FALSE(lambda_condition(2.6, 10.0, 16));
  CHECK_FALSE(lambda_condition(-2.6, 10.0, 16));  // |lambda|
}

TEST_CASE("depth analysis: a run's variances and site-2 pairs are read from its act_stats.csv", "[depth]") {
  TempDir tmp;
  const std::string dir = tmp.sub("run");
  fs::create_directories(dir);
  std::ofstream out(dir + "/act_stats.csv");
  out << act_stats_header() << "\n";
  // two logging points of a 2-block model: resid at layers 0..2, site-2 pairs at layers 0, 1
  for (int step : {0, 10}) {
    for (int l = 0; l <= 2; ++l) out << step << "," << l << ",resid,0," << (step + 1) * (l + 1) << ",1,1,,,\n";
    for (int l = 0; l < 2; ++l) {
      out << step << "," << l << ",site2_var_approx," << 2.0 * (l + 1) << ",0,1,1,,,\n";
      out << step << "," << l << ",site2_var_exact," << 4.0 * (l + 1) << ",0,1,1,,,\n";
    }
  }
  out.close();
  DepthRun run;
  run.depth = 2;
  run.kappa = NAN;  // not a BHyT run: no lambdas are read
  read_depth_run(dir, run);
  CHECK(run.var_init == std::vector<double>{1, 2, 3});
  CHECK(run.var_end == std::vector<double>{11, 22, 33});
  REQUIRE(run.site2.size() == 4);
  CHECK(site2_ratios(run.site2, 1) == std::vector<double>{0.5, 0.5});
  CHECK(std::isnan(run.lambda_max));
}

namespace {

const std::string kTinyDepthFlags =
    "--depths 1,2 --seeds 1,2 --dim 16 --heads 2 --seq 8 --batch 2 --steps 6 --warmup 1 --eval-every 3 "
    "--eval-batches 1 --act-stats-every 2 --speed-steps 0";

}  // namespace

TEST_CASE("depth_study: a tiny grid writes a report with every claim and table; --reuse renders it again",
          "[depth][cli][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const TinyStudy study(kDepthStudy, kTinyDepthFlags, tmp, "depth.md");
  const std::string &runs = study.runs, &doc = study.doc;
  const std::string md = study.run(tmp);
  for (const char* needle :
       {"## Summary: the paper's claims at this scale", "## 1. The residual stream stays flat",
        "## 2. With lambda/kappa < 1/sqrt(L)", "## 3. The block-level approximation", "| 2 | pre+bhyt |",
        "| 1 | lns+rms |", "Pearson r", "pre+bhyt-old", "L/0 at end", "L/1 at end",
        "Regenerate: `build/release/depth_study", "block 1's output", "learnt (seeds)"})
    CHECK_THAT(md, Contains(needle));
  CHECK(md.find("{{") == std::string::npos);
  // each run is an ordinary train_gpt run with its own statistics, config and result
  for (const char* file : {"act_stats.csv", "config.json", "result.json", "checkpoint.safetensors"})
    CHECK(fs::exists(runs + "/L2/pre+bhyt/s2/" + std::string(file)));
  CHECK(fs::exists(runs + "/depth_L2_end.csv"));
  CHECK(fs::exists(runs + "/results.json"));

  // the same command again trains nothing: every cell's finished run is kept
  CHECK_THAT(study.run(tmp), Contains("(0 trained by") && Contains("28 kept"));
  // --reuse renders from results.json alone: the same report
  fs::remove(doc);
  fs::rename(runs + "/L1", tmp.sub("moved"));  // not read by --reuse
  CHECK_THAT(study.run(tmp, " --reuse"), Contains("(0 trained by") && Contains("28 kept"));
}

TEST_CASE("depth_study: bad input is refused before any run, naming the problem", "[depth][cli]") {
  TempDir tmp;
  const std::string out = tmp.sub("bad");
  expect_each_refused(kDepthStudy, kTinyDepthFlags, out, {
           {"--variants nolabel=--norm nope", "nope"},
           {"--variants '=--norm ln'", "plain name"},
           {"--depths 0", "--depths"},
           {"--seeds -1", "--seeds"},
           {"--variants 'a=--bogus 1'", "unknown flag '--bogus'"},
           {"--variants 'a=--norm ln,a=--norm rms'", "given twice"},
           {"--doc /nonexistent/dir/depth.md", "--doc"}}, tmp);
}

TEST_CASE("depth_study --dry-run: the runs priced by their depth, nothing trained", "[depth][cli]") {
  TempDir tmp;
  const std::string out = tmp.sub("dry");
  // depths 2 and 4, one seed, one variant, 10 steps at 600 ms for the 4-layer GPT: 3 s + 6 s
  // over two cores (or 9 s on one) is 0.1 or 0.2 minutes
  const RunResult r = run_program(kDepthStudy,
                                  "--depths 2,4 --seeds 1 --variants 'a=--norm ln' --steps 10 --step-ms 600 --jobs 2 "
                                  "--dry-run --doc " + tmp.sub("d.md") + " --out " + out,
                                  tmp);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Contains("depth_study: 2 runs in " + out + ", 0 finished already (kept); about 0."));
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(fs::exists(tmp.sub("d.md")));
}

TEST_CASE("depth_study under mpirun: the ranks share the grid and the lead writes what one process writes",
          "[depth][cli][mpi][needs-mpi][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_mpi());
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string tiny = "--depths 2 --seeds 1 --dim 16 --heads 2 --seq 8 --batch 2 --steps 4 --warmup 1 "
                           "--eval-every 2 --eval-batches 1 --act-stats-every 2 --speed-steps 0";
  fs::create_directories(tmp.sub("doc"));
  const RunResult one =
      run_program(kDepthStudy, tiny + " --out " + tmp.sub("one") + " --doc " + tmp.sub("doc/one.md"), tmp);
  REQUIRE(one.code == 0);
  const RunResult two = run_program(mpirun_path(),
                                    "--allow-run-as-root --oversubscribe -np 2 " + kMpiDepthStudy + " " + tiny +
                                        " --out " + tmp.sub("two") + " --doc " + tmp.sub("doc/two.md"),
                                    tmp);
  INFO("stderr: " << two.err);
  REQUIRE(two.code == 0);
  const auto a = nlohmann::json::parse(read_bytes(tmp.sub("one/results.json")));
  const auto b = nlohmann::json::parse(read_bytes(tmp.sub("two/results.json")));
  REQUIRE(a["runs"].size() == 7);
  REQUIRE(b["runs"].size() == 7);
  for (size_t i = 0; i < 7; ++i) {
    INFO("run " << a["runs"][i]["variant"]);
    for (const char* key : {"val_loss", "train_loss", "var_end", "site2", "lambda_max"})
      CHECK(a["runs"][i][key] == b["runs"][i][key]);
  }
}

TEST_CASE("depth_study under mpirun: the speed section, which times one process, is left out; --speed is refused",
          "[depth][cli][mpi][needs-mpi][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_mpi());
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string mpi = "--allow-run-as-root --oversubscribe -np 2 " + kMpiDepthStudy + " ";
  // before: the lead alone entered the speed section's train_step, whose all-reduce waited
  // for ranks that had left, until --dist-timeout (300 s by default) ended it with exit 3
  const RunResult grid = run_program(mpirun_path(),
                                     mpi + "--depths 2 --seeds 1 --dim 16 --heads 2 --seq 8 --batch 2 --steps 2 "
                                           "--warmup 1 --eval-every 2 --eval-batches 1 --speed-steps 1 --out " +
                                           tmp.sub("grid") + " --doc " + tmp.sub("g.md"),
                                     tmp);
  INFO("stdout: " << grid.out << "\nstderr: " << grid.err);
  REQUIRE(grid.code == 0);
  CHECK_THAT(grid.out, Contains("speed section: not run under 2 ranks"));
  const auto results = nlohmann::json::parse(read_bytes(tmp.sub("grid/results.json")));
  CHECK(results["speed"].is_null());
  CHECK(results["speed_reps"] == 0);
  const RunResult speed = run_program(mpirun_path(), mpi + "--speed --speed-steps 1", tmp);
  CHECK(speed.code != 0);
  CHECK_THAT(speed.err, Contains("--speed times one process's steps: run it without mpirun (here 2 ranks)"));
}
