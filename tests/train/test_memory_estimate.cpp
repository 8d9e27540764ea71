// The memory estimate (train/safety/limits.h, train/flags/train_commands.h) against the peak
// a run really reaches: a few small train_gpt runs, each scaled by one setting (the
// batch, the width, the depth, the validation batches, the activation statistics'
// probe), measured as children (their peak resident memory, read at their exit) without
// any address-space limit. The estimate must not fall short of the peak by more than
// 1.25x (before: a batch of 20000 peaked at 1.69x its estimate, so a batch that did
// not fit was admitted), nor exceed it by more than 2.5x (it would refuse runs that fit).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "train/flags/train_commands.h"
#include "tests/fake_fashion_mnist.h"
#include "tests/sanitizer_build.h"
#include "tests/train/run_fixtures.h"
#include "train/flags/flag_parser.h"

using namespace nl::test;

namespace {

double estimate_bytes(const std::string& program, const std::string& args) {
  nl::FlagParser p(program, "");
  nl::TrainGptCommand gpt;
  nl::TrainVitCommand vit;
  if (program == "train_gpt") nl::add_train_gpt_flags(p, gpt);
  else nl::add_train_vit_flags(p, vit);
  REQUIRE(p.parse(split_args(args)));
  double total = 0;
  for (const nl::MemoryTerm& t : program == "train_gpt" ? nl::train_gpt_memory(gpt) : nl::vit_run_memory(vit.run))
    total += t.bytes;
  return total;
}

// A process's peak resident set in bytes: VmHWM of /proc/PID/status (-1 when unreadable).
double peak_resident_bytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return 1024.0 * std::stod(line.substr(6));  // "VmHWM:  1234 kB"
  return -1;
}

// The child's peak resident set, in bytes; the child must exit 0. Read from its VmHWM while
// ptrace holds it at its exit (PTRACE_EVENT_EXIT: its memory is still there): the peak of
// the program alone. wait4's ru_maxrss would also count the resident set the child had
// between fork and exec, the test process's own, hundreds of MiB when every test runs in
// one process. Where ptrace is refused (a container's seccomp), ru_maxrss it is, said so.
double peak_bytes(const std::string& program, const std::string& args, const TempDir& tmp) {
  const pid_t pid =
      spawn_program(nl::test::build_dir() + "/" + program, split_args(args), tmp.sub("o.txt"), tmp.sub("e.txt"));
  const bool traced = ptrace(PTRACE_SEIZE, pid, nullptr, (void*)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)) == 0;
  const int seize_error = errno;
  double at_exit = -1;
  int status = 0;
  rusage usage{};
  for (;;) {
    if (wait4(pid, &status, 0, &usage) < 0) {
      REQUIRE(errno == EINTR);
      continue;
    }
    if (!WIFSTOPPED(status)) break;  // it exited, or a signal ended it
    int pass_on = 0;
    if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) at_exit = peak_resident_bytes(pid);
    else if (status >> 16 == 0) pass_on = WSTOPSIG(status);  // a signal sent to the child: delivered
    ptrace(PTRACE_CONT, pid, nullptr, (void*)(long)pass_on);
  }
  INFO("stderr: " << read_bytes(tmp.sub("e.txt")));
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  if (!traced) {
    WARN("ptrace refused (" << std::strerror(seize_error)
                            << "): the peak is wait4's ru_maxrss, which counts this process too");
    return 1024.0 * (double)usage.ru_maxrss;
  }
  REQUIRE(at_exit > 0);
  return at_exit;
}

}  // namespace

TEST_CASE("memory estimate: within 1.25x of the measured peak across batch, width, depth, evaluation, probe",
          "[memory][cli]") {
  REQUIRE(std::filesystem::exists(kTrainGpt));
  FakeGptRun f;
  std::filesystem::create_directories(f.tmp.sub("images"));
  nl::test::write_fake_set(f.tmp.sub("images"), "train", 600);  // a ViT's images
  nl::test::write_fake_set(f.tmp.sub("images"), "t10k", 30);
  if (nl::test::kSanitizerBuild) {
    WARN("skipped under a sanitizer: its allocator's redzones and quarantine are part of the peak");
    return;
  }
  const std::string common = "--threads 1 --quiet --steps 1 --warmup 0 --eval-every 1 ";
  const std::string text = "train_gpt --data " + f.data + " ", images = "train_vit --data " + f.tmp.sub("images") + " ";
  const std::vector<std::string> runs = {
      text + "--layers 2 --dim 64 --heads 4 --seq 64 --batch 256 --eval-batches 1",    // the batch
      text + "--layers 1 --dim 512 --heads 8 --seq 32 --batch 24 --eval-batches 1",    // the width
      text + "--layers 12 --dim 64 --heads 4 --seq 32 --batch 64 --eval-batches 1",    // the depth
      // the validation batches: made at the start and held to the end (174 MiB of the estimate).
      // --stop-after 0 ends the run before its first step, so it never evaluates them: doing so
      // took 26 s, the longest test of the suite, and adds only one batch's forward to the peak.
      text + "--layers 1 --dim 32 --heads 2 --seq 32 --batch 2 --eval-batches 20000 --stop-after 0",
      text + "--layers 2 --dim 64 --heads 4 --seq 64 --batch 2 --eval-batches 1 --act-stats-every 1 "
             "--act-stats-batch 1500",                                                   // the probe
      images + "--val-size 100 --layers 2 --dim 128 --heads 4 --patch 4 --batch 500 --eval-batch 100",  // a ViT
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string program = runs[i].substr(0, runs[i].find(' '));
    const std::string args =
        common + runs[i].substr(program.size() + 1) + " --out " + f.tmp.sub("run" + std::to_string(i));
    const double estimate = estimate_bytes(program, args), peak = peak_bytes(program, args, f.tmp);
    INFO(runs[i] << "\nestimate " << estimate / 1048576.0 << " MiB, peak " << peak / 1048576.0 << " MiB, ratio "
                 << peak / estimate);
    WARN(runs[i] << ": estimate " << estimate / 1048576.0 << " MiB, peak " << peak / 1048576.0 << " MiB, ratio "
                 << peak / estimate);
    CHECK(peak <= 1.25 * estimate);
    CHECK(estimate <= 2.5 * peak);
  }
}

TEST_CASE("memory estimate: a batch that cannot fit is refused without any address-space limit", "[memory][cli]") {
  REQUIRE(std::filesystem::exists(kTrainGpt));
  FakeGptRun f;
  // before: estimated at about 18 GiB and admitted on a 23.5 GiB machine though it needed
  // about 30 (still in its first step after 60 s). With these flags the estimate is now
  // about 1260 GiB (672 GiB before), beyond any machine here.
  // The needles are the estimate's own words, which no allocator message holds.
  expect_refused(kTrainGpt,
                 "--data " + f.data + " --threads 1 --quiet --layers 4 --dim 128 --heads 4 --seq 64 --batch 200000 "
                 "--steps 1 --out " + f.tmp.sub("big"),
                 f.data, {"the run needs about", "--batch 200000 (what the backward pass keeps)"}, f.tmp);
  CHECK_FALSE(std::filesystem::exists(f.tmp.sub("big")));
}
