// Helpers shared by the tests that write files or run the command-line programs:
// a scratch directory, whole-file reads and writes, a snapshot of a directory (to show
// that a failed run changed nothing), and running a program with its output captured.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

namespace nl::test {

// A fresh directory under the system's temp dir, removed with everything in it.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("normlab_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string sub(const std::string& name) const { return (path / name).string(); }
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Every file in dir (not recursive) with its bytes.
inline std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    files[e.path().filename().string()] = read_bytes(e.path().string());
  return files;
}

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

struct RunResult {
  int code = -1;
  std::string out, err;
};

// Runs `program args` (no shell metacharacters in args) with stdout and stderr
// captured to files in `scratch`.
inline RunResult run_program(const std::string& program, const std::string& args, const TempDir& scratch) {
  const std::string out = scratch.sub("stdout.txt"), err = scratch.sub("stderr.txt");
  const std::string cmd = program + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_bytes(out);
  r.err = read_bytes(err);
  return r;
}

// The largest |a[step] - b[step]| over the steps of b (every one must be in a), and
// whether all were found: for comparing two runs' per-step losses.
inline std::pair<double, bool> largest_difference(const std::map<int, double>& a, const std::map<int, double>& b) {
  double worst = 0;
  for (const auto& [step, value] : b) {
    auto it = a.find(step);
    if (it == a.end()) return {worst, false};
    worst = std::max(worst, std::fabs(value - it->second));
  }
  return {worst, true};
}

}  // namespace nl::test
