// Tests of train_gpt --eval-only (train/gpt/gpt_eval.h) on a tiny trained run: on the
// validation split it prints the val_loss the run logged at its last step, digit for
// digit, and its perplexity exp(loss); on a file, the mean loss over every byte of it,
// checked here against a log-softmax computed from the checkpoint's logits; it writes
// nothing into the run's folder, and refuses bad input in one line.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "nn/model_json.h"
#include "tests/train/run_fixtures.h"
#include "train/io/safetensors.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

// "eval: loss 2.51234567 nats per byte, perplexity 12.3456, ..." -> the two numbers' texts
std::pair<std::string, std::string> loss_and_perplexity(const std::string& out) {
  const size_t a = out.find("loss ") + 5, b = out.find(" nats", a);
  const size_t c = out.find("perplexity ") + 11, d = out.find(',', c);
  REQUIRE(a > 5);
  REQUIRE(b != std::string::npos);
  REQUIRE(c > 11);
  return {out.substr(a, b - a), out.substr(c, d - c)};
}

}  // namespace

TEST_CASE("train_gpt --eval-only: the logged val_loss of the last step, and nothing written", "[cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  FakeGptRun f;
  const std::string dir = f.train("run", "");
  const auto before = snapshot(dir);
  const RunResult r = run_limited(kTrainGpt, "--eval-only " + dir + " --threads 1", f.tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = read_csv_rows(dir + "/log.csv");
  REQUIRE(rows.size() == 5);  // header + 4 steps
  size_t column = 0;
  while (column < rows[0].size() && rows[0][column] != "val_loss") ++column;
  REQUIRE(column < rows[0].size());
  const auto [loss, perplexity] = loss_and_perplexity(r.out);
  CHECK(loss == rows.back()[column]);
  CHECK(std::atof(perplexity.c_str()) == Approx(std::exp(std::atof(loss.c_str()))).epsilon(1e-4));
  CHECK_THAT(r.out, Contains("validation split") && Contains("step 4"));
  CHECK(snapshot(dir) == before);
  // the checkpoint file itself: the same line
  const RunResult file = run_limited(kTrainGpt, "--eval-only " + dir + "/checkpoint.safetensors --threads 1", f.tmp);
  CHECK(file.out == r.out);
}

TEST_CASE("train_gpt --eval-only --eval-file: the mean loss over every byte of the file", "[cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  FakeGptRun f;
  const std::string dir = f.train("run", "");
  // 21 bytes: 20 predicted, in windows of 8, 8 and 4
  const std::string text = "the early bird gets t";
  write_bytes(f.tmp.sub("text.txt"), text);
  const RunResult r = run_limited(kTrainGpt, "--eval-only " + dir + " --eval-file " + f.tmp.sub("text.txt"), f.tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("20 bytes predicted"));
  // here: each window's logits, log-softmax in double, the target's term
  const nl::SafetensorsFile file = nl::load_safetensors(dir + "/checkpoint.safetensors");
  nl::Generator gen(0);
  nl::GPT model(nl::gpt_config_from_json(file.metadata.at("model")), gen);
  for (auto& [name, p] : model.named_parameters()) p.value().copy_from(file.tensors.at(name));
  model.eval();
  nl::NoGradGuard no_grad;
  double total = 0;
  for (size_t start = 0; start + 1 < text.size(); start += 8) {
    const size_t n = std::min<size_t>(8, text.size() - 1 - start);
    const std::vector<int32_t> ids(text.begin() + (long)start, text.begin() + (long)(start + n));
    const nl::Tensor logits = model.forward(nl::Tensor::from_ints(ids, {1, (int64_t)n})).value().contiguous();
    for (size_t t = 0; t < n; ++t) {
      const float* row = logits.data() + t * 256;
      double top = row[0], sum = 0;
      for (int v = 1; v < 256; ++v) top = std::max(top, (double)row[v]);
      for (int v = 0; v < 256; ++v) sum += std::exp((double)row[v] - top);
      total -= (double)row[(unsigned char)text[start + t + 1]] - top - std::log(sum);
    }
  }
  CHECK(std::atof(loss_and_perplexity(r.out).first.c_str()) == Approx(total / 20).epsilon(1e-5));
}

TEST_CASE("train_gpt --eval-only: bad input is one line, exit 2", "[cli][fault]") {
  REQUIRE(fs::exists(kTrainGpt));
  FakeGptRun f;
  const std::string dir = f.train("run", "");
  expect_refused(kTrainGpt, "--eval-only " + f.tmp.sub("none"), dir, {"none"}, f.tmp);
  expect_refused(kTrainGpt, "--eval-only " + dir + " --eval-file " + f.tmp.sub("none.txt"), dir,
                 {"--eval-file", "none.txt"}, f.tmp);
  expect_refused(kTrainGpt, f.tiny + " --eval-file " + dir + "/log.csv --out " + f.tmp.sub("x"), dir,
                 {"--eval-file needs --eval-only"}, f.tmp);
  expect_refused(kTrainGpt, "--eval-only " + dir + " --resume", dir, {"--eval-only", "--resume"}, f.tmp);
  // a recipe flag that changes the model: the checkpoint is of another one
  expect_refused(kTrainGpt, "--eval-only " + dir + " --dim 32", dir, {"another model", "dim"}, f.tmp);
}
