// Tests of the training loop's thread policy (train/loop/thread_governor.h) on made-up
// step times: it keeps the full count on a machine of its own, drops to half when its
// threads queue behind another process and half the threads step faster, returns when
// they do not, and looks again after its hold. And the run-queue reading it starts from.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/threads.h"
#include "train/loop/thread_governor.h"
#include "tests/needs.h"
#include "tests/sanitizer_build.h"
#include "tests/test_files.h"

using namespace nl;
using Catch::Contains;

namespace {

// Steps with the given wall time per thread count and queued share; returns the
// thread count each step ran at.
std::vector<int> run_steps(ThreadGovernor& g, int steps, double ms_at_full, double ms_at_half, double queued_share) {
  std::vector<int> counts;
  for (int s = 0; s < steps; ++s) {
    const int t = g.threads();
    counts.push_back(t);
    const double seconds = 1e-3 * (t == 2 ? ms_at_full : ms_at_half);
    g.after_step(seconds, queued_share * seconds * t);
  }
  return counts;
}

}  // namespace

TEST_CASE("thread governor: alone, it keeps every thread", "[threads][governor]") {
  ThreadGovernor g(2, {8, 50, 0.15});
  const std::vector<int> counts = run_steps(g, 500, 40.0, 66.0, 0.01);
  for (int t : counts) CHECK(t == 2);
  CHECK(g.change().empty());
}

TEST_CASE("thread governor: queued behind another process, it keeps half the threads when they step faster",
          "[threads][governor]") {
  ThreadGovernor g(2, {8, 50, 0.15});
  // beside a nice-0 process: 76 ms at 2 threads, 66 at 1 (bench_gpt --contend)
  const std::vector<int> counts = run_steps(g, 8 + 8, 76.0, 66.0, 0.4);
  for (int s = 0; s < 8; ++s) CHECK(counts[s] == 2);   // the window at the full count
  for (int s = 8; s < 16; ++s) CHECK(counts[s] == 1);  // the probe
  CHECK(g.threads() == 1);                             // kept
  CHECK_THAT(g.change(), Contains("keeping 1 of 2 threads for 50 steps") &&
                             Contains("66.0 ms a step at 1, 76.0 at 2") && Contains("queued 40 %"));
  const std::vector<int> held = run_steps(g, 50, 76.0, 66.0, 0.4);
  for (int t : held) CHECK(t == 1);  // for the hold
  // after the hold it measures the full count again
  CHECK(g.threads() == 2);
  CHECK_THAT(g.change(), Contains("threads 1 -> 2") && Contains("measuring the full count again"));
}

TEST_CASE("thread governor: each decision is announced once, the probe's start included", "[threads][governor]") {
  ThreadGovernor g(2, {4, 10, 0.15});
  std::vector<std::string> said;
  for (int s = 0; s < 4 + 4 + 10; ++s) {
    const double seconds = g.threads() == 2 ? 0.076 : 0.066;
    g.after_step(seconds, 0.4 * seconds * g.threads());
    if (g.change() != (said.empty() ? "" : said.back())) said.push_back(g.change());
  }
  REQUIRE(said.size() == 3);
  CHECK_THAT(said[0], Contains("threads 2 -> 1") && Contains("queued 40 % of the time over 4 steps; trying 1"));
  CHECK_THAT(said[1], Contains("keeping 1 of 2 threads"));
  CHECK_THAT(said[2], Contains("threads 1 -> 2") && Contains("measuring the full count again"));
}

TEST_CASE("thread governor: queued, but half the threads are slower: back to the full count", "[threads][governor]") {
  ThreadGovernor g(2, {8, 50, 0.15});
  const std::vector<int> counts = run_steps(g, 8 + 8 + 50, 50.0, 66.0, 0.3);
  for (int s = 8; s < 16; ++s) CHECK(counts[s] == 1);  // probed
  for (int s = 16; s < 66; ++s) CHECK(counts[s] == 2);  // and went back
  CHECK_THAT(g.change(), Contains("threads 1 -> 2") && Contains("fewer threads were not faster"));
}

TEST_CASE("thread governor: queued below the threshold starts no probe; one thread has nothing to change",
          "[threads][governor]") {
  ThreadGovernor below(2, {8, 50, 0.15});
  for (int t : run_steps(below, 200, 76.0, 66.0, 0.14)) CHECK(t == 2);
  ThreadGovernor one(1, {8, 50, 0.15});
  for (int s = 0; s < 100; ++s) CHECK(one.after_step(0.07, 0.05) == 1);
  CHECK_THROWS_WITH(ThreadGovernor(0), Contains("max_threads must be >= 1"));
  CHECK_THROWS_WITH(ThreadGovernor(2, {0, 50, 0.15}), Contains("window 0"));
}

TEST_CASE("thread governor: four threads probe two", "[threads][governor]") {
  ThreadGovernor g(4, {4, 10, 0.15});
  for (int s = 0; s < 4; ++s) g.after_step(0.05, 0.5 * 0.05 * 4);
  CHECK(g.threads() == 2);
}

TEST_CASE("run_queue_wait_seconds: a non-negative total that never decreases", "[threads][governor]") {
  const double a = run_queue_wait_seconds();
  volatile double x = 0;
  for (int i = 0; i < 1000000; ++i) x = x + 1.0;
  const double b = run_queue_wait_seconds();
  CHECK(a >= 0.0);
  CHECK(b >= a);
}

namespace {

// The rows of a train_gpt log.csv, every column but the speed (column 5, tok_per_s).
std::vector<std::string> log_lines_without_speed(const std::string& log) {
  std::vector<std::string> lines;
  for (const auto& row : nl::test::read_csv_rows(log)) {
    std::string kept;
    for (size_t k = 0; k < row.size(); ++k)
      if (k != 5) kept += row[k] + ",";
    lines.push_back(kept);
  }
  return lines;
}

// train_gpt's log at `threads` threads, every column but the speed (tok_per_s).
std::vector<std::string> train_gpt_log_without_speed(const std::string& norm, int threads,
                                                     const nl::test::TempDir& tmp) {
  const std::string out = tmp.sub(norm + std::to_string(threads));
  const nl::test::RunResult r = nl::test::run_program(
      nl::test::build_dir() + "/train_gpt",
      "--layers 2 --dim 64 --heads 2 --seq 32 --batch 8 --steps 12 --eval-every 6 --eval-batches 1 --quiet --norm " +
          norm + " --threads-adapt off --threads " + std::to_string(threads) + " --out " + out,
      tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return log_lines_without_speed(out + "/log.csv");
}

}  // namespace

TEST_CASE("threads: train_gpt at 1 and at 2 threads writes the same log but for the speed column",
          "[governor][cli][needs-fortunes]") {
  // what lets the governor change the count mid-run: the count changes no number
  REQUIRE_RESOURCE(nl::test::missing_fortunes());
  nl::test::TempDir tmp;
  for (const char* norm : {"ln", "bhyt"}) {
    INFO("norm " << norm);
    const std::vector<std::string> one = train_gpt_log_without_speed(norm, 1, tmp),
                                   two = train_gpt_log_without_speed(norm, 2, tmp);
    REQUIRE(one.size() == 13);
    CHECK(one[0].find("tok_per_s") == std::string::npos);
    CHECK(one == two);
  }
}

namespace {

// What a demo-sized train_gpt run (the model of `make demo`, kDemoSteps steps) writes at
// `threads` threads with OpenBLAS's `core` kernels ("": its own choice): the log but for
// the speed column, the sample, and the checkpoint's tensors (weights, AdamW's moments)
// byte for byte; its header, which records --threads, is left out. Under a sanitizer 4
// steps: every kernel and every file a step writes still runs, and a demo-sized step there
// took about 0.7 s of the ASan suite's longest test (32 s), whose bits the plain build checks.
constexpr int kDemoSteps = nl::test::kSanitizerBuild ? 4 : 20;
struct DemoRun {
  std::vector<std::string> log;
  std::string sample, tensors;
};

DemoRun demo_run(const std::string& core, int threads, const nl::test::TempDir& tmp) {
  const std::string out = tmp.sub("demo" + core + std::to_string(threads));
  const nl::test::RunResult r = nl::test::run_program(
      (core.empty() ? "" : "env OPENBLAS_CORETYPE=" + core + " ") + nl::test::build_dir() + "/train_gpt",
      "--layers 4 --dim 128 --heads 4 --seq 64 --batch 16 --steps " + std::to_string(kDemoSteps) +
          " --eval-every " + std::to_string(kDemoSteps / 2) +
          " --eval-batches 1 --quiet --threads-adapt off --threads " + std::to_string(threads) + " --out " + out,
      tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  DemoRun run;
  run.log = log_lines_without_speed(out + "/log.csv");
  run.sample = nl::test::read_bytes(out + "/sample.txt");
  const std::string file = nl::test::read_bytes(out + "/checkpoint.safetensors");
  REQUIRE(file.size() > 8);
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | (unsigned char)file[i];  // little-endian length
  REQUIRE(8 + header < file.size());
  run.tensors = file.substr(8 + header);
  return run;
}

}  // namespace

TEST_CASE("threads: at the demo's size, 1 and 2 threads write the same log, sample and checkpoint tensors",
          "[governor][cli][needs-fortunes]") {
  // At this size every product is big enough for OpenBLAS to split it over its threads,
  // which it did its own way per thread count (5.6e-7 apart after 30 steps with the
  // Haswell kernels); tensor/cpu/gemm.h keeps OpenBLAS on one thread over fixed tiles.
  // The Haswell kernels run on any CPU with AVX2 and FMA, so they are tested there too,
  // whatever this CPU's own kernels are (not again under a sanitizer: the plain build's
  // run covers the bits, and the sanitizer's run of its own kernels the memory).
  REQUIRE_RESOURCE(nl::test::missing_fortunes());
  nl::test::TempDir tmp;
  std::vector<std::string> cores{""};
  if (!nl::blas_core_for_this_cpu().empty() && !nl::test::kSanitizerBuild) cores.push_back("Haswell");
  for (const std::string& core : cores) {
    INFO("OpenBLAS kernels: " << (core.empty() ? "its own choice" : core));
    const DemoRun one = demo_run(core, 1, tmp), two = demo_run(core, 2, tmp);
    REQUIRE(one.log.size() == kDemoSteps + 1);
    REQUIRE(one.tensors.size() > 1000000);
    REQUIRE(two.tensors.size() == one.tensors.size());
    CHECK(one.log == two.log);
    CHECK(one.sample == two.sample);
    const auto differs = std::mismatch(one.tensors.begin(), one.tensors.end(), two.tensors.begin()).first;
    const size_t first_difference = (size_t)(differs - one.tensors.begin());
    INFO("tensor bytes: " << one.tensors.size() << " and " << two.tensors.size() << ", first difference at byte "
                          << first_difference);
    CHECK(one.tensors == two.tensors);
  }
}

TEST_CASE("thread governor: end_step leaves the pools alone while the count stays", "[threads][governor]") {
  const int before = nl::num_threads();
  nl::set_num_threads(2);
  ThreadGovernor g(2, {4, 10, 0.99});  // a 99 % queue share never happens between two reads here
  for (int s = 0; s < 12; ++s) {
    g.start_step();
    CHECK_FALSE(g.end_step(0.01));
  }
  CHECK(nl::num_threads() == 2);
  nl::set_num_threads(before);
}
