// Tests of dyt_trains (studies/compare/dyt_trains.h): the verdict on made-up rows, the
// final norm's saturation read from an act_stats.csv by its header, and the program on a
// tiny grid (the report, --reuse).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "studies/compare/dyt_trains.h"
#include "tests/needs.h"
#include "tests/studies/study_programs.h"
#include "tests/test_files.h"
#include "train/io/files.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;
namespace fs = std::filesystem;

TEST_CASE("dyt_trains verdict: the settings that train in every seed, in some, in none, by loss", "[dyt-trains]") {
  const std::vector<TrainsRow> rows = {{"ln", true, 3, 0, 2.4},
                                       {"dyt", false, 3, 3, NAN},
                                       {"dyt-lnf", false, 3, 0, 2.71},
                                       {"dyt-lnf-emb", false, 3, 0, 2.65},
                                       {"dyt-emb", false, 3, 1, 3.0},
                                       {"dyt-a2", false, 3, 3, NAN}};
  CHECK(dyt_trains_verdict(rows) ==
        "In all 3 seeds DyT leaves the unigram plateau with `dyt-lnf-emb` (2.6500), `dyt-lnf` (2.7100); in some seeds "
        "only with `dyt-emb` (3.0000); in none with `dyt`, `dyt-a2`");
  // no setting in every seed: said first; the reference is never judged
  const std::vector<TrainsRow> stuck = {
      {"ln", true, 3, 3, NAN}, {"dyt", false, 3, 3, NAN}, {"dyt-emb", false, 3, 2, 3.1}};
  CHECK(dyt_trains_verdict(stuck) ==
        "No setting of the grid leaves the unigram plateau in all 3 seeds; in some seeds only with `dyt-emb` (3.1000); "
        "in none with `dyt`");
}

TEST_CASE("dyt_trains: the final norm's saturation at the last step, by the header's names", "[dyt-trains]") {
  TempDir tmp;
  const std::string csv = tmp.sub("act_stats.csv");
  write_text_file(csv,
                  "step,layer,site,mean,var,rms,max_abs,sat_gt1,sat_gt2,sat_gt3\n"
                  "0,2,ln_f,0,1,1,1,0.5,0.25,0.1\n"
                  "0,-1,bounded_all,,,,,0.4,0.2,0.1\n"
                  "300,1,ln2,0,1,1,1,0.9,0.8,0.7\n"
                  "300,2,ln_f,0,1,1,1,0.7,0.625,0.5\n"
                  "300,-1,bounded_all,,,,,0.6,0.5,0.4\n");
  CHECK(final_norm_saturation(csv) == Approx(0.625));
  const std::string ln = tmp.sub("ln.csv");
  write_text_file(ln, "step,layer,site,mean,var,rms,max_abs,sat_gt1,sat_gt2,sat_gt3\n300,2,ln_f,0,1,1,1,,,\n");
  CHECK(std::isnan(final_norm_saturation(ln)));
  CHECK(std::isnan(final_norm_saturation(tmp.sub("none.csv"))));
}

TEST_CASE("dyt_trains: every setting per seed on a tiny grid, the report, --reuse",
          "[dyt-trains][cli][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string out = tmp.sub("trains");
  const std::string flags =
      "--steps 4 --layers 1 --dim 16 --heads 2 --seq 8 --eval-batches 1 --batch 4 --seeds 1,2 --out " + out;
  const RunResult r = run_program(::nl::test::build_dir() + "/dyt_trains", flags, tmp);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.code == 0);
  for (const SeededArm& a : dyt_trains_arms()) {
    CHECK(fs::exists(out + "/" + a.label + "-s2/result.json"));
    CHECK_THAT(read_bytes(out + "/report.md"), Contains("| " + a.label + " | " + a.tests + " |"));
  }
  const nlohmann::json results = nlohmann::json::parse(read_bytes(out + "/results.json"));
  // a DyT final norm's saturation is kept; a LayerNorm final norm has none
  for (const auto& run : results["runs"]) {
    INFO(run["label"]);
    const std::string label = run["label"];
    const bool dyt_final = label.rfind("dyt", 0) == 0 && label.find("lnf") == std::string::npos;
    CHECK(run["final_sat2"].is_number() == dyt_final);
  }
  const std::string md = read_bytes(out + "/report.md");
  CHECK_THAT(md, Contains("No setting of the grid leaves the unigram plateau in all 2 seeds"));
  fs::remove(out + "/report.md");
  fs::remove_all(out + "/dyt-s1");
  const RunResult again = run_program(::nl::test::build_dir() + "/dyt_trains", flags + " --reuse", tmp);
  INFO("stderr: " << again.err);
  REQUIRE(again.code == 0);
  CHECK(read_bytes(out + "/report.md") == md);
}
