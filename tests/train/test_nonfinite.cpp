// Numerical faults (train/safety/nonfinite.h, train/safety/run_safety.h): a NaN or infinite loss or
// gradient is found at the step it appears, named by step and first parameter, and
// either stops the run with the last good checkpoint untouched or skips the step
// without touching parameters or optimizer state. The fault is injected for real in
// train_gpt by a learning rate of 1e30: the first step is finite and its update
// overflows the weights, so the second step's forward is not.
#include <catch2/catch.hpp>

#include "tests/needs.h"
#include "tests/test_files.h"
#include "tests/train/run_fixtures.h"  // kTrainGpt

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "nn/gpt.h"
#include "tensor/optim.h"
#include "train/safety/run_safety.h"
#include "train/io/safetensors.h"

using namespace nl;
using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

struct TinyGPT {
  Generator gen{7};
  GPT model;
  FlatParameters flat;
  TinyGPT() : model(config(), gen), flat(flatten_parameters(model)) { flat.grads.fill_(0.25f); }
  static GPTConfig config() {
    GPTConfig c;
    c.layers = 2;
    c.dim = 8;
    c.heads = 2;
    c.context = 4;
    c.norm.name = "ln";
    return c;
  }
  // the index of a parameter in buffer order
  size_t index_of(const std::string& name) const {
    for (size_t k = 0; k < flat.params.size(); ++k)
      if (flat.params[k].first == name) return k;
    FAIL("no parameter " << name);
    return 0;
  }
  float* grad_of(const std::string& name) { return flat.grads.data() + flat.offsets[index_of(name)]; }
};

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("nonfinite: finite loss and gradients give no report", "[nonfinite]") {
  TinyGPT t;
  CHECK(describe_nonfinite(3, 2.5f, t.flat).empty());
}

TEST_CASE("nonfinite: names the step and the first parameter, in model order, whose gradient is NaN or inf",
          "[nonfinite]") {
  TinyGPT t;
  // two bad parameters: the report names the one earlier in the model (block 0's)
  t.grad_of("blocks.1.mlp.fc.weight")[0] = kNaN;
  float* g = t.grad_of("blocks.0.attn.qkv.weight");
  g[5] = kInf;
  g[9] = -kInf;
  g[11] = kNaN;
  REQUIRE(t.index_of("blocks.0.attn.qkv.weight") < t.index_of("blocks.1.mlp.fc.weight"));
  const std::string m = describe_nonfinite(17, 1.0f, t.flat);
  INFO(m);
  CHECK_THAT(m, Contains("step 17") && Contains("'blocks.0.attn.qkv.weight'") && Contains("3 of 192"));
  CHECK_THAT(m, !Contains("loss"));
  // only the later one left
  g[5] = g[9] = g[11] = 0.0f;
  CHECK_THAT(describe_nonfinite(17, 1.0f, t.flat), Contains("'blocks.1.mlp.fc.weight'") && Contains("1 of"));
  // the last value of the last parameter counts too
  t.grad_of("blocks.1.mlp.fc.weight")[0] = 0.0f;
  t.flat.grads.data()[t.flat.grads.numel() - 1] = kInf;
  CHECK_THAT(describe_nonfinite(1, 1.0f, t.flat), Contains("'" + t.flat.params.back().first + "'"));
}

TEST_CASE("nonfinite: the gradients' sum of squares decides, and the largest finite gradients pass", "[nonfinite]") {
  // a training step hands in the sum of squares it takes for the clipping norm anyway: it
  // is finite exactly when every gradient is, also when every gradient is near the float
  // maximum (each square, and their sum, is far from overflowing a double)
  TinyGPT t;
  const float big = std::numeric_limits<float>::max();
  float* g = t.flat.grads.data();
  for (int64_t i = 0; i < t.flat.grads.numel(); ++i) g[i] = i % 2 ? big : -big;
  const double ss = sum_squares(t.flat.grads);
  REQUIRE(std::isfinite(ss));
  CHECK(describe_nonfinite(5, 1.0f, t.flat, ss).empty());
  g[7] = kNaN;
  CHECK_THAT(describe_nonfinite(5, 1.0f, t.flat, sum_squares(t.flat.grads)), Contains("1 of"));
  g[7] = -kInf;
  CHECK(std::isinf(sum_squares(t.flat.grads)));
  CHECK_THAT(describe_nonfinite(5, 1.0f, t.flat, sum_squares(t.flat.grads)), Contains("1 of"));
}

TEST_CASE("nonfinite: a NaN or inf loss is reported even when every gradient is finite", "[nonfinite]") {
  TinyGPT t;
  CHECK_THAT(describe_nonfinite(4, kNaN, t.flat),
             Contains("loss (") && Contains("step 4") && Contains("every gradient is finite"));
  CHECK_THAT(describe_nonfinite(4, kInf, t.flat), Contains("loss (inf)"));
}

TEST_CASE("nonfinite: a finite loss beyond the bound is a fault too; one within it is not", "[nonfinite]") {
  TinyGPT t;
  // before: a loss of 2.6e36 trained on to "done"
  CHECK_THAT(describe_nonfinite(9, 2.6e36f, t.flat), Contains("runaway loss (2.6e+36") && Contains("step 9"));
  CHECK_THAT(describe_nonfinite(9, -2 * kMaxLoss, t.flat), Contains("runaway loss"));
  CHECK(describe_nonfinite(9, kMaxLoss, t.flat).empty());
  CHECK(describe_nonfinite(9, 5.5f, t.flat).empty());
}

TEST_CASE("nonfinite: a skipped step leaves parameters and optimizer alone; ten in a row stop the run",
          "[nonfinite]") {
  TinyGPT t;
  AdamW optim(t.flat, AdamWConfig{});
  NonFiniteGuard guard(NonFiniteAction::Skip, nullptr);
  RunEnd end;
  // a good step moves the parameters
  std::vector<float> before = t.flat.values.to_vector();
  auto norm = guarded_step(guard, 1, 2.0f, t.flat, optim, 1e-2f, 1.0f, end);
  REQUIRE(norm.has_value());
  CHECK(std::isfinite(*norm));
  CHECK(t.flat.values.to_vector() != before);
  CHECK(optim.steps() == 1);
  // bad steps change nothing, not even the moments or the step count
  before = t.flat.values.to_vector();
  const std::vector<float> m = optim.m.to_vector(), v = optim.v.to_vector();
  t.grad_of("ln_f.weight")[0] = kNaN;
  for (int64_t s = 2; s < 2 + kMaxSkippedInARow; ++s) {
    norm = guarded_step(guard, s, 2.0f, t.flat, optim, 1e-2f, 1.0f, end);
    REQUIRE(norm.has_value());
    CHECK(std::isnan(*norm));
  }
  CHECK(end.skipped_steps == kMaxSkippedInARow);
  CHECK(t.flat.values.to_vector() == before);
  CHECK(optim.m.to_vector() == m);
  CHECK(optim.v.to_vector() == v);
  CHECK(optim.steps() == 1);
  // the eleventh in a row stops
  CHECK_FALSE(guarded_step(guard, 12, 2.0f, t.flat, optim, 1e-2f, 1.0f, end).has_value());
  CHECK_THAT(end.fault, Contains("step 12") && Contains("'ln_f.weight'") && Contains("in a row"));

  // a finite step in between resets the count (the bad steps now have a NaN loss only)
  t.grad_of("ln_f.weight")[0] = 0.0f;
  NonFiniteGuard again(NonFiniteAction::Skip, nullptr);
  for (int k = 0; k < 3 * kMaxSkippedInARow; ++k)
    CHECK(again.check(k, k % 5 == 4 ? 1.0f : kNaN, t.flat, sum_squares(t.flat.grads)) != NonFiniteGuard::Verdict::Stop);
  // and --on-nonfinite stop stops at once
  NonFiniteGuard stop(NonFiniteAction::Stop);
  CHECK(stop.check(1, 1.0f, t.flat, sum_squares(t.flat.grads)) == NonFiniteGuard::Verdict::Ok);
  CHECK(stop.check(2, kNaN, t.flat, sum_squares(t.flat.grads)) == NonFiniteGuard::Verdict::Stop);
}

namespace {

const std::string kNonfiniteRun =
    "--layers 1 --dim 16 --heads 2 --seq 8 --batch 2 --eval-every 5 --eval-batches 1 --threads 1 --quiet "
    "--act-stats-every 0 --warmup 0 --steps 30 --checkpoint-every 5";

}  // namespace

TEST_CASE("nonfinite: train_gpt with lr 1e30 stops at the first NaN step, names it, keeps the last checkpoint",
          "[nonfinite][cli][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string dir = tmp.sub("run");
  // step 1 takes a 1e30-sized step, so step 2's forward overflows
  const std::string run = kNonfiniteRun + " --lr 1e30 --checkpoint-every 1 --out " + dir;
  RunResult r = run_program(kTrainGpt, run, tmp);
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(count_lines(r.err) == 1);
  CHECK_THAT(r.err, Contains("non-finite") && Contains("at step 2") && Contains("parameter '") &&
                        Contains("checkpoint of step 1"));
  // the parameter it names is one of the model's
  const size_t q = r.err.find("parameter '") + 11;
  const std::string name = r.err.substr(q, r.err.find('\'', q) - q);
  CHECK(load_safetensors(dir + "/checkpoint.safetensors").tensors.count(name) == 1);
  CHECK(load_safetensors(dir + "/checkpoint.safetensors").metadata.at("step") == "1");
  CHECK(read_csv_rows(dir + "/log.csv").size() == 2);  // header + step 1
  CHECK_FALSE(fs::exists(dir + "/sample.txt"));

  // step 1's 1e30-sized update is in that checkpoint: resuming it is refused for its
  // runaway weights (beyond the loaded-value bound, train/io/checkpoint.h) before a step
  // runs, and the checkpoint stays as it was
  const std::string kept = read_bytes(dir + "/checkpoint.safetensors");
  RunResult again = run_program(kTrainGpt, run + " --resume", tmp);
  INFO(again.err);
  CHECK(again.code == 2);
  CHECK_THAT(again.err, Contains("tensor '") && Contains("beyond the bound"));
  CHECK(read_bytes(dir + "/checkpoint.safetensors") == kept);
}

TEST_CASE("nonfinite: --on-nonfinite skip warns for each skipped step and stops after ten in a row",
          "[nonfinite][cli][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string dir = tmp.sub("run");
  RunResult r = run_program(kTrainGpt, kNonfiniteRun + " --lr 1e30 --on-nonfinite skip --out " + dir, tmp);
  INFO(r.err);
  CHECK(r.code == 1);
  // steps 2..11 skipped with a warning each, step 12 stops
  CHECK(count_lines(r.err) == 11);
  CHECK_THAT(r.err, Contains("at step 2") && Contains("step skipped") && Contains("at step 11") &&
                        Contains("stopped") && Contains("at step 12") && Contains("in a row"));
  // the checkpoints of steps 5 and 10 were written: skipped steps still count (parameters as after step 1)
  CHECK(load_safetensors(dir + "/checkpoint.safetensors").metadata.at("step") == "10");
  const auto rows = read_csv_rows(dir + "/log.csv");
  REQUIRE(rows.size() == 12);  // steps 1..11
  CHECK(rows[1][4] != "nan");   // step 1's gradient norm was taken
  CHECK(rows[2][4] == "nan");   // step 2's: none was taken
}
