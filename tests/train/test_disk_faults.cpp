// Disk faults while train_gpt writes: a full disk (a 160 KiB tmpfs in a private mount
// namespace, and /dev/full), a file-size limit (prlimit --fsize: the write fails with
// EFBIG) and a read-only folder (the tmpfs remounted read-only). Each gives one error
// line naming the file and the reason, exit code 2, and leaves the previous checkpoint
// whole and unchanged; no temporary file is left behind.
//
// Root does not see permission bits, so a chmod'ed folder would not fail for it; the
// tmpfs cases use `unshare -rm` (a user and mount namespace: no privileges needed, the
// mount vanishes with the process), tagged [needs-unshare]: make test skips them, naming
// the reason, where the kernel does not allow that.
#include <catch2/catch.hpp>

#include "tests/needs.h"
#include "tests/test_files.h"

#include <filesystem>
#include <string>

#include "train/io/safetensors.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

const std::string kAbsoluteTrainGpt = fs::absolute(::nl::test::build_dir() + "/train_gpt").string();
// dim 16: a 92 KiB checkpoint
const std::string kDiskFaultRun =
    "--layers 1 --dim 16 --heads 2 --seq 8 --batch 2 --eval-every 5 --eval-batches 1 --threads 1 --quiet "
    "--act-stats-every 0 --steps 30 --checkpoint-every 5";

// A healthy run stopped at step 10 in dir; returns its checkpoint's bytes.
std::string healthy_run(const std::string& dir, const TempDir& tmp) {
  REQUIRE_RESOURCE(missing_fortunes());
  RunResult r = run_program(kAbsoluteTrainGpt, kDiskFaultRun + " --stop-after 10 --out " + dir, tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return read_bytes(dir + "/checkpoint.safetensors");
}

// The checkpoint of step 10 is there, whole and byte for byte the one before; no
// temporary file.
void check_checkpoint_intact(const std::string& dir, const std::string& before) {
  CHECK(read_bytes(dir + "/checkpoint.safetensors") == before);
  CHECK(nl::load_safetensors(dir + "/checkpoint.safetensors").metadata.at("step") == "10");
  CHECK_FALSE(fs::exists(dir + "/checkpoint.safetensors.tmp"));
}

void check_one_line_error(const RunResult& r, const std::vector<std::string>& needles) {
  INFO("exit " << r.code << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(count_lines(r.err) == 1);
  for (const auto& n : needles) CHECK_THAT(r.err, Contains(n));
}

// In a private mount namespace: a tmpfs of size_kib on `mnt` holding a copy of `from`
// (remounted read-only when asked), train_gpt run there with `args`, then the tmpfs's
// files copied to `back` for inspection. Returns the program's exit code and stderr.
RunResult run_on_tmpfs(const std::string& from, const std::string& mnt, const std::string& back, int size_kib,
                       bool read_only, const std::string& args, const TempDir& tmp) {
  fs::create_directories(mnt);
  fs::create_directories(back);
  const std::string err = tmp.sub("tmpfs_err.txt");
  const std::string script =
      "mount -t tmpfs -o size=" + std::to_string(size_kib) + "k normlab_test " + mnt + " && cp -a " + from + "/. " +
      mnt + "/" + (read_only ? " && mount -o remount,ro " + mnt : std::string()) + " && { " + kAbsoluteTrainGpt + " " +
      args + " --out " + mnt + " 2>" + err + "; rc=$?; cp -a " + mnt + "/. " + back + "/; exit $rc; }";
  RunResult r = run_program("unshare", "-rm sh -c '" + script + "'", tmp);
  r.err = read_bytes(err);
  return r;
}

}  // namespace

TEST_CASE("disk: a full tmpfs fails the checkpoint write with ENOSPC; the previous checkpoint stays",
          "[disk][needs-fortunes][needs-unshare]") {
  TempDir tmp;
  const std::string dir = tmp.sub("run");
  REQUIRE_RESOURCE(missing_unshare());
  const std::string before = healthy_run(dir, tmp);
  // 160 KiB holds the run's files and the 92 KiB checkpoint, not a second one beside it
  RunResult r = run_on_tmpfs(dir, tmp.sub("mnt"), tmp.sub("back"), 160, false, kDiskFaultRun + " --resume", tmp);
  check_one_line_error(r, {"checkpoint.safetensors.tmp", "No space left on device"});
  check_checkpoint_intact(tmp.sub("back"), before);
  // the log holds the steps up to the failed save; the kept checkpoint resumes elsewhere
  CHECK(read_csv_rows(tmp.sub("back") + "/log.csv").size() == 16);
  RunResult ok = run_program(kAbsoluteTrainGpt, kDiskFaultRun + " --resume --out " + tmp.sub("back"), tmp);
  INFO(ok.err);
  CHECK(ok.code == 0);
}

TEST_CASE("disk: a read-only folder fails the first write; the checkpoint stays",
          "[disk][needs-fortunes][needs-unshare]") {
  TempDir tmp;
  const std::string dir = tmp.sub("run");
  REQUIRE_RESOURCE(missing_unshare());
  const std::string before = healthy_run(dir, tmp);
  RunResult r = run_on_tmpfs(dir, tmp.sub("mnt"), tmp.sub("back"), 1024, true, kDiskFaultRun + " --resume", tmp);
  // found before the first write: the folder is not writable
  check_one_line_error(r, {"--out", "cannot write in", "Read-only file system"});
  check_checkpoint_intact(tmp.sub("back"), before);
  CHECK(read_bytes(tmp.sub("back") + "/log.csv") == read_bytes(dir + "/log.csv"));
}

TEST_CASE("disk: a file-size limit fails the checkpoint write (EFBIG); the previous checkpoint stays",
          "[disk][needs-fortunes]") {
  TempDir tmp;
  const std::string dir = tmp.sub("run");
  const std::string before = healthy_run(dir, tmp);
  // 60 000 bytes: the log fits, a 92 KiB checkpoint does not
  RunResult r = run_program("prlimit",
                            "--fsize=60000 " + kAbsoluteTrainGpt + " " + kDiskFaultRun + " --resume --out " + dir, tmp);
  check_one_line_error(r, {"checkpoint.safetensors.tmp", "File too large"});
  check_checkpoint_intact(dir, before);
}

TEST_CASE("disk: a log written to a full device (/dev/full) is a write error naming the log",
          "[disk][needs-fortunes]") {
  TempDir tmp;
  const std::string dir = tmp.sub("run");
  const std::string before = healthy_run(dir, tmp);
  // the log is rewritten through log.csv.tmp (then renamed), which now leads to the device
  fs::create_symlink("/dev/full", dir + "/log.csv.tmp");
  RunResult r = run_program(kAbsoluteTrainGpt, kDiskFaultRun + " --resume --out " + dir, tmp);
  check_one_line_error(r, {"log.csv", "No space left on device"});
  check_checkpoint_intact(dir, before);
}
