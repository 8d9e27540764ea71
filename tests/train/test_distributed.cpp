// Data-parallel training (train/safety/distributed.h) run for real: mpirun starts two ranks of
// the MPI build (build/<this build>-mpi/train_gpt, made by `make MPI=1`) on this machine.
//   equivalence: 2 ranks with batch B (B/2 rows each) log the same losses and gradient
//                norms, step for step, as one process of the plain build with batch B
//   stop:        SIGTERM to one rank abandons the step in progress on every rank
//   faults:      a rank killed mid-run makes the job end within a bounded time with
//                mpirun's report, and --resume continues from the last checkpoint to
//                the same losses; a rank that hangs (SIGSTOP) trips the others' watchdog
// Tagged [needs-mpi] and [needs-fortunes]: make test skips them, naming the reason, where
// mpirun, the MPI build or the text is missing (tests/needs.h).
#include <catch2/catch.hpp>

#include "tests/needs.h"
#include "tests/test_files.h"
#include "tests/train/run_fixtures.h"  // checkpoint_step
#include "tests/train/run_logs.h"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "train/io/run_log.h"
#include "train/io/safetensors.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {


void require_mpi_and_fortunes() {
  REQUIRE_RESOURCE(missing_mpi());
  REQUIRE_RESOURCE(missing_fortunes());
  REQUIRE(fs::exists(kTrainGpt));
}

// Two ranks on the two cores (more ranks than cores is allowed); as root mpirun wants
// to be told that this is meant.
std::string mpirun_flags(int ranks) {
  std::string f = "-np " + std::to_string(ranks) + " --oversubscribe";
  if (geteuid() == 0) f += " --allow-run-as-root";
  return f;
}

// A model whose steps take about a millisecond; one thread per rank.
const std::string kDistributedRun =
    "--layers 1 --dim 16 --heads 2 --seq 8 --eval-batches 1 --act-stats-every 0 --threads 1 --quiet";

// The pid of rank `rank` among mpirun's children (OpenMPI puts the rank in each
// process's environment), -1 when not found.
pid_t rank_pid(pid_t mpirun, int rank) {
  const std::string wanted = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_bytes(e.path().string() + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    int parent = -1;
    if (std::sscanf(stat.c_str() + close + 2, "%*c %d", &parent) != 1 || parent != mpirun) continue;
    std::string env = read_bytes(e.path().string() + "/environ");
    for (char& c : env) c = c == '\0' ? '\n' : c;
    if (env.find("\n" + wanted + "\n") != std::string::npos || env.rfind(wanted + "\n", 0) == 0)
      return (pid_t)std::stoi(name);
  }
  return -1;
}

// Waits at most `limit` for a spawned child; true and its status when it ended, false
// (after killing it) when it did not.
bool wait_bounded(pid_t pid, std::chrono::seconds limit, int& status) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  wait_child(pid);
  return false;
}

// Whether pid has ended within `limit` (a zombie counts as ended: once mpirun is gone,
// its orphans are reaped by whatever runs as pid 1, if anything does).
bool ends_within(pid_t pid, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (kill(pid, 0) != 0) return true;
    const std::string stat = read_bytes("/proc/" + std::to_string(pid) + "/stat");
    const size_t close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z') return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

bool wait_for_file(const std::string& path, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// The train losses to 1e-5 at every step, and with_grad_norms the gradient norms before
// clipping too (AdamW after clipping barely sees a gradient summed instead of averaged;
// the norm does; over hundreds of steps they drift apart by a few 1e-5, the losses less).
void check_same_losses(const std::string& reference_log, const std::string& log, int steps,
                       bool with_grad_norms) {
  for (const std::string column : {"train_loss", "grad_norm"}) {
    if (column == "grad_norm" && !with_grad_norms) continue;
    REQUIRE(log_column(reference_log, column).size() == (size_t)steps);
    check_same_column(reference_log, log, column, (size_t)steps, 1e-5);
  }
}

}  // namespace

TEST_CASE("distributed: 2 ranks with B/2 rows each give the losses of 1 process with batch B",
          "[mpi][needs-mpi][needs-fortunes]") {
  require_mpi_and_fortunes();
  TempDir tmp;
  const std::string flags = kDistributedRun + " --batch 8 --steps 50 --eval-every 25";
  RunResult single = run_program(kTrainGpt, flags + " --out " + tmp.sub("single"), tmp);
  INFO(single.err);
  REQUIRE(single.code == 0);
  RunResult two = run_program(mpirun_path(), mpirun_flags(2) + " " + kMpiTrainGpt + " " + flags + " --out " +
                                                 tmp.sub("two"), tmp);
  INFO("mpirun stdout: " << two.out << "\nstderr: " << two.err);
  REQUIRE(two.code == 0);
  CHECK_THAT(two.out, Contains("data parallel: 2 ranks"));
  check_same_losses(tmp.sub("single") + "/log.csv", tmp.sub("two") + "/log.csv", 50, true);
  // rank 0 evaluates with the parameters every rank holds
  const auto [val_worst, val_found] =
      largest_difference(log_column(tmp.sub("single") + "/log.csv", "val_loss"),
                         log_column(tmp.sub("two") + "/log.csv", "val_loss"));
  CHECK(val_found);
  CHECK(val_worst <= 1e-5);

  // a control that the comparison can fail: half the batch in one process is another run
  RunResult half =
      run_program(kTrainGpt, kDistributedRun + " --batch 4 --steps 50 --eval-every 25 --out " + tmp.sub("half"), tmp);
  REQUIRE(half.code == 0);
  const auto [half_worst, half_found] =
      largest_difference(log_column(tmp.sub("single") + "/log.csv", "train_loss"),
                         log_column(tmp.sub("half") + "/log.csv", "train_loss"));
  CHECK(half_worst > 1e-3);

  // a global batch that does not split evenly is refused with one line
  RunResult odd = run_program(mpirun_path(), mpirun_flags(2) + " " + kMpiTrainGpt + " " + kDistributedRun +
                                                 " --batch 7 --steps 5 --out " + tmp.sub("odd"), tmp);
  CHECK(odd.code != 0);
  CHECK_THAT(odd.err, Contains("--batch 7 (the global batch) must divide by the 2 ranks"));
}

TEST_CASE("distributed: a killed rank ends the job promptly and --resume continues it",
          "[mpi][needs-mpi][needs-fortunes]") {
  require_mpi_and_fortunes();
  TempDir tmp;
  const int steps = 400;
  const std::string flags = kDistributedRun + " --batch 4 --steps " + std::to_string(steps) +
                            " --eval-every 100 --checkpoint-every 10";
  const std::string dir = tmp.sub("killed");
  RunResult reference = run_program(kTrainGpt, flags + " --out " + tmp.sub("reference"), tmp);
  REQUIRE(reference.code == 0);

  const std::string err = tmp.sub("err.txt");
  std::vector<std::string> args = split_args(mpirun_flags(2) + " " + kMpiTrainGpt + " " + flags + " --out " + dir);
  const pid_t mpirun = spawn_program(mpirun_path(), args, tmp.sub("out.txt"), err);
  REQUIRE(mpirun > 0);
  // kill rank 1 once the first checkpoint is on disk, well before the schedule ends
  const bool checkpointed = wait_for_file(dir + "/checkpoint.safetensors", std::chrono::seconds(60));
  const pid_t victim = rank_pid(mpirun, 1), survivor = rank_pid(mpirun, 0);
  const auto killed_at = std::chrono::steady_clock::now();
  if (victim > 0) kill(victim, SIGKILL);
  int status = 0;
  const bool ended = wait_bounded(mpirun, std::chrono::seconds(60), status);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  INFO("mpirun stderr: " << read_bytes(err));
  REQUIRE(checkpointed);
  REQUIRE(victim > 0);
  REQUIRE(ended);
  CHECK(took < 30);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) != 0);
  CHECK_THAT(read_bytes(err), Contains("signal 9"));  // mpirun names the rank that died and how
  CHECK((survivor < 0 || ends_within(survivor, std::chrono::seconds(10))));  // rank 0 is gone too
  const int64_t kept = checkpoint_step(dir + "/checkpoint.safetensors");
  CHECK(kept % 10 == 0);
  CHECK(kept < steps);

  // every rank resumes from the one checkpoint; the finished run is the uninterrupted one
  RunResult resumed = run_program(mpirun_path(), mpirun_flags(2) + " " + kMpiTrainGpt + " " + flags + " --out " + dir +
                                                     " --resume", tmp);
  INFO("resumed stderr: " << resumed.err);
  REQUIRE(resumed.code == 0);
  CHECK(checkpoint_step(dir + "/checkpoint.safetensors") == steps);
  check_same_losses(tmp.sub("reference") + "/log.csv", dir + "/log.csv", steps, false);
}

TEST_CASE("distributed: a stop signal to one rank abandons its step on every rank; the resumed run is the same",
          "[mpi][needs-mpi][needs-fortunes]") {
  require_mpi_and_fortunes();
  TempDir tmp;
  // steps of seconds (2048 windows of 64 bytes, half per rank): SIGTERM to rank 1 only,
  // 0.3 s into step 2. A step that ran to its end (ranks that did not vote before the
  // gradients' all-reduce) would be logged and checkpointed as step 2.
  const std::string run = "--layers 2 --dim 64 --heads 4 --seq 64 --batch 2048 --threads 1 --quiet "
                          "--eval-every 1000 --eval-batches 1 --steps 100 --warmup 0 --checkpoint-every 1";
  const std::string dir = tmp.sub("stopped"), err = tmp.sub("err.txt");
  const std::string mpi = mpirun_flags(2) + " " + kMpiTrainGpt + " " + run;
  const pid_t mpirun = spawn_program(mpirun_path(), split_args(mpi + " --out " + dir), tmp.sub("out.txt"), err);
  REQUIRE(mpirun > 0);
  const bool checkpointed = wait_for_file(dir + "/checkpoint.safetensors", std::chrono::seconds(120));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const pid_t victim = rank_pid(mpirun, 1);
  if (victim > 0) kill(victim, SIGTERM);
  int status = 0;
  const bool ended = wait_bounded(mpirun, std::chrono::seconds(120), status);
  INFO("mpirun stderr: " << read_bytes(err));
  REQUIRE(checkpointed);
  REQUIRE(victim > 0);
  REQUIRE(ended);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) != 0);
  // rank 0 never saw the signal: it learnt it from the vote, and its checkpoint is step 1's
  CHECK_THAT(read_bytes(err), Contains("stopped by SIGTERM: checkpoint of step 1"));
  REQUIRE(read_csv_rows(dir + "/log.csv").size() == 2);
  CHECK(checkpoint_step(dir + "/checkpoint.safetensors") == 1);

  // the resumed job draws the abandoned batch again: its step 2 is the straight job's, bit for bit
  const RunResult resumed = run_program(mpirun_path(), mpi + " --resume --stop-after 2 --out " + dir, tmp);
  INFO("resumed stderr: " << resumed.err);
  REQUIRE(resumed.code == 0);
  const RunResult direct = run_program(mpirun_path(), mpi + " --stop-after 2 --out " + tmp.sub("direct"), tmp);
  REQUIRE(direct.code == 0);
  const auto a = read_csv_rows(dir + "/log.csv"), b = read_csv_rows(tmp.sub("direct") + "/log.csv");
  REQUIRE(a.size() == 3);
  REQUIRE(b.size() == 3);
  REQUIRE(a[0] == b[0]);
  for (size_t k = 0; k < a[0].size(); ++k)  // every column but the speed, as the log writes it
    if (a[0][k] != "tok_per_s") CHECK(a[2][k] == b[2][k]);
}

TEST_CASE("distributed: a rank that hangs trips the others' watchdog within --dist-timeout",
          "[mpi][needs-mpi][needs-fortunes]") {
  require_mpi_and_fortunes();
  TempDir tmp;
  const std::string dir = tmp.sub("hung"), err = tmp.sub("err.txt");
  std::vector<std::string> args = split_args(mpirun_flags(2) + " " + kMpiTrainGpt + " " + kDistributedRun +
                                             " --batch 4 --steps 100000 --eval-every 1000 --checkpoint-every 10 "
                                             "--dist-timeout 2 --out " + dir);
  const pid_t mpirun = spawn_program(mpirun_path(), args, tmp.sub("out.txt"), err);
  REQUIRE(mpirun > 0);
  const bool started = wait_for_file(dir + "/checkpoint.safetensors", std::chrono::seconds(60));
  const pid_t victim = rank_pid(mpirun, 1);
  if (victim > 0) kill(victim, SIGSTOP);  // alive, but never answers again
  const auto stopped_at = std::chrono::steady_clock::now();
  int status = 0;
  const bool ended = wait_bounded(mpirun, std::chrono::seconds(60), status);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count();
  if (victim > 0 && kill(victim, 0) == 0) kill(victim, SIGKILL);  // never leave it behind
  INFO("mpirun stderr: " << read_bytes(err));
  REQUIRE(started);
  REQUIRE(victim > 0);
  REQUIRE(ended);
  CHECK(took < 30);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) != 0));
  // rank 0 names the wait that timed out (the gradient, loss or stop-signal all-reduce)
  CHECK_THAT(read_bytes(err), Contains("rank 0 waited 2 s in") && Contains("for the other ranks (one died or hangs)"));
}
