// compare_vit: the runner behind `make demo-vit`. Trains the same ViT on Fashion-MNIST
// with each norm (same data, seed, recipe and budget), each run an ordinary
//   train_vit --norm NORM ... --out OUT/NORM --quiet
// started from this program's folder, --jobs of them at a time (default: all at once),
// and then prints one table and writes OUT/summary.csv and OUT/val_acc.csv (step, one
// column per norm). A norm whose accuracy stays near chance or whose loss becomes NaN
// is shown as such, never dropped.
//
// Why single-threaded runs side by side: the demo ViT's matrices are small, so on the
// 2-core machine one thread already runs its sgemm near one core's peak and a second
// thread adds only ~10 % (measured: 3470 vs 3800 img/s at width 64); two runs side by
// side do ~1.8x the work instead. A two-thread run also collapses (5x slower, measured)
// as soon as another program takes a core, because its OpenMP threads spin at every
// barrier; one-thread runs just share. With all five runs started at once both cores
// stay busy to the end. Wall-clock speeds of time-shared runs mean little, so the
// table gives images per second of each run's own CPU time: its speed on one core.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tensor/threads.h"
#include "train/flags/args.h"
#include "studies/report/study.h"
#include "train/vit/vit_run.h"

extern char** environ;

using namespace nl;
namespace fs = std::filesystem;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The number after "key": in a flat JSON object (result.json), NaN when absent.
double json_number(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\": ";
  auto at = json.find(needle);
  if (at == std::string::npos) return NAN;
  return std::strtod(json.c_str() + at + needle.size(), nullptr);
}

// The numbers of "key": [a, b, ...] in result.json.
std::vector<double> json_array(const std::string& json, const std::string& key) {
  std::vector<double> out;
  const std::string needle = "\"" + key + "\": [";
  auto at = json.find(needle);
  if (at == std::string::npos) return out;
  auto end = json.find(']', at);
  for (const auto& part : split_list(json.substr(at + needle.size(), end - at - needle.size())))
    out.push_back(std::strtod(part.c_str(), nullptr));
  return out;
}

std::string sibling_program(const std::string& name) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  NL_CHECK(!ec, "cannot find this program's folder (/proc/self/exe): ", ec.message());
  return (self.parent_path() / name).string();
}

pid_t spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // the child's progress goes nowhere (it runs --quiet; its result lands in result.json),
  // its errors reach our stderr
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  NL_CHECK(rc == 0, "cannot start ", argv[0], ": ", std::strerror(rc));
  return pid;
}

// Steps a run has logged so far: the lines of its log.csv after the header.
int64_t steps_logged(const std::string& log_path) {
  std::ifstream in(log_path);
  int64_t lines = 0;
  std::string line;
  while (std::getline(in, line)) ++lines;
  return std::max<int64_t>(lines - 1, 0);
}

// One line: each running norm's step, and an ETA from the fraction of all steps done.
void report_progress(const std::vector<std::string>& norms, const std::string& out,
                     const std::map<pid_t, std::string>& running, const std::map<std::string, int>& finished,
                     int64_t total_steps, double elapsed, bool tty) {
  std::string line = "  progress:";
  double done = 0;
  for (const auto& n : norms) {
    if (finished.count(n)) {
      done += 1;
      continue;
    }
    bool is_running = false;
    for (const auto& [pid, name] : running) is_running |= name == n;
    if (!is_running) continue;
    const int64_t s = std::min(steps_logged(out + "/" + n + "/log.csv"), total_steps);
    done += (double)s / (double)total_steps;
    line += " " + n + " " + std::to_string(s);
  }
  const double frac = done / (double)norms.size();
  char tail[96];
  const int eta = frac > 0 ? (int)std::lround(elapsed * (1 - frac) / frac) : -1;
  if (eta >= 0)
    std::snprintf(tail, sizeof tail, " of %lld steps, ETA %d:%02d", (long long)total_steps, eta / 60, eta % 60);
  else
    std::snprintf(tail, sizeof tail, " of %lld steps", (long long)total_steps);
  std::printf(tty ? "\r%s%s\033[K" : "%s%s\n", line.c_str(), tail);
  std::fflush(stdout);
}

struct Row {
  double test_acc = NAN, test_loss = NAN, val_acc = NAN, train_loss = NAN, img_s = NAN, img_cpu_s = NAN;
  double seconds = NAN, cpu_seconds = NAN, rms_ratio = NAN;
  bool diverged = false, failed = false;
};

}  // namespace

int main(int argc, char** argv) {
  prefer_spinning_threads(argv);
  Args args("compare_vit", "Train the demo ViT on Fashion-MNIST once per norm with one recipe and compare them.");
  args.add("--norms", "ln,rms,cbwc,dyt,bhyt", "comma-separated norms to compare");
  args.add("--epochs", "12", "training epochs per norm");
  args.add("--steps", "0", "exactly this many steps per norm instead of --epochs (0: use --epochs)");
  args.add("--layers", "4", "transformer blocks");
  args.add("--dim", "48", "model width");
  args.add("--heads", "4", "attention heads");
  args.add("--patch", "7", "patch size in pixels");
  args.add("--batch", "128", "images per step");
  args.add("--lr", "3e-3", "peak learning rate");
  args.add("--min-lr", "1e-5", "learning rate at the end of the cosine");
  args.add("--warmup", "100", "linear warmup steps");
  args.add("--wd", "0.1", "AdamW weight decay");
  args.add("--crop-pad", "0", "augmentation: random crop with this much zero padding (0: off)");
  args.add_switch("--flip", "augmentation: random horizontal flips");
  args.add("--val-size", "5000", "training images held out for validation");
  args.add("--eval-every", "500", "validate every N steps");
  args.add("--seed", "1337", "one seed for every run");
  args.add("--jobs", "0", "runs at a time (0: all at once)");
  args.add("--threads", "1", "CPU threads per run");
  args.add("--data", kFashionMnistDir, "directory of the gzipped IDX files");
  args.add("--out", "runs/demo-vit", "output directory");
  try {
    if (!args.parse(argc, argv)) return 0;
    const std::vector<std::string> norms = split_list(args.str("--norms"));
    NL_CHECK(!norms.empty(), "--norms is empty");
    int64_t jobs = args.integer("--jobs");
    NL_CHECK(jobs >= 0, "--jobs must be >= 0");
    if (jobs == 0) jobs = (int64_t)norms.size();
    // the flags every run gets, checked here once (each name, the shapes, the data)
    // before any run starts
    const std::vector<std::string> passed = {"--epochs", "--steps", "--layers", "--dim", "--heads", "--patch",
                                             "--batch", "--lr", "--min-lr", "--warmup", "--wd", "--crop-pad",
                                             "--val-size", "--eval-every", "--seed", "--threads", "--data"};
    ViTRunConfig check;
    check.epochs = args.real("--epochs");
    check.steps = args.integer("--steps");
    check.model.layers = args.integer("--layers");
    check.model.dim = args.integer("--dim");
    check.model.heads = args.integer("--heads");
    check.model.patch = args.integer("--patch");
    check.batch = args.integer("--batch");
    check.lr = (float)args.real("--lr");
    check.min_lr = (float)args.real("--min-lr");
    check.warmup = args.integer("--warmup");
    check.wd = (float)args.real("--wd");
    check.augment.crop_pad = (int)args.integer("--crop-pad");
    check.val_size = args.integer("--val-size");
    check.eval_every = args.integer("--eval-every");
    check.threads = (int)args.integer("--threads");
    for (const auto& n : norms) {
      check.model.norm.name = n;
      check.validate();
    }
    // missing or broken data fails here, before any run
    const int64_t train_images = load_fashion_mnist(args.str("--data"), check.val_size).train.size();
    const int64_t total_steps =
        check.steps > 0 ? check.steps : (int64_t)std::ceil(check.epochs * (double)train_images / (double)check.batch);
    const std::string program = sibling_program("train_vit");
    NL_CHECK(fs::exists(program), program, " is not built (make ", program, ")");

    const std::string out = args.str("--out");
    fs::create_directories(out);
    std::vector<std::string> common = {program};
    for (const auto& flag : passed) {
      common.push_back(flag);
      common.push_back(args.str(flag));
    }
    if (args.on("--flip")) common.push_back("--flip");
    common.push_back("--quiet");

    std::printf("training %zu norms, %lld at a time, %lld thread(s) each\n", norms.size(), (long long)jobs,
                (long long)check.threads);
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    std::map<pid_t, std::string> running;
    std::map<std::string, int> exit_codes;
    size_t next = 0;
    const bool tty = isatty(fileno(stdout));
    double next_report = tty ? 2.0 : 60.0;
    while (next < norms.size() || !running.empty()) {
      while (next < norms.size() && (int64_t)running.size() < jobs) {
        const std::string& n = norms[next++];
        std::vector<std::string> argv_run = common;
        for (const std::string& a : {std::string("--norm"), n, std::string("--out"), out + "/" + n})
          argv_run.push_back(a);
        running[spawn(argv_run)] = n;
      }
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      NL_CHECK(pid >= 0, "waitpid failed: ", std::strerror(errno));
      if (pid == 0) {  // all still running: report progress now and then
        usleep(200000);
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (t >= next_report) {
          next_report = t + (tty ? 2.0 : 60.0);
          report_progress(norms, out, running, exit_codes, total_steps, t, tty);
        }
        continue;
      }
      if (tty) std::printf("\r\033[K");
      auto it = running.find(pid);
      if (it == running.end()) continue;
      const std::string n = it->second;
      running.erase(it);
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      exit_codes[n] = code;
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const std::string res = read_text(out + "/" + n + "/result.json");
      if (code <= 1 && !res.empty())
        std::printf("  %-10s done at %4.0f s: test acc %.2f %%\n", n.c_str(), t, 100.0 * json_number(res, "test_accuracy"));
      else
        std::printf("  %-10s FAILED at %4.0f s (exit code %d)\n", n.c_str(), t, code);
      std::fflush(stdout);
    }

    std::map<std::string, Row> rows;
    for (const auto& n : norms) {
      Row& r = rows[n];
      const std::string res = read_text(out + "/" + n + "/result.json");
      r.failed = exit_codes[n] > 1 || res.empty();
      if (r.failed) continue;
      r.test_acc = json_number(res, "test_accuracy");
      r.test_loss = json_number(res, "test_loss");
      r.val_acc = json_number(res, "val_accuracy");
      r.train_loss = json_number(res, "final_train_loss");
      r.img_s = json_number(res, "images_per_s");
      r.img_cpu_s = json_number(res, "images_per_cpu_s");
      r.seconds = json_number(res, "seconds");
      r.cpu_seconds = json_number(res, "cpu_seconds");
      r.diverged = exit_codes[n] == 1 || res.find("\"diverged\": true") != std::string::npos;
      auto rms = json_array(res, "residual_rms");
      if (rms.size() >= 2) r.rms_ratio = rms.back() / rms.front();
    }

    std::ofstream summary(out + "/summary.csv");
    summary << "norm,test_acc,test_loss,val_acc,train_loss,img_per_cpu_s,img_per_s,cpu_seconds,seconds,"
               "rms_last_over_first,status\n";
    std::printf("\n%-10s %9s %10s %8s %10s %7s %14s  %s\n", "norm", "test acc", "test loss", "val acc", "img/s/core",
                "CPU s", "resid RMS L/1", "status");
    for (const auto& n : norms) {
      const Row& r = rows[n];
      // 10 classes: a model near 10 % (or anything under 50 %) has learnt next to nothing
      const char* status = r.failed ? "FAILED (see stderr)"
                           : r.diverged ? "DIVERGED (NaN/inf)"
                           : r.test_acc < 0.5 ? "near chance"
                                              : "ok";
      std::printf("%-10s %8.2f%% %10.4f %7.2f%% %10.0f %7.0f %14.2f  %s\n", n.c_str(), 100.0 * r.test_acc,
                  r.test_loss, 100.0 * r.val_acc, r.img_cpu_s, r.cpu_seconds, r.rms_ratio, status);
      summary << n << "," << r.test_acc << "," << r.test_loss << "," << r.val_acc << "," << r.train_loss << ","
              << std::llround(std::isnan(r.img_cpu_s) ? 0 : r.img_cpu_s) << ","
              << std::llround(std::isnan(r.img_s) ? 0 : r.img_s) << "," << r.cpu_seconds << "," << r.seconds << ","
              << r.rms_ratio << "," << status << "\n";
    }

    std::map<int64_t, std::map<std::string, std::string>> curves;
    for (const auto& n : norms)
      for (const auto& [step, v] : val_curve(out + "/" + n + "/log.csv", 4)) curves[step][n] = v;
    std::ofstream va(out + "/val_acc.csv");
    va << "step";
    for (const auto& n : norms) va << "," << n;
    va << "\n";
    for (const auto& [step, row] : curves) {
      va << step;
      for (const auto& n : norms) va << "," << (row.count(n) ? row.at(n) : "");
      va << "\n";
    }
    bool any_failed = false;
    for (const auto& [n, r] : rows) any_failed |= r.failed;
    return any_failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compare_vit: error: %s\n", e.what());
    return 2;
  }
}
