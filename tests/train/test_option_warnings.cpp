// gpt_option_warnings (train/flags/option_warnings.h): a setting the model it builds
// never reads is named before the run starts; a setting that is read, or left at its
// default as the studies pass every flag, is not.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "train/flags/option_warnings.h"

using namespace nl;
using Catch::Matchers::Contains;

namespace {

bool mentions(const std::vector<std::string>& warnings, const std::string& text) {
  for (const std::string& w : warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("option warnings: a norm option no norm of the model has is named", "[cli][warnings]") {
  GPTRunConfig c;  // ln blocks, ln final norm
  CHECK(gpt_option_warnings(c).empty());
  c.model.norm.set("dyt-alpha0", 2);
  const auto w = gpt_option_warnings(c);
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Contains("--dyt-alpha0 2 does nothing") && Contains("--norm ln"));
  // at its default (0.5), as a study passes every flag, it says nothing
  c.model.norm.set("dyt-alpha0", 0.5);
  CHECK(gpt_option_warnings(c).empty());
  // read by the blocks' norm, or by the final norm alone: no warning
  c.model.norm.set("dyt-alpha0", 2);
  c.model.norm.name = "dyt";
  CHECK_FALSE(mentions(gpt_option_warnings(c), "--dyt-alpha0"));
  c.model.norm.name = "ln";
  c.model.final_norm = "dyt";
  CHECK_FALSE(mentions(gpt_option_warnings(c), "--dyt-alpha0"));
  // a BHyT option on a DyT model
  c.model.norm.set("bhyt-lambda-attn", 5);
  CHECK(mentions(gpt_option_warnings(c), "--bhyt-lambda-attn 5 does nothing"));
}

TEST_CASE("option warnings: the recipe's settings, the flat schedule's min-lr, a warmup past the end",
          "[cli][warnings]") {
  GPTRunConfig c;
  c.recipe = "verma";
  c.model.norm.set("dyt-alpha0", 2);  // the recipe's value, on an ln model
  CHECK(mentions(gpt_option_warnings(c), "--dyt-alpha0 2 (from --recipe verma) does nothing"));
  GPTRunConfig flat;
  flat.schedule = "flat";
  CHECK(gpt_option_warnings(flat).empty());  // the default --min-lr: nothing given, nothing said
  flat.min_lr = 1e-5f;
  CHECK(mentions(gpt_option_warnings(flat), "--min-lr 1e-05 does nothing under --schedule flat"));
  GPTRunConfig short_run;
  short_run.steps = 100, short_run.warmup = 100;
  CHECK(gpt_option_warnings(short_run).empty());  // the peak at the last step is reached
  short_run.warmup = 101;
  CHECK(mentions(gpt_option_warnings(short_run), "--warmup 101 is longer than the run (100 steps)"));
  short_run.extend_to = 200;  // a run trained further reaches it
  CHECK(gpt_option_warnings(short_run).empty());
}

TEST_CASE("option warnings: the start-of-run line names what the run is", "[cli][warnings]") {
  GPTRunConfig c;
  c.out_dir = "runs/x";
  CHECK(gpt_run_summary(c, 1234567) ==
        "1.23M parameters, norm ln (final ln) on the pre block, recipe plain, 500 steps of 16 x 64 bytes, out runs/x, "
        "2 thread(s)");
}
