// Crash safety of train_gpt, run as a real child process: killed with SIGKILL at
// several moments (in a step, in a checkpoint write) and restarted with --resume each
// time, it leaves only whole checkpoints behind and ends exactly as an uninterrupted
// run; SIGTERM and SIGINT make it save a checkpoint and exit with 128 + the signal;
// --checkpoint-every / --keep-checkpoints keep the newest K checkpoints.
#include <catch2/catch.hpp>

#include "tests/fake_fashion_mnist.h"
#include "tests/needs.h"
#include "tests/test_files.h"
#include "tests/train/run_fixtures.h"  // kTrainGpt, checkpoint_step

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tensor/random.h"
#include "train/io/safetensors.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

void require_train_gpt_and_fortunes() {
  if (!fs::exists(kTrainGpt)) FAIL(kTrainGpt << " is not built");
  REQUIRE_RESOURCE(missing_fortunes());
}

// A small model whose steps take well under a millisecond; every checkpoint is fsynced.
const std::string kCrashRun =
    "--layers 1 --dim 16 --heads 2 --seq 8 --batch 2 --eval-every 50 --eval-batches 1 --act-stats-every 50 "
    "--threads 1 --quiet";

// Every checkpoint file in dir loads (no torn file under a checkpoint's name) and sits
// at a multiple of `every` or at the schedule's end; at most `keep` of them. Returns
// the step of checkpoint.safetensors, -1 when there is none yet.
int64_t check_whole_checkpoints(const std::string& dir, int64_t every, int64_t keep, int64_t steps) {
  int64_t files = 0, latest = -1;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("checkpoint", 0) != 0 || name.size() < 12 || name.substr(name.size() - 12) != ".safetensors")
      continue;
    ++files;
    INFO("checkpoint file " << name);
    int64_t step = -1;
    CHECK_NOTHROW(step = checkpoint_step(e.path().string()));
    CHECK((step % every == 0 || step == steps));
    if (name == "checkpoint.safetensors") latest = step;
  }
  // a kill between keeping the old file and pruning leaves one more, pruned next save
  CHECK(files <= keep + 1);
  return latest;
}

// The log without its speed column (wall-clock, the only field that may differ).
std::vector<std::vector<std::string>> log_without_column_5(const std::string& path) {
  auto rows = read_csv_rows(path);
  for (auto& r : rows)
    if (r.size() > 5) r.erase(r.begin() + 5);
  return rows;
}

}  // namespace

TEST_CASE("crash: SIGKILL at several moments, each run resumed, ends exactly as an uninterrupted run",
          "[crash][needs-fortunes]") {
  require_train_gpt_and_fortunes();
  TempDir tmp;
  const int64_t steps = 1500, every = 3, keep = 3;
  const std::string flags =
      kCrashRun + " --steps " + std::to_string(steps) + " --checkpoint-every 3 --keep-checkpoints 3";
  const std::string straight = tmp.sub("straight"), killed = tmp.sub("killed");
  {
    RunResult r = run_program(kTrainGpt, flags + " --out " + straight, tmp);
    INFO(r.err);
    REQUIRE(r.code == 0);
  }

  // kill moments drawn from a fixed seed: 15-140 ms after the start, program start-up and
  // data loading included, so they fall in steps and in checkpoint writes alike
  nl::Generator moments(2024);
  int kills_landed = 0, attempts = 0;
  bool finished = false;
  int64_t last_latest = -1;
  while (!finished && attempts < 12) {
    const bool kill_it = attempts < 6;
    std::vector<std::string> args = split_args(flags + " --out " + killed);
    // as the grid does: continue after a checkpoint, start again where the kill came before one
    args.push_back(fs::exists(killed + "/checkpoint.safetensors") ? "--resume" : "--overwrite");
    const pid_t pid = spawn_program(kTrainGpt, args, tmp.sub("out.txt"), tmp.sub("err.txt"));
    REQUIRE(pid > 0);
    if (kill_it) {
      std::this_thread::sleep_for(std::chrono::milliseconds(15 + moments.below(126)));
      kill(pid, SIGKILL);
    }
    const int status = wait_child(pid);
    ++attempts;
    INFO("attempt " << attempts << ", stderr: " << read_bytes(tmp.sub("err.txt")));
    if (WIFSIGNALED(status)) {
      CHECK(WTERMSIG(status) == SIGKILL);
      ++kills_landed;
    } else {
      REQUIRE(WIFEXITED(status));
      REQUIRE(WEXITSTATUS(status) == 0);
      finished = true;
    }
    if (!fs::exists(killed)) continue;  // killed before it wrote anything
    const int64_t latest = check_whole_checkpoints(killed, every, keep, steps);
    CHECK(latest >= last_latest);  // never goes back
    last_latest = latest;
    // the log holds every step up to the checkpoint, whole and in order (a kill while a
    // resumed run rewrote it in place used to lose them)
    const auto rows = read_csv_rows(killed + "/log.csv");
    CHECK((int64_t)rows.size() > latest);
    for (int64_t i = 1; i <= latest && i < (int64_t)rows.size(); ++i) {
      INFO("log row " << i);
      REQUIRE(rows[i].size() == rows[0].size());
      REQUIRE(rows[i][0] == std::to_string(i));
    }
  }
  CHECK(kills_landed >= 3);
  REQUIRE(finished);

  CHECK_FALSE(fs::exists(killed + "/checkpoint.safetensors.tmp"));
  CHECK(checkpoint_step(killed + "/checkpoint.safetensors") == steps);
  // the same log (speed aside), row for row, and the same final parameters and moments
  const auto a = log_without_column_5(straight + "/log.csv"), b = log_without_column_5(killed + "/log.csv");
  REQUIRE(a.size() == (size_t)steps + 1);
  CHECK(b.size() == a.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    INFO("log row " << i);
    CHECK(b[i] == a[i]);
  }
  CHECK(read_bytes(killed + "/act_stats.csv") == read_bytes(straight + "/act_stats.csv"));
  const auto fa = nl::load_safetensors(straight + "/checkpoint.safetensors");
  const auto fb = nl::load_safetensors(killed + "/checkpoint.safetensors");
  REQUIRE(fa.tensors.size() == fb.tensors.size());
  for (const auto& [name, t] : fa.tensors) {
    INFO(name);
    REQUIRE(fb.tensors.count(name));
    CHECK(fb.tensors.at(name).to_vector() == t.to_vector());
  }
  CHECK(read_bytes(killed + "/sample.txt") == read_bytes(straight + "/sample.txt"));
}

namespace {

// Starts a long run of `program` with `flags`, waits until its log holds `rows` steps,
// sends `sig`; returns the exit status, with stderr in err.
int signal_mid_run(const std::string& out, int sig, size_t rows, const TempDir& tmp, std::string& err,
                   const std::string& program = kTrainGpt, const std::string& flags = kCrashRun + " --steps 1000000") {
  const pid_t pid = spawn_program(program, split_args(flags + " --out " + out), tmp.sub("o.txt"), tmp.sub("e.txt"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (read_csv_rows(out + "/log.csv").size() < rows + 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, sig);
  const int status = wait_child(pid);
  err = read_bytes(tmp.sub("e.txt"));
  return status;
}

}  // namespace

TEST_CASE("crash: SIGTERM and SIGINT save a checkpoint of the last step and exit with 128 + signal",
          "[crash][needs-fortunes]") {
  require_train_gpt_and_fortunes();
  for (int sig : {SIGTERM, SIGINT}) {
    TempDir tmp;
    const std::string out = tmp.sub("run");
    std::string err;
    const int status = signal_mid_run(out, sig, 20, tmp, err);
    INFO("signal " << sig << ", stderr: " << err);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + sig);
    CHECK(count_lines(err) == 1);
    CHECK_THAT(err, Contains(sig == SIGTERM ? "SIGTERM" : "SIGINT") && Contains("--resume"));
    // the checkpoint is of the last step the log holds, and resuming goes on from it
    const auto rows = read_csv_rows(out + "/log.csv");
    REQUIRE(rows.size() > 20);
    const int64_t last = std::stoll(rows.back()[0]);
    CHECK(last == (int64_t)rows.size() - 1);
    CHECK(checkpoint_step(out + "/checkpoint.safetensors") == last);
    CHECK_THAT(err, Contains("step " + std::to_string(last)));
    RunResult r = run_program(
        kTrainGpt, kCrashRun + " --steps 1000000 --resume --stop-after " + std::to_string(last + 3) + " --out " + out,
        tmp);
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(read_csv_rows(out + "/log.csv").size() == (size_t)last + 4);
    CHECK(checkpoint_step(out + "/checkpoint.safetensors") == last + 3);
  }
}

TEST_CASE("crash: --checkpoint-every N --keep-checkpoints K keeps the newest K, older ones under their step",
          "[crash][needs-fortunes]") {
  require_train_gpt_and_fortunes();
  TempDir tmp;
  const std::string out = tmp.sub("run");
  RunResult r =
      run_program(kTrainGpt, kCrashRun + " --steps 23 --checkpoint-every 5 --keep-checkpoints 3 --out " + out, tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  // saved at 5, 10, 15, 20 and the end (23): the newest three remain
  CHECK(checkpoint_step(out + "/checkpoint.safetensors") == 23);
  CHECK(checkpoint_step(out + "/checkpoint-step00000020.safetensors") == 20);
  CHECK(checkpoint_step(out + "/checkpoint-step00000015.safetensors") == 15);
  CHECK_FALSE(fs::exists(out + "/checkpoint-step00000010.safetensors"));
  CHECK_FALSE(fs::exists(out + "/checkpoint-step00000005.safetensors"));
  // keep 1 (the default): only checkpoint.safetensors
  const std::string one = tmp.sub("one");
  r = run_program(kTrainGpt, kCrashRun + " --steps 12 --checkpoint-every 5 --out " + one, tmp);
  REQUIRE(r.code == 0);
  int files = 0;
  for (const auto& e : fs::directory_iterator(one)) files += e.path().extension() == ".safetensors";
  CHECK(files == 1);
  // a run replacing it (--overwrite) drops its history too
  r = run_program(kTrainGpt, kCrashRun + " --steps 4 --overwrite --out " + out, tmp);
  REQUIRE(r.code == 0);
  CHECK_FALSE(fs::exists(out + "/checkpoint-step00000020.safetensors"));
  CHECK(checkpoint_step(out + "/checkpoint.safetensors") == 4);
}

TEST_CASE("crash: train_vit too saves on SIGTERM, keeps its checkpoints and resumes", "[crash]") {
  const std::string vit = ::nl::test::build_dir() + "/train_vit";
  REQUIRE(fs::exists(vit));
  FakeVitRun f;
  const std::string out = f.tmp.sub("run");
  std::string err;
  const int status = signal_mid_run(out, SIGTERM, 12, f.tmp, err, vit,
                                    f.tiny + " --steps 1000000 --checkpoint-every 4 --keep-checkpoints 2");
  INFO("stderr: " << err);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
  CHECK(count_lines(err) == 1);
  const auto rows = read_csv_rows(out + "/log.csv");
  REQUIRE(rows.size() > 12);
  const int64_t last = std::stoll(rows.back()[0]);
  CHECK(checkpoint_step(out + "/checkpoint.safetensors") == last);
  // the newest periodic checkpoint before it is kept too (keep 2)
  const int64_t previous = (last - 1) / 4 * 4;
  char name[64];
  std::snprintf(name, sizeof name, "/checkpoint-step%08lld.safetensors", (long long)previous);
  CHECK(checkpoint_step(out + name) == previous);
  RunResult r = run_program(vit, f.tiny + " --steps 1000000 --resume --stop-after " + std::to_string(last + 2) +
                                     " --checkpoint-every 4 --keep-checkpoints 2 --out " + out, f.tmp);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(read_csv_rows(out + "/log.csv").size() == (size_t)last + 3);
}
