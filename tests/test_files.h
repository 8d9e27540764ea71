// Helpers shared by the tests that write files or run the command-line programs:
// a scratch directory, whole-file reads and writes, a snapshot of a directory (to show
// that a failed run changed nothing), and running a program with its output captured.
#pragma once
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace nl::test {

// The folder of the build this test binary belongs to (build/release, build/asan-mpi,
// ...): the folder the binary lives in, relative to the working directory when below it
// (`make test` runs from the repository's root). The tests that run the command-line
// programs take them from there. Read at run time, not compiled in, so that the test
// objects of a CUDA=1 or MPI=1 build are the plain build's (the Makefile shares them).
inline const std::string& build_dir() {
  static const std::string dir = [] {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path folder = fs::read_symlink("/proc/self/exe", ec).parent_path();
    if (ec || folder.empty()) return std::string("build/release");
    const fs::path relative = fs::relative(folder, fs::current_path(), ec);
    if (!ec && !relative.empty() && *relative.begin() != "..") return relative.string();
    return folder.string();
  }();
  return dir;
}

// The programs the tests run, in this build's folder: one home for their paths.
inline const std::string kTrainGpt = build_dir() + "/train_gpt";
inline const std::string kTrainVit = build_dir() + "/train_vit";
inline const std::string kFoldLn = build_dir() + "/fold_ln";
inline const std::string kCompareNorms = build_dir() + "/compare_norms";
inline const std::string kBhytGap = build_dir() + "/bhyt_gap";
inline const std::string kDepthStudy = build_dir() + "/depth_study";
inline const std::string kRegimeStudy = build_dir() + "/regime_study";

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

// The lines of a CSV file split at commas (an empty last field kept), header first.
inline std::vector<std::vector<std::string>> read_csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream ss(line);
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    rows.push_back(cells);
  }
  return rows;
}

// "--a 1 --b" -> {"--a", "1", "--b"}: flags for spawn_program, split on spaces.
inline std::vector<std::string> split_args(const std::string& text) {
  std::vector<std::string> args;
  std::istringstream in(text);
  for (std::string a; in >> a;) args.push_back(a);
  return args;
}

// Starts `program args` as a child process (no shell, so the pid is the program's own)
// with stdout and stderr going to the given files; returns the pid. For tests that
// signal or kill a run while it works.
inline pid_t spawn_program(const std::string& program, const std::vector<std::string>& args,
                           const std::string& out_path, const std::string& err_path) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// Waits for a spawned child; returns waitpid's status (WIFEXITED, WTERMSIG, ...).
inline int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace nl::test
