// Fault injection, memory: every setting that scales a run's memory is covered by the
// estimate (train/safety/limits.h) before anything is allocated, so a run that would
// not fit is refused with exit 2 and one line naming the setting and the GiB, instead
// of growing until the kernel kills it (or std::bad_alloc ends it with SIGABRT). The
// programs run as children under an address-space limit (`ulimit -v` in a shell), and
// the settings are the ones the issue saw fail: --act-stats-batch 1000000 grew to
// 23.5 GB, --eval-batches 1000000 aborted under 3 GB, fold_ln built a 50 GB model from
// the metadata of a 260 KB file.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tensor/allocator.h"
#include "tensor/tensor.h"
#include "tests/fake_fashion_mnist.h"
#include "tests/needs.h"
#include "tests/train/run_fixtures.h"
#include "train/flags/program.h"
#include "train/io/safetensors.h"
#include "train/safety/limits.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

// The limit is tests/needs.h's kAddressLimitKib. Below about 0.2 GiB OpenBLAS's loader
// retries its buffer's mmap forever, before main runs: the time limit turns that into
// exit 124.
constexpr long kLimitKib = kAddressLimitKib;

// `program args` under ulimit -v: exit 2 (not a signal), one line naming every needle,
// and `out` never made.
void expect_refused_under_limit(const std::string& program, const std::string& args, const std::string& out,
                                const std::vector<std::string>& needles, const TempDir& tmp) {
  const RunResult r = run_program("timeout -k 5 60 bash -c 'ulimit -v " + std::to_string(kLimitKib) + "; exec " +
                                      program + " " + args + " --out " + out + "'",
                                  "", tmp);
  INFO(fs::path(program).filename().string() << " " << args << "\nexit " << r.code << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(count_lines(r.err) == 1);
  for (const auto& n : needles) CHECK_THAT(r.err, Contains(n));
  CHECK_FALSE(fs::exists(out));
}

}  // namespace

TEST_CASE("fault memory: each setting that scales memory is refused by the estimate under ulimit -v",
          "[fault][cli][needs-address-limit]") {
  REQUIRE_RESOURCE(missing_address_limit());
  REQUIRE(fs::exists(kTrainGpt));
  REQUIRE(fs::exists(kTrainVit));
  FakeGptRun f;
  const std::string out = f.tmp.sub("run");
  // before: grew to 23.5 GB, killed by the kernel
  expect_refused_under_limit(kTrainGpt, f.tiny + " --act-stats-batch 1000000", out,
                             {"--act-stats-batch 1000000", "GiB", "address-space limit"}, f.tmp);
  // before: failed after 12.5 GB with an allocator message naming no flag; now beyond the range
  expect_refused_under_limit(kTrainGpt, f.tiny + " --act-stats-batch 100000000", out,
                             {"--act-stats-batch must lie in"}, f.tmp);
  // before: SIGABRT from a std::bad_alloc thrown while the allocator freed
  expect_refused_under_limit(kTrainGpt, f.tiny + " --eval-batches 1000000", out, {"--eval-batches 1000000", "GiB"},
                             f.tmp);
  expect_refused_under_limit(kTrainGpt, f.tiny + " --batch 200000", out, {"--batch 200000", "GiB"}, f.tmp);
  expect_refused_under_limit(kTrainGpt, f.tiny + " --layers 64 --dim 1024 --heads 8", out,
                             {"--layers 64 --dim 1024", "GiB"}, f.tmp);
  FakeVitRun v;
  expect_refused_under_limit(kTrainVit, v.tiny + " --steps 2 --eval-batch 1000000", out,
                             {"--eval-batch 1000000", "GiB"}, f.tmp);
  expect_refused_under_limit(kTrainVit, v.tiny + " --steps 2 --batch 400000", out, {"--batch 400000", "GiB"}, f.tmp);
}

TEST_CASE("fault memory: fold_ln refuses a checkpoint whose metadata claims a model that does not fit",
          "[fault][cli]") {
  REQUIRE(fs::exists(kFoldLn));
  FakeGptRun f;
  const std::string run = f.train("run", "--norm ln");
  // the same tensors, the metadata claiming 64 layers of width 4096 (about 50 GB to build)
  nl::SafetensorsFile file = nl::load_safetensors(run + "/checkpoint.safetensors");
  auto model = nlohmann::json::parse(file.metadata.at("model"));
  model["layers"] = 64;
  model["dim"] = 4096;
  model["heads"] = 32;
  file.metadata["model"] = model.dump();
  const std::string forged = f.tmp.sub("forged.safetensors");
  nl::save_safetensors(forged, file.tensors, file.metadata);
  REQUIRE(fs::file_size(forged) < 400000);
  const RunResult refused = run_program(kFoldLn, "--threads 1 --in " + forged + " --out " + f.tmp.sub("folded"), f.tmp);
  INFO(refused.err);
  CHECK(refused.code == 2);
  CHECK(count_lines(refused.err) == 1);
  CHECK_THAT(refused.err, Contains("forged.safetensors") && Contains("64 layers of width 4096") && Contains("GiB") &&
                              Contains("but the file holds " + std::to_string(fs::file_size(forged)) + " bytes"));
  CHECK_FALSE(fs::exists(f.tmp.sub("folded")));
}

TEST_CASE("fault memory: an allocation that fails anyway is one line naming the estimate's largest part",
          "[fault]") {
  // the estimate a run passed
  nl::check_memory_estimate({{"--eval-batches 20 (the fixed validation batches)", 1e6}, {"--batch 16", 1e5}});
  // stderr to a file for the length of the call
  const TempDir tmp;
  const std::string path = tmp.sub("stderr.txt");
  std::fflush(stderr);
  const int saved = dup(2);
  std::FILE* capture = std::fopen(path.c_str(), "w");
  REQUIRE(capture);
  dup2(fileno(capture), 2);
  nl::set_system_alloc_hook([](nl::Device, size_t bytes) { return bytes < (size_t)1 << 20; });
  const int code = nl::run_program("train_gpt", [] {
    nl::Tensor t = nl::Tensor::empty({int64_t(1) << 22});  // 16 MiB: refused by the hook
    return 0;
  });
  nl::set_system_alloc_hook(nullptr);
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::fclose(capture);
  const std::string err = read_bytes(path);
  INFO(err);
  CHECK(code == 2);
  CHECK(count_lines(err) == 1);
  CHECK_THAT(err, Contains("train_gpt: error: allocator: out of cpu memory") &&
                      Contains("the run was estimated at about") &&
                      Contains("the most for --eval-batches 20 (the fixed validation batches)"));
}
