// The grid's planned step count (studies/grid/grid.h), which its progress line and ETA
// divide by: --steps, or train_vit's --epochs over Fashion-MNIST's training split; and the
// command line a study report prints; a cell's result.json read back as a ResultRecord.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "train/flags/train_commands.h"
#include "studies/grid/grid.h"
#include "studies/report/study.h"
#include "tests/test_files.h"
#include "train/io/files.h"

using nl::planned_steps;

TEST_CASE("grid: the planned steps of a cell, from --steps or --epochs", "[grid]") {
  // Scoped to this test: other tests of the folder (one translation unit) name nlohmann::json `json`.
  using json = nlohmann::ordered_json;
  CHECK(planned_steps(json{{"steps", 500}, {"batch", 16}}) == 500);
  // make demo-vit: 12 epochs of 60 000 - 5 000 images at batch 128: ceil(5156.25)
  CHECK(planned_steps(json{{"steps", 0}, {"epochs", 12.0}, {"batch", 128}, {"val_size", 5000}, {"train_images", -1}}) ==
        5157);
  // --train-images 1000: ceil(12 * 1000 / 128) = ceil(93.75)
  CHECK(planned_steps(
            json{{"steps", 0}, {"epochs", 12.0}, {"batch", 128}, {"val_size", 5000}, {"train_images", 1000}}) == 94);
  CHECK(planned_steps(json{{"steps", 0}}) == 1);
  CHECK(planned_steps(json::object()) == 1);
}

TEST_CASE("study_command: the report's command line pastes back into a shell", "[grid]") {
  CHECK(nl::study_command("build/release/regime_study",
                          {"--arms", "ln=--norm ln,dyt=--norm dyt", "--reuse", "--jobs", "2"}) ==
        "build/release/regime_study --arms 'ln=--norm ln,dyt=--norm dyt' --jobs 2");
  CHECK(nl::study_command("p", {"--doc", "it's.md"}) == "p --doc 'it'\\''s.md'");
  CHECK(nl::study_command("p", {"--out", "runs/x"}) == "p --out runs/x");
  // an empty value stays a value when pasted back
  CHECK(nl::study_command("p", {"--plot-script", "", "--out", "x"}) == "p --plot-script '' --out x");
  // before: --tune's axes came back unquoted, and a shell ran the part after the ";" as a command
  CHECK(nl::study_command("p", {"--tune", "lr=1e-3;warmup=50"}) == "p --tune 'lr=1e-3;warmup=50'");
}

TEST_CASE("implied_keys: the flags an arm sets through another flag's implication", "[grid]") {
  using V = std::vector<std::string>;
  // --block llama implies SwiGLU, no biases and an untied head
  CHECK(nl::implied_keys("train_gpt", {"--block", "llama", "--norm", "rms"}) == V{"mlp", "bias", "tied_head"});
  // a flag the arm names itself is its own, not implied
  CHECK(nl::implied_keys("train_gpt", {"--block", "llama", "--mlp", "gelu"}) == V{"bias", "tied_head"});
  // a flag that implies nothing
  CHECK(nl::implied_keys("train_gpt", {"--block", "peri", "--norm", "dyt", "--dyt-alpha0", "2"}).empty());
  CHECK(nl::implied_keys("train_gpt", {}).empty());
  CHECK_THROWS_WITH(nl::implied_keys("train_gpt", {"--block", "nope"}), Catch::Contains("--block"));
}

TEST_CASE("grid: a cell's result.json lacking a field of a run's result is refused naming it", "[grid]") {
  nl::test::TempDir tmp;
  const std::string dir = tmp.sub("cell");
  CHECK(nl::read_result(dir).is_null());  // not finished
  std::filesystem::create_directories(dir);
  nlohmann::json result = {{"steps", 4},     {"final_train_loss", 2.5}, {"seconds", 1.5}, {"cpu_seconds", 3.0},
                           {"diverged", false}, {"skipped_steps", 0},     {"val_loss", 2.75}};
  nl::write_text_file(dir + "/result.json", result.dump());
  CHECK(nl::read_result(dir) == result);  // as the run wrote it
  result.erase("seconds");
  nl::write_text_file(dir + "/result.json", result.dump());
  CHECK_THROWS_WITH(nl::read_result(dir), "grid: " + dir + "/result.json: seconds is missing");
}
