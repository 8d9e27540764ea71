// Tests of the depth study's stages as values (studies/depth/): the flags parsed into a
// plan of cells, the plan priced, the typed records written and read back, the report
// rendered from made-up results. Nothing here trains or spawns a process.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "studies/depth/depth_flags.h"
#include "studies/depth/depth_plan.h"
#include "studies/depth/depth_records.h"
#include "studies/depth/depth_report.h"
#include "tests/studies/command_lines.h"
#include "tests/studies/results_doc.h"
#include "tests/test_files.h"

namespace fs = std::filesystem;
using namespace nl;
using namespace nl::test;
using Catch::Contains;

namespace {

DepthFlags parsed_depth_flags(const std::vector<std::string>& args) {
  DepthFlags f;
  REQUIRE(parse_depth_flags(args, f));
  return f;
}

size_t count_of(const std::vector<std::string>& args, const std::string& flag) {
  return (size_t)std::count(args.begin(), args.end(), flag);
}

// One made-up run of a 2-layer cell: its residual-stream variance at layers 0..2 at the
// end, its losses, and for a BHyT run kappa 10 and lambdas 1..2.
DepthCellSummary made_up_run(const std::string& arm, const std::string& block, const std::string& norm,
                             std::vector<double> var_end, double train_loss, double val_loss) {
  DepthCellSummary s;
  s.block = block, s.norm = norm;
  DepthRun& r = s.run;
  r.variant = arm, r.depth = 2, r.seed = 1, r.exit_code = 0;
  r.train_loss = train_loss, r.val_loss = val_loss, r.tok_s = 1000;
  r.var_init = {1, 1, 1};
  r.var_end = std::move(var_end);
  const bool bhyt = norm == "bhyt";
  r.kappa = bhyt ? 10.0 : NAN;
  r.lambda_min = bhyt ? 1.0 : NAN;
  r.lambda_max = bhyt ? 2.0 : NAN;
  return s;
}

// Made-up results: one seed at 2 layers of Pre-LN (variance 1 -> 2 -> 8) and BHyT
// (0.5 -> 1 -> 1.5), at the recipe of depth_study's defaults.
DepthResults made_up_results() {
  DepthResults d;
  d.date = "2026-01-02", d.command = "depth_study --made-up", d.out = "runs/made-up";
  d.jobs = 2, d.threads = 1, d.cores = 2, d.loads = {1.0, 3.0};
  d.recipe = json::parse(parsed_depth_flags({}).recipe.dump());
  d.cells_run = 2, d.seconds = 90;
  d.depths = {2}, d.seeds = {1};
  d.arms = {{"pre+ln", "--block pre --norm ln"}, {"pre+bhyt", "--block pre --norm bhyt"}};
  d.runs = {made_up_run("pre+ln", "pre", "ln", {1, 2, 8}, 2.5, 2.4),
            made_up_run("pre+bhyt", "pre", "bhyt", {0.5, 1, 1.5}, 2.6, 2.55)};
  d.plot_script = "";
  return d;
}

// The same with a second seed of BHyT that stopped (exit 1: no profiles, no losses).
DepthResults with_a_failed_run() {
  DepthResults d = made_up_results();
  DepthCellSummary failed = made_up_run("pre+bhyt", "pre", "bhyt", {}, NAN, NAN);
  failed.run.seed = 2, failed.run.exit_code = 1, failed.run.var_init.clear();
  d.runs.push_back(failed);
  d.seeds = {1, 2};
  return d;
}

}  // namespace

TEST_CASE("depth plan: one cell per depth, seed and arm, depth first, arm last", "[depth][plan]") {
  TempDir tmp;
  const std::string out = tmp.sub("runs");
  const DepthFlags f = parsed_depth_flags({"--depths", "2,4", "--seeds", "7,8", "--arms",
                                           "a=--norm ln,b=--block peri --norm rms", "--jobs", "3", "--out", out});
  const std::vector<GridCell> cells = plan_depth(f);
  const std::vector<std::string> labels = {"L2 a s7", "L2 b s7", "L2 a s8", "L2 b s8",
                                           "L4 a s7", "L4 b s7", "L4 a s8", "L4 b s8"};
  REQUIRE(cells.size() == labels.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    const GridCell& c = cells[i];
    INFO(c.label);
    CHECK(c.label == labels[i]);
    CHECK(c.program == "train_gpt");
    const std::string depth = i < 4 ? "2" : "4", seed = i % 4 < 2 ? "7" : "8", arm = i % 2 ? "b" : "a";
    CHECK(c.out_dir == out + "/L" + depth + "/" + arm + "/s" + seed);
    CHECK(c.cost == (i < 4 ? 0.5 : 1.0));  // a step of L layers costs L / 4 of the demo GPT's
    // each flag the cell sets reaches its run once, with the cell's value
    for (const char* flag : {"--layers", "--seed", "--norm"}) CHECK(count_of(c.args, flag) == 1);
    CHECK(value_of(c.args, "--layers") == depth);
    CHECK(value_of(c.args, "--seed") == seed);
    CHECK(value_of(c.args, "--norm") == (arm == "a" ? "ln" : "rms"));
    CHECK(count_of(c.args, "--block") == (arm == "b" ? 1u : 0u));
    // the recipe is passed on, the study's own flags are not
    CHECK(value_of(c.args, "--dim") == "128");
    for (const char* own : {"--depths", "--seeds", "--arms", "--jobs", "--threads", "--dry-run", "--step-ms"})
      CHECK(count_of(c.args, own) == 0);
  }
}

TEST_CASE("depth plan: the flags a cell sets are those the study takes no value for", "[depth][plan]") {
  // the axes (--layers, --seed) and what every default arm sets (--block, --norm)
  CHECK(depth_set_per_cell() == std::vector<std::string>{"--layers", "--seed", "--block", "--norm"});
  DepthFlags f;
  CHECK_THROWS_WITH(parse_depth_flags({"--layers", "4"}, f), Contains("--layers"));
  CHECK_THROWS_WITH(parse_depth_flags({"--norm", "rms"}, f), Contains("--norm"));
}

TEST_CASE("depth estimate: made-up cells priced by their depth, a finished one kept", "[depth][plan]") {
  TempDir tmp;
  // depths 4 and 8 (cost 1 and 2), 10 steps at 6 s a step, one at a time:
  // 10 x 6 x 1 + 10 x 6 x 2 = 180 s = 3 minutes
  const DepthFlags f = parsed_depth_flags({"--depths", "4,8", "--seeds", "1", "--arms", "a=--norm ln", "--steps", "10",
                                           "--step-ms", "6000", "--jobs", "1", "--out", tmp.sub("runs")});
  const std::vector<GridCell> cells = plan_depth(f);
  REQUIRE(cells.size() == 2);
  GridEstimate e = estimate_depth(cells, f);
  CHECK(e.runs == 2);
  CHECK(e.kept == 0);
  CHECK(e.at_once == 1);
  CHECK(e.minutes == Approx(3.0));
  // the 8-layer cell finished: only the 4-layer one's 60 s is left
  fs::create_directories(cells[1].out_dir);
  write_bytes(cells[1].out_dir + "/result.json", "{}");
  e = estimate_depth(cells, f);
  CHECK(e.kept == 1);
  CHECK(e.minutes == Approx(1.0));
  CHECK(grid_plan_line("depth_study", e, " in x") ==
        "depth_study: 2 runs in x, 1 finished already (kept); about 1.0 minutes at 1 at a time (6000 ms a step, "
        "--step-ms)");
}

TEST_CASE("depth report: made-up results give the growth verdicts and tables they imply", "[depth][report]") {
  const std::string md = render_depth_report(made_up_results(), false);
  // growth from the embedding: BHyT 1.5 / 0.5 = 3 against Pre-LN 8 / 1 = 8; from block 1:
  // 1.5 / 1 = 1.5 against 8 / 2 = 4; one seed each, so each range is one value
  CHECK_THAT(md, Contains("- Flat residual stream with depth: 2 layers, pre+bhyt against pre+ln: growth from the "
                          "embedding **held** (3x against 8x); growth from block 1 **held** (1.5x against 4x)\n"));
  CHECK_THAT(md, Contains("| 2 | pre+ln | 2.5000 | 2.4000 | 1 of 1 |"));
  CHECK_THAT(md, Contains("| 2 | pre+bhyt | 2.6000 | 2.5500 | 1 of 1 |"));
  // lambda / kappa = 2 / 10 = 0.2 against 1 / sqrt(2) = 0.707
  CHECK_THAT(md, Contains("| 2 | pre+bhyt | 1 | 1.000 | 2.000 | 0.200 | 0.707 | holds |"));
  CHECK_THAT(md, Contains("2 training runs (2 trained by this"));
  CHECK_THAT(md, Contains("load average 1.0 to 3.0"));
  CHECK_THAT(md, Contains("Training took 1.5 min"));
  CHECK_THAT(md, Contains("| pre+bhyt | `--block pre --norm bhyt` |"));
}

TEST_CASE("depth report: a run that stopped (no variance profile) renders as missing, never read past its end",
          "[depth][report]") {
  // before: the growth table read var_end.back() of the empty profile (out of bounds)
  const std::string md = render_depth_report(with_a_failed_run(), false);
  CHECK_THAT(md, Contains("| 2 | pre+bhyt | 2.6000 | 2.5500 | 1 of 2 |"));
  CHECK_THAT(md, Contains("growth from the embedding **held** (3x against 8x)"));  // from the run that finished
}

TEST_CASE("depth records: a variance profile of the wrong length is refused naming it", "[depth][results]") {
  json j = made_up_results().to_json();
  j["runs"][0]["var_end"] = json::array({1.0, 2.0});  // 2 layers: the embedding and 2 blocks make 3
  CHECK_THROWS_WITH(read_record<DepthResults>(j, "", "test"),
                    "test: runs[0].var_end has 2 values, not 3 (the embedding and each of 2 layers) nor none");
  const DepthResults failed = with_a_failed_run();  // none at all: a run that stopped
  CHECK(read_record<DepthResults>(failed.to_json(), "", "test").runs[2].run.var_end.empty());
}

TEST_CASE("depth records: what the writer writes the reader reads, field for field", "[depth][results]") {
  const DepthResults d = made_up_results();
  const json once = d.to_json();
  const DepthResults back = read_record<DepthResults>(once, "", "test");
  CHECK(back.to_json() == once);
  REQUIRE(back.runs.size() == 2);
  CHECK(back.runs[1].run.var_end == std::vector<double>{0.5, 1, 1.5});
  CHECK(std::isnan(back.runs[0].run.kappa));  // not BHyT: written as null, read as NaN
  CHECK(back.runs[1].run.kappa == 10.0);
  CHECK_FALSE(back.speed);

  // a speed section, field for field; a file without its seconds writes none back
  DepthResults timed = made_up_results();
  timed.speed = std::vector<SpeedRow>{{"tiny", "rms", 1.5, 0.5}, {"small", "bhyt", 30.25, 10.125}};
  timed.speed_seconds = 12;
  const DepthResults timed_back = read_record<DepthResults>(timed.to_json(), "", "test");
  REQUIRE(timed_back.speed);
  REQUIRE(timed_back.speed->size() == 2);
  CHECK((*timed_back.speed)[1].config == "small");
  CHECK((*timed_back.speed)[1].norm == "bhyt");
  CHECK((*timed_back.speed)[1].step_ms == 30.25);
  CHECK((*timed_back.speed)[1].forward_ms == 10.125);
  CHECK(timed_back.speed_seconds == 12);
  json unsecond = timed.to_json();
  unsecond.erase("speed_seconds");
  CHECK_FALSE(read_record<DepthResults>(unsecond, "", "test").to_json().contains("speed_seconds"));
}

TEST_CASE("depth records: a results file with a renamed key is refused naming the key and the file",
          "[depth][results]") {
  TempDir tmp;
  fs::create_directories(tmp.sub("runs"));
  const std::string file = tmp.sub("runs") + "/results.json";
  const json good = made_up_results().to_json();
  write_bytes(file, renamed(good, "/runs/1/val_loss", "val_loss_end").dump(1));
  CHECK_THROWS_WITH(read_depth_results(tmp.sub("runs")), "--reuse: " + file + ": runs[1].val_loss is missing");
  write_bytes(file, renamed(good, "/runs/1/kept", "was_kept").dump(1));
  CHECK_THROWS_WITH(read_depth_results(tmp.sub("runs")), "--reuse: " + file + ": runs[1].kept is missing");
  write_bytes(file, renamed(good, "/depths", "layers").dump(1));
  CHECK_THROWS_WITH(read_depth_results(tmp.sub("runs")), "--reuse: " + file + ": depths is missing");
  json retyped = good;
  retyped["runs"][0]["site2"] = json::array({json::array({0, 10, "0.5", 0.5})});
  write_bytes(file, retyped.dump(1));
  CHECK_THROWS_WITH(read_depth_results(tmp.sub("runs")),
                    "--reuse: " + file + ": runs[0].site2[0][2] is a string, not a number or null");
  // the claims table's reader names the field too
  json lacking = good;
  lacking["runs"][0].erase("var_end");
  CHECK_THROWS_WITH(depth_claims(lacking), Contains("runs[0].var_end is missing"));
}

TEST_CASE("depth records: a results file written before the typed records renders the same page",
          "[depth][results]") {
  const std::string dir = "tests/data/depth-results-v1";  // written by depth_study at f08e75d (its README)
  const DepthResults d = read_depth_results(dir);
  CHECK(render_depth_report(d, false) == read_bytes(dir + "/depth.md"));
  CHECK(d.to_json().dump(1) + "\n" == read_bytes(dir + "/results.json"));
}
