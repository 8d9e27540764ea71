// Tests of a finished run trained further (--extend-to, train/loop/trainer.h): the
// steps past --steps keep the lr of its last step, held flat, and config.json
// records the extension; an extension stopped in the middle and resumed logs and ends
// exactly as one straight through; --resume still refuses a changed --steps, pointing
// at --extend-to. And resuming a finished run, which trains nothing, reports the
// throughput the run measured (it printed "nan tok/s").
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fake_fashion_mnist.h"
#include "tests/train/run_fixtures.h"
#include "train/io/safetensors.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

// log.csv without its throughput column, which is the only one timing changes
std::vector<std::vector<std::string>> log_without_tok_per_s(const std::string& dir) {
  auto rows = read_csv_rows(dir + "/log.csv");
  REQUIRE(!rows.empty());
  size_t speed = 0;
  while (speed < rows[0].size() && rows[0][speed] != "tok_per_s") ++speed;
  REQUIRE(speed < rows[0].size());
  for (auto& row : rows)
    if (speed < row.size()) row.erase(row.begin() + (long)speed);
  return rows;
}

}  // namespace

TEST_CASE("extend-to: an extension stopped and resumed is bit-identical to one straight through", "[cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  FakeGptRun f;
  const std::string straight = f.train("straight", ""), stopped = f.train("stopped", "");  // 4 steps each
  require_ok(run_limited(kTrainGpt, f.tiny + " --resume --extend-to 10 --out " + straight, f.tmp));
  require_ok(run_limited(kTrainGpt, f.tiny + " --resume --extend-to 10 --stop-after 6 --out " + stopped, f.tmp));
  CHECK(read_csv_rows(stopped + "/log.csv").size() == 7);  // header + 6 steps
  require_ok(run_limited(kTrainGpt, f.tiny + " --resume --extend-to 10 --out " + stopped, f.tmp));

  // (stopped at an evaluation step: a run stopped elsewhere also evaluates there)
  const auto rows = log_without_tok_per_s(straight);
  REQUIRE(rows.size() == 11);  // header + 10 steps
  CHECK(log_without_tok_per_s(stopped) == rows);
  const nl::SafetensorsFile a = nl::load_safetensors(straight + "/checkpoint.safetensors");
  const nl::SafetensorsFile b = nl::load_safetensors(stopped + "/checkpoint.safetensors");
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    INFO(name);
    CHECK(b.tensors.at(name).to_vector() == t.to_vector());
  }
  CHECK(a.metadata.at("step") == "10");
  // the schedule: steps 5..10 keep the lr of step 4, the last of --steps (here still in the warmup of 50 steps:
  // 4 / 50 of --lr 1e-3)
  size_t lr = 0;
  while (rows[0][lr] != "lr") ++lr;
  CHECK(std::stod(rows[4][lr]) == Approx(8e-5).epsilon(1e-6));
  for (int step = 5; step <= 10; ++step) CHECK(rows[(size_t)step][lr] == rows[4][lr]);
  const auto config = nlohmann::json::parse(read_bytes(straight + "/config.json"));
  CHECK(config.at("extend_to") == 10);
  CHECK(config.at("steps") == 4);
  // the end's files of the longer run
  const auto result = nlohmann::json::parse(read_bytes(straight + "/result.json"));
  CHECK(result.at("steps") == 10);
}

TEST_CASE("extend-to: --resume refuses a changed --steps and names --extend-to; bad values are refused",
          "[cli][fault]") {
  REQUIRE(fs::exists(kTrainGpt));
  FakeGptRun f;
  const std::string run = f.train("run", "");
  expect_refused(kTrainGpt, f.tiny + " --resume --steps 8 --out " + run, run,
                 {"--steps 4 in the checkpoint, 8 in this run", "--extend-to"}, f.tmp);
  expect_refused(kTrainGpt, f.tiny + " --resume --extend-to 3 --out " + run, run, {"--extend-to", "at least --steps 4"},
                 f.tmp);
  require_ok(run_limited(kTrainGpt, f.tiny + " --resume --extend-to 6 --out " + run, f.tmp));
  // extended to 6: resuming it with the run's end at 4 again is past its end
  expect_refused(kTrainGpt, f.tiny + " --resume --out " + run, run, {"step 6", "--extend-to"}, f.tmp);
}

TEST_CASE("extend-to: train_vit's runs are extended by the same loop", "[cli]") {
  REQUIRE(fs::exists(kTrainVit));
  FakeVitRun v;
  const std::string run = v.tmp.sub("run");
  require_ok(run_limited(kTrainVit, v.tiny + " --steps 4 --out " + run, v.tmp));
  require_ok(run_limited(kTrainVit, v.tiny + " --steps 4 --resume --extend-to 6 --out " + run, v.tmp));
  CHECK(read_csv_rows(run + "/log.csv").size() == 7);  // header + 6 steps
  CHECK(nlohmann::json::parse(read_bytes(run + "/result.json")).at("steps") == 6);
}

TEST_CASE("resume: a finished run resumed trains nothing and reports the run's throughput, not nan", "[cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  FakeGptRun f;
  const std::string run = f.train("run", "");
  const auto result = nlohmann::json::parse(read_bytes(run + "/result.json"));
  const RunResult r = run_limited(kTrainGpt, f.tiny + " --resume --out " + run, f.tmp);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("done: 4 steps"));
  CHECK_THAT(r.out, !Contains("nan"));
  char expected[64];
  std::snprintf(expected, sizeof expected, ", %.0f tok/s", result.at("tok_per_s").get<double>());
  CHECK_THAT(r.out, Contains(expected));
}
