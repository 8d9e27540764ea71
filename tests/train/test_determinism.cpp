// Determinism: the same command with the same seed, run twice at a fixed thread count
// (2, with tensors large enough that the OpenMP kernels split their loops), writes
// bit-identical files: the checkpoint byte for byte, the log except its speed column
// (wall-clock time, the one measured quantity), the activation statistics and the text
// sample; the ViT also its confusion matrix. A different seed changes them (so the
// comparison can fail).
#include <catch2/catch.hpp>

#include "tests/fake_fashion_mnist.h"
#include "tests/needs.h"
#include "tests/test_files.h"
#include "tests/train/run_fixtures.h"  // kTrainGpt, kTrainVit

#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using namespace nl::test;

namespace {

// The log with the named speed column blanked.
std::vector<std::vector<std::string>> log_without(const std::string& path, const std::string& speed_column) {
  auto rows = read_csv_rows(path);
  REQUIRE(!rows.empty());
  size_t k = 0;
  while (k < rows[0].size() && rows[0][k] != speed_column) ++k;
  REQUIRE(k < rows[0].size());
  for (auto& r : rows)
    if (k < r.size()) r[k] = "";
  return rows;
}

void run_ok(const std::string& program, const std::string& args, const TempDir& tmp) {
  RunResult r = run_program(program, args, tmp);
  INFO(program << " " << args << "\nstderr: " << r.err);
  REQUIRE(r.code == 0);
}

}  // namespace

TEST_CASE("determinism: train_gpt twice with one seed at 2 threads writes bit-identical files",
          "[determinism][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  // (B*T, 4*dim) = (512, 256) MLP activations, (16, 4, 32, 32) attention maps: above the
  // kernels' parallel grain
  const std::string flags = "--layers 1 --dim 64 --heads 4 --seq 32 --batch 16 --steps 8 --eval-every 4 "
                            "--eval-batches 1 --act-stats-every 4 --threads 2 --threads-adapt off --quiet --norm bhyt";
  run_ok(kTrainGpt, flags + " --out " + tmp.sub("a"), tmp);
  run_ok(kTrainGpt, flags + " --out " + tmp.sub("b"), tmp);
  run_ok(kTrainGpt, flags + " --seed 7 --out " + tmp.sub("c"), tmp);
  const std::string a = tmp.sub("a"), b = tmp.sub("b"), c = tmp.sub("c");
  CHECK(read_bytes(a + "/checkpoint.safetensors") == read_bytes(b + "/checkpoint.safetensors"));
  CHECK(log_without(a + "/log.csv", "tok_per_s") == log_without(b + "/log.csv", "tok_per_s"));
  for (const char* f : {"/act_stats.csv", "/sample.txt", "/config.json"}) {
    INFO(f);
    CHECK(read_bytes(a + f) == read_bytes(b + f));
  }
  // another seed: other weights, other losses
  CHECK(read_bytes(a + "/checkpoint.safetensors") != read_bytes(c + "/checkpoint.safetensors"));
  CHECK(log_without(a + "/log.csv", "tok_per_s") != log_without(c + "/log.csv", "tok_per_s"));
}

TEST_CASE("determinism: train_vit twice with one seed at 2 threads writes bit-identical files", "[determinism]") {
  FakeVitRun f;
  const std::string flags = f.tiny + " --dim 32 --steps 12 --threads 2 --threads-adapt off --crop-pad 2 --flip";
  run_ok(kTrainVit, flags + " --out " + f.tmp.sub("a"), f.tmp);
  run_ok(kTrainVit, flags + " --out " + f.tmp.sub("b"), f.tmp);
  const std::string a = f.tmp.sub("a"), b = f.tmp.sub("b");
  CHECK(read_bytes(a + "/checkpoint.safetensors") == read_bytes(b + "/checkpoint.safetensors"));
  CHECK(log_without(a + "/log.csv", "img_per_s") == log_without(b + "/log.csv", "img_per_s"));
  CHECK(read_bytes(a + "/confusion.csv") == read_bytes(b + "/confusion.csv"));
}
