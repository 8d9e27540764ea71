// What the tests that run the programs share (test_fault_*.cpp, the others that run
// them on bad input, and more): a small fortunes-like text of their own,
// so that they need no installed data; the flags of a tiny train_gpt run on it; a
// snapshot of a folder that never opens a FIFO; running a program under a time limit,
// so that a hang fails the test instead of stalling it; the check of a run that must
// succeed and of a refusal; re-signing an edited checkpoint, and the step one records.
#pragma once
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/test_files.h"
#include "train/io/checkpoint.h"
#include "train/io/safetensors.h"

namespace nl::test {

// About `bytes` of text in dir/fortunes (a line of words and a number, repeated).
inline void write_fake_text(const std::string& dir, size_t bytes) {
  std::filesystem::create_directories(dir);
  std::string text;
  for (int i = 0; text.size() < bytes; ++i)
    text += "A fortune " + std::to_string(i * 7919 % 1000) + ": the early bird gets the worm, the second mouse "
            "gets the cheese.\n%\n";
  write_bytes(dir + "/fortunes", text);
}

// A scratch folder holding a 20 KB text in text/ and the flags of a tiny GPT run on it
// (every run a few milliseconds): `recipe` the flags every GPT program takes (the
// studies too), `tiny` train_gpt's whole command line.
struct FakeGptRun {
  TempDir tmp;
  std::string data, recipe, tiny;
  FakeGptRun() : data(tmp.sub("text")) {
    write_fake_text(data, 20000);
    recipe = "--data " + data +
             " --layers 1 --dim 16 --heads 2 --seq 8 --batch 2 --steps 4 --eval-every 2 --eval-batches 1 --threads 1";
    tiny = recipe + " --quiet --act-stats-every 2";
  }
  // A finished (or --stop-after) tiny run of train_gpt with `flags` in tmp/name: its folder.
  std::string train(const std::string& name, const std::string& flags) const {
    const std::string dir = tmp.sub(name);
    const RunResult r = run_program(build_dir() + "/train_gpt", tiny + " " + flags + " --out " + dir, tmp);
    INFO("train_gpt " << flags << "\nstderr: " << r.err);
    REQUIRE(r.code == 0);
    return dir;
  }
};

// Every entry of dir with the bytes of each regular file, and "(not a regular file)"
// for the rest: unlike snapshot(), safe for a folder holding a FIFO.
inline std::map<std::string, std::string> safe_snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::error_code ec;
    files[e.path().filename().string()] =
        std::filesystem::is_regular_file(e.symlink_status(ec)) ? read_bytes(e.path().string()) : "(not a regular file)";
  }
  return files;
}

// run_program under `timeout`: exit code 124 (or 137) means it hung for `seconds`.
inline RunResult run_limited(const std::string& program, const std::string& args, const TempDir& scratch,
                             int seconds = 20) {
  return run_program("timeout -k 5 " + std::to_string(seconds) + " " + program, args, scratch);
}

// A run that must have succeeded (exit 0); its stderr shown when it did not.
inline void require_ok(const RunResult& r) {
  INFO("stderr: " << r.err);
  REQUIRE(r.code == 0);
}

// A refused invocation: exit 2 within the time limit, one line (ending in a newline)
// holding every needle, `dir` as it was (byte for byte; safe when it holds a FIFO).
inline void expect_refused(const std::string& program, const std::string& args, const std::string& dir,
                           const std::vector<std::string>& needles, const TempDir& scratch) {
  const auto before = safe_snapshot(dir);
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run_limited(program, args, scratch);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(std::filesystem::path(program).filename().string()
       << " " << args << "\nexit " << r.code << " after " << seconds << " s\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(count_lines(r.err) == 1);
  CHECK(!r.err.empty());
  if (!r.err.empty()) CHECK(r.err.back() == '\n');
  for (const auto& n : needles) CHECK_THAT(r.err, Catch::Contains(n));
  CHECK(safe_snapshot(dir) == before);
}

// expect_refused for `program --out out_dir ARGS`: out_dir (which may hold files) is
// left as it was.
inline void expect_refused_into(const std::string& program, const std::string& args, const std::string& out_dir,
                                const std::vector<std::string>& needles, const TempDir& scratch) {
  expect_refused(program, "--out " + out_dir + " " + args, out_dir, needles, scratch);
}

// Edits a checkpoint's tensors or metadata, then makes its checksums match again (as a
// tool that rewrites checkpoints would): what is refused then is refused for its values.
inline void resign(const std::string& path, const std::function<void(SafetensorsFile&)>& edit) {
  SafetensorsFile file = load_safetensors(path);
  edit(file);
  file.metadata.erase("tensor_crc32");
  file.metadata.erase("metadata_crc32");
  add_checksums(file.tensors, file.metadata);
  save_safetensors(path, file.tensors, file.metadata);
}

// The step a checkpoint file records in its metadata.
inline int64_t checkpoint_step(const std::string& path) {
  return std::stoll(load_safetensors(path).metadata.at("step"));
}

inline void make_fifo(const std::string& path) {
  std::filesystem::remove(path);
  REQUIRE(mkfifo(path.c_str(), 0644) == 0);
}

}  // namespace nl::test
