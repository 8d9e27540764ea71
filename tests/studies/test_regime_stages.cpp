// Tests of the regime study's stages as values (studies/regime/regime_flags.h,
// regime_plan.h): made-up command lines parsed into a plan of cells, the plan priced, and
// each cell's train_gpt command. Nothing here trains or spawns a process; the expected
// values are worked out by hand from the flags.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "studies/regime/regime_flags.h"
#include "studies/regime/regime_plan.h"
#include "tests/studies/command_lines.h"

using namespace nl;
using Catch::Contains;
using nl::test::value_of;

namespace {

RegimeFlags parsed_regime_flags(std::vector<std::string> args) {
  RegimeFlags f;
  REQUIRE(parse_regime_flags(args, f));
  return f;
}

const std::vector<std::string> kTwoArms = {"--arms",       "a=--norm ln,b=--norm dyt --dyt-alpha0 2",
                                           "--reference",  "a",
                                           "--sizes",      "1000,-1",
                                           "--seeds",      "1,2",
                                           "--vit-images", "0",
                                           "--jobs",       "2"};

}  // namespace

TEST_CASE("regime plan: one GPT cell per seed, size and arm, in that order, none kept", "[regime][plan]") {
  const RegimeFlags f = parsed_regime_flags(kTwoArms);
  const RegimeGrid g = plan_regime(f);
  // 2 seeds x 2 sizes x 2 arms, no width axis, no Llama or ViT arm
  REQUIRE(g.cells.size() == 8);
  CHECK(g.kept_count() == 0);
  CHECK(g.not_run.empty());
  CHECK(g.cells[0].folder() == "gpt/w128/1K/a/s1");
  CHECK(g.cells[1].folder() == "gpt/w128/1K/b/s1");
  CHECK(g.cells[2].folder() == "gpt/w128/all/a/s1");
  CHECK(g.cells[7].folder() == "gpt/w128/all/b/s2");
  CHECK(f.grid_replaced);  // --arms, --sizes, --seeds replace parts of --grid small
}

TEST_CASE("regime plan: --dry-run's text prices the cells by hand's arithmetic", "[regime][plan]") {
  RegimeFlags f = parsed_regime_flags(kTwoArms);
  f.gpt_step_ms = 60;
  // a width-128 cell: 5000 steps + 5000 / 250 evaluations x 10 batches x 2/3 of a step =
  // 5133.3 steps at 60 ms = 308 s, + 8 s of measurements = 316 s = 5.3 min; 8 cells =
  // 2528 s = 42 CPU minutes, 21 at 2 at a time
  const std::string text = estimate_regime(f, plan_regime(f));
  CHECK_THAT(text, Contains("  gpt w128 1K a                            2 seed(s), 5.3 min each\n"));
  CHECK_THAT(text, Contains("8 cells to train, 42 CPU minutes at 60.0 ms/step"));
  CHECK_THAT(text, Contains("about 21 minutes at 2 at a time"));
}

TEST_CASE(
    "regime plan: a cell's command is the recipe less what the study and the arm set, then the arm, then the "
    "cell's own",
    "[regime][plan]") {
  std::vector<std::string> args = kTwoArms;
  for (const char* a : {"--lr", "0.002", "--out", "runs/made-up"}) args.push_back(a);
  const RegimeFlags f = parsed_regime_flags(args);
  std::vector<size_t> plan_of;
  const std::vector<GridCell> cells = regime_grid_cells(f, plan_regime(f), plan_of);
  REQUIRE(cells.size() == 8);
  CHECK(plan_of[3] == 3);
  const GridCell& c = cells[3];  // seed 1, all data, arm b
  CHECK(c.program == "train_gpt");
  CHECK(c.out_dir == "runs/made-up/gpt/w128/all/b/s1");
  CHECK(c.label == "gpt w128 all b s1");
  CHECK(value_of(c.args, "--lr") == "0.002");  // the recipe, as given
  CHECK(value_of(c.args, "--norm") == "dyt");  // the arm's, not the recipe's ln
  CHECK(std::count(c.args.begin(), c.args.end(), "--norm") == 1);
  CHECK(value_of(c.args, "--seed") == "1");
  CHECK(std::count(c.args.begin(), c.args.end(), "--seed") == 1);
  CHECK(value_of(c.args, "--train-bytes") == "-1");
  CHECK(value_of(c.args, "--measure-at") == "500,5000");
  CHECK(std::count(c.args.begin(), c.args.end(), "--threads") == 0);  // the grid runner's to set
  CHECK(std::count(c.args.begin(), c.args.end(), "--out") == 0);
  // the cell's own flags come last: --dim, --seed, --train-bytes, --measure-at
  REQUIRE(c.args.size() >= 8);
  CHECK(c.args[c.args.size() - 8] == "--dim");
}

TEST_CASE("regime plan: a Llama arm's implied flags stay implied unless the command line named them",
          "[regime][plan]") {
  std::vector<std::string> args = kTwoArms;
  for (const char* a : {"--llama-arms", "l=--block llama --norm rms", "--llama-seeds", "5"}) args.push_back(a);
  std::vector<size_t> plan_of;
  const RegimeFlags f = parsed_regime_flags(args);
  const std::vector<GridCell> cells = regime_grid_cells(f, plan_regime(f), plan_of);
  // 8 GPT cells, then the Llama arm on the smallest and the largest subset, seed 5
  REQUIRE(cells.size() == 10);
  const GridCell& l = cells[8];
  CHECK(l.out_dir.find("gpt/w128/1K/l/s5") != std::string::npos);
  // --block llama implies --mlp swiglu --bias off --tied-head off: the recipe's defaults
  // (gelu, on, on) must not override them
  CHECK(value_of(l.args, "--mlp") == "");
  CHECK(value_of(l.args, "--bias") == "");
  CHECK(value_of(l.args, "--tied-head") == "");
  // named on the command line, the recipe's value is passed on
  args.push_back("--mlp");
  args.push_back("gelu");
  const RegimeFlags named = parsed_regime_flags(args);
  const std::vector<GridCell> again = regime_grid_cells(named, plan_regime(named), plan_of);
  CHECK(value_of(again[8].args, "--mlp") == "gelu");
}
