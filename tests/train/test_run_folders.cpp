// Fault injection, run folders (train/io/run_dir.h): a run is never lost by starting
// another in its folder. A fresh run into a folder holding another run's files is
// refused, whatever the program; --overwrite replaces the run, and afterwards no file
// of the old run is left (a note of the user's stays); a run refused after its flags
// were read (a changed recipe, missing data) leaves the folder byte for byte as it was;
// fold_ln refuses an --out holding a run. The grid keeps finished cells, resumes a cell
// after its checkpoint and starts again one stopped before its first.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "tests/fake_fashion_mnist.h"
#include "tests/train/run_fixtures.h"
#include "train/io/safetensors.h"
#include "train/loop/run_files.h"
#include "train/safety/stop_signals.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

// A GPT run of 4 steps with a checkpoint every step, 3 kept: every kind of run file.
std::string gpt_run(const FakeGptRun& f, const std::string& name) {
  const std::string dir = f.tmp.sub(name);
  require_ok(run_program(kTrainGpt, f.tiny + " --checkpoint-every 1 --keep-checkpoints 3 --measure-at 4 --out " + dir,
                         f.tmp));
  REQUIRE(fs::exists(dir + "/measurements.json"));
  REQUIRE(fs::exists(dir + "/checkpoint-step00000003.safetensors"));
  REQUIRE(fs::exists(dir + "/sample.txt"));
  REQUIRE(fs::exists(dir + "/act_stats.csv"));
  return dir;
}

}  // namespace

TEST_CASE("run folders: a fresh run into another run's folder is refused and changes nothing", "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  REQUIRE(fs::exists(kTrainVit));
  FakeGptRun f;
  const std::string run = gpt_run(f, "gpt");
  expect_refused(kTrainGpt, f.tiny + " --out " + run, run, {"--out", "holds another run", "--overwrite"}, f.tmp);
  // before: train_vit deleted the GPT's checkpoint-step* files and left a mix
  FakeVitRun v;
  expect_refused(kTrainVit, v.tiny + " --steps 2 --out " + run, run, {"holds another run"}, f.tmp);
  // a folder holding only a killed write's leftover is a run's folder too
  const std::string left = f.tmp.sub("leftover");
  fs::create_directories(left);
  write_bytes(left + "/config.json.tmp", "{");
  expect_refused(kTrainGpt, f.tiny + " --out " + left, left, {"config.json.tmp"}, f.tmp);
  // the two ways on need their flags alone
  expect_refused(kTrainGpt, f.tiny + " --resume --overwrite --out " + run, run, {"--resume", "--overwrite"}, f.tmp);
  expect_refused(kTrainGpt, f.tiny + " --resume --init-from " + run + "/checkpoint.safetensors --out " + run, run,
                 {"--init-from", "--resume"}, f.tmp);
  // a folder with files of no run (a user's notes) takes a run
  const std::string notes = f.tmp.sub("notes");
  fs::create_directories(notes);
  write_bytes(notes + "/notes.txt", "mine");
  require_ok(run_program(kTrainGpt, f.tiny + " --out " + notes, f.tmp));
  CHECK(read_bytes(notes + "/notes.txt") == "mine");
}

TEST_CASE("run folders: a run refused after its flags were read leaves the folder byte for byte", "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  FakeGptRun f;
  const std::string run = f.tmp.sub("run");
  require_ok(run_program(kTrainGpt, f.tiny + " --stop-after 2 --out " + run, f.tmp));
  // config.json and log.csv used to be rewritten before such a failure
  expect_refused(kTrainGpt, f.tiny + " --resume --batch 4 --out " + run, run, {"another recipe"}, f.tmp);
  expect_refused(kTrainGpt, f.tiny + " --resume --data " + f.tmp.sub("nothing") + " --out " + run, run,
                 {"nothing"}, f.tmp);
  expect_refused(kTrainGpt, f.tiny + " --overwrite --data " + f.tmp.sub("nothing") + " --out " + run, run,
                 {"nothing"}, f.tmp);
  expect_refused(kTrainGpt, f.tiny + " --overwrite --init-from " + f.tmp.sub("none.safetensors") + " --out " + run,
                 run, {"--init-from " + f.tmp.sub("none.safetensors") + ": no such file"}, f.tmp);
}

TEST_CASE("run folders: --overwrite replaces the run, leaving no file of the old one", "[fault][cli]") {
  REQUIRE(fs::exists(kTrainVit));
  FakeGptRun f;
  const std::string run = gpt_run(f, "gpt");
  write_bytes(run + "/notes.txt", "mine");
  write_bytes(run + "/checkpoint.safetensors.tmp", "torn");
  FakeVitRun v;
  require_ok(run_program(kTrainVit, v.tiny + " --steps 2 --overwrite --out " + run, f.tmp));
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(run)) names.insert(e.path().filename().string());
  CHECK(names == std::set<std::string>{"act_stats.csv", "checkpoint.safetensors", "config.json", "confusion.csv",
                                       "log.csv", "notes.txt", "result.json"});
  CHECK(read_bytes(run + "/notes.txt") == "mine");
  CHECK_THAT(nl::load_safetensors(run + "/checkpoint.safetensors").metadata.at("model"), Contains("\"vit\""));
  CHECK_THAT(read_bytes(run + "/config.json"), Contains("\"program\": \"train_vit\""));
}

TEST_CASE("run folders: fold_ln refuses an --out that holds a run", "[fault][cli]") {
  REQUIRE(fs::exists(kFoldLn));
  FakeGptRun f;
  const std::string ln = f.tmp.sub("ln");
  require_ok(run_program(kTrainGpt, f.tiny + " --norm ln --out " + ln, f.tmp));
  const std::string other = gpt_run(f, "other");
  // before: it replaced that run's checkpoint
  expect_refused(kFoldLn, "--threads 1 --data " + f.data + " --in " + ln + " --out " + other, other,
                 {"--out", "holds another run"}, f.tmp);
  expect_refused(kFoldLn, "--threads 1 --data " + f.data + " --in " + ln + " --out " + ln, ln,
                 {"holds another run"}, f.tmp);
  const std::string folded = f.tmp.sub("folded");
  require_ok(run_program(kFoldLn, "--threads 1 --data " + f.data + " --in " + ln + " --out " + folded, f.tmp));
  CHECK(fs::exists(folded + "/fold_report.txt"));
  // and once more into its own output: that is a run now
  expect_refused(kFoldLn, "--threads 1 --data " + f.data + " --in " + ln + " --out " + folded, folded,
                 {"holds another run"}, f.tmp);
}

TEST_CASE("run folders: the grid keeps finished cells, resumes unfinished ones, restarts unstarted ones",
          "[fault][cli]") {
  REQUIRE(fs::exists(kCompareNorms));
  FakeGptRun f;
  const std::string study = f.tmp.sub("study");
  const std::string flags = f.recipe + " --runs ln,rms --jobs 1 --out " + study;
  require_ok(run_limited(kCompareNorms, flags, f.tmp));
  const std::string ln = study + "/ln", rms = study + "/rms";
  const auto ln_before = snapshot(ln), rms_before = snapshot(rms);

  // both finished: kept as they are
  require_ok(run_limited(kCompareNorms, flags, f.tmp));
  CHECK(snapshot(ln) == ln_before);
  CHECK(snapshot(rms) == rms_before);

  // ln stopped after a checkpoint (its end not written): resumed; rms stopped before
  // its first checkpoint (config.json and a log only): started again
  fs::remove(ln + "/result.json");
  fs::remove(ln + "/sample.txt");
  for (const auto& e : fs::directory_iterator(rms))
    if (e.path().filename() != "config.json" && e.path().filename() != "log.csv") fs::remove(e.path());
  RunResult r = run_limited(kCompareNorms, flags, f.tmp);
  require_ok(r);
  CHECK(fs::exists(ln + "/result.json"));
  CHECK(fs::exists(rms + "/result.json"));
  // the same runs: deterministic, so the same files (the speeds aside)
  CHECK(read_bytes(ln + "/sample.txt") == ln_before.at("sample.txt"));
  CHECK(read_bytes(rms + "/checkpoint.safetensors") == rms_before.at("checkpoint.safetensors"));

  // --reuse on a folder without results is refused, training nothing
  const std::string empty = f.tmp.sub("empty");
  fs::create_directories(empty);
  expect_refused(kCompareNorms, f.recipe + " --reuse --out " + empty, empty, {"--reuse", "results.json"}, f.tmp);
}

namespace {

// Waits up to `seconds` for the spawned child to end: its status, or -1 when it still runs.
int wait_child_for(pid_t pid, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

}  // namespace

TEST_CASE("run folders: one writer at a time; a second, fresh, --overwrite or --resume, is refused naming the pid",
          "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  FakeGptRun f;
  const std::string run = f.tmp.sub("run");
  const std::string long_run = f.tiny + " --steps 1000000 --checkpoint-every 5";
  const pid_t first =
      spawn_program(kTrainGpt, split_args(long_run + " --out " + run), f.tmp.sub("o1"), f.tmp.sub("e1"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(run + "/checkpoint.safetensors") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(fs::exists(run + "/checkpoint.safetensors"));
  // before: --overwrite replaced its files under it, --resume trained beside it
  FakeVitRun v;
  const std::vector<std::string> seconds = {kTrainGpt + " " + long_run + " --overwrite --seed 7",
                                           kTrainGpt + " " + long_run + " --resume",
                                           kTrainVit + " " + v.tiny + " --overwrite"};
  for (const std::string& second : seconds) {
    const RunResult r = run_limited(second, "--out " + run, f.tmp);
    INFO(second << "\nstderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK_THAT(r.err, Contains("--out") && Contains("another run is writing") &&
                          Contains("pid " + std::to_string(first)));
  }
  kill(first, SIGTERM);
  const int status = wait_child(first);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM));
  CHECK_FALSE(fs::exists(run + "/run.lock"));  // let go with the run
  require_ok(run_program(kTrainGpt, long_run + " --resume --stop-after 12 --out " + run, f.tmp));

  // two fresh runs started together into one empty folder: one trains, the other is refused
  const std::string both = f.tmp.sub("both");
  fs::create_directories(both);
  const pid_t a = spawn_program(kTrainGpt, split_args(long_run + " --out " + both), f.tmp.sub("oa"), f.tmp.sub("ea"));
  const pid_t b = spawn_program(kTrainGpt, split_args(long_run + " --out " + both), f.tmp.sub("ob"), f.tmp.sub("eb"));
  int sa = -1, sb = -1;
  for (int i = 0; i < 600 && sa == -1 && sb == -1; ++i) {
    sa = wait_child_for(a, 0.05);
    sb = wait_child_for(b, 0.05);
  }
  const bool a_refused = sa != -1;
  if (sa == -1) kill(a, SIGTERM), sa = wait_child(a);
  if (sb == -1) kill(b, SIGTERM), sb = wait_child(b);
  const int refused = a_refused ? sa : sb, trained = a_refused ? sb : sa;
  const std::string err = read_bytes(f.tmp.sub(a_refused ? "ea" : "eb"));
  INFO("stderr of the refused one: " << err);
  CHECK((WIFEXITED(refused) && WEXITSTATUS(refused) == 2));
  CHECK_THAT(err, Contains("another run is writing") || Contains("holds another run"));
  CHECK((WIFEXITED(trained) && WEXITSTATUS(trained) == 128 + SIGTERM));

  // a lock file a killed run left behind is taken over; a fresh run refused after the
  // lock (missing --init-from) leaves no folder it made
  const std::string stale = f.tmp.sub("stale");
  fs::create_directories(stale);
  write_bytes(stale + "/run.lock", "999999\n");
  require_ok(run_program(kTrainGpt, f.tiny + " --out " + stale, f.tmp));
  CHECK_FALSE(fs::exists(stale + "/run.lock"));
  const std::string made = f.tmp.sub("made");
  const RunResult r = run_program(
      kTrainGpt, f.tiny + " --init-from " + f.tmp.sub("none.safetensors") + " --out " + made + "/a/b", f.tmp);
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(made));
}

TEST_CASE("run folders: --out is refused for the root, the home folder and a name with a control character",
          "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  FakeGptRun f;
  // before: accepted (as root the run wrote its files into /)
  for (const std::string root : {"/", "//", "/tmp/.."}) {
    const RunResult r = run_limited(kTrainGpt, f.tiny + " --out " + root, f.tmp);
    INFO(root << ": " << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("--out") && Contains("filesystem's root"));
  }
  const std::string home = f.tmp.sub("home");
  fs::create_directories(home);
  for (const std::string& out : {home, home + "/", home + "/../home"})
    expect_refused("env HOME=" + home + " " + kTrainGpt, f.tiny + " --out " + out, home, {"--out", "the home folder"},
                   f.tmp);
  // a newline or another control character in the name (no shell: the byte reaches the program)
  for (const std::string& name : {std::string("a\nb"), std::string("tab\there"), std::string("esc\x1b")}) {
    const std::string out = f.tmp.sub(name);
    std::vector<std::string> args = split_args(f.tiny);
    args.insert(args.end(), {"--out", out});
    const pid_t pid = spawn_program(kTrainGpt, args, f.tmp.sub("o.txt"), f.tmp.sub("e.txt"));
    const int status = wait_child(pid);
    const std::string err = read_bytes(f.tmp.sub("e.txt"));
    INFO(err);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 2));
    CHECK(count_lines(err) == 1);
    CHECK_THAT(err, Contains("--out holds a control character"));
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("run folders: a dangling link as --out is named as such", "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  FakeGptRun f;
  const std::string link = f.tmp.sub("link");
  fs::create_symlink(f.tmp.sub("gone"), link);
  // before: "File exists", from making the folder
  const RunResult r = run_limited(kTrainGpt, f.tiny + " --out " + link, f.tmp);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(count_lines(r.err) == 1);
  CHECK_THAT(r.err, Contains("--out " + link + " is a link to " + f.tmp.sub("gone") + ", which does not exist"));
  CHECK_FALSE(fs::exists(f.tmp.sub("gone")));
}

TEST_CASE("run folders: a signal while the run is set up removes the lock and the folders the run made",
          "[run-lock][cli]") {
  // the window between taking the lock and the first training step, made deterministic:
  // a child process takes the folder's lock as train() does and is sent SIGTERM at once.
  // Before, the handler's immediate exit left OUT/run.lock in a folder the run had made.
  TempDir tmp;
  const std::string out = tmp.sub("new/run");
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    nl::install_stop_signals("child");
    {
      nl::RunFiles files(out, true, false, false);
      if (!fs::exists(out + "/run.lock")) _exit(3);
      raise(SIGTERM);
    }
    _exit(4);  // not reached: the handler exits with 128 + SIGTERM
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(fs::exists(tmp.sub("new")));  // made for the run too, so removed
  // a folder that was there keeps itself; only the lock goes
  const std::string kept = tmp.sub("kept");
  fs::create_directories(kept);
  const pid_t again = fork();
  REQUIRE(again >= 0);
  if (again == 0) {
    nl::install_stop_signals("child");
    nl::RunFiles files(kept, true, false, false);
    raise(SIGTERM);
    _exit(4);
  }
  REQUIRE(waitpid(again, &status, 0) == again);
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
  CHECK(fs::exists(kept));
  CHECK_FALSE(fs::exists(kept + "/run.lock"));
}
