// Timing helpers shared by the benchmarks (bench_ops, bench_gpt, bench_fold): medians,
// interleaved timing of the two sides of a ratio, the share of the cores a process
// got, the load average, JSON records (nlohmann-json underneath) and the flags every
// benchmark takes. Nothing here passes or fails on time.
#pragma once
#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/error.h"
#include "tensor/threads.h"
#include <nlohmann/json.hpp>

#include "nn/gpt.h"  // GPTConfig
#include "nn/norms/registry.h"
#include "train/flags/families.h"  // add_norms_list_flag
#include "train/flags/flag_parser.h"
#include "train/loop/median.h"
#include "train/loop/thread_governor.h"  // run_queue_wait_seconds

namespace nl::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

inline double seconds_of(const std::function<void()>& f) {
  const auto t0 = Clock::now();
  f();
  return seconds_since(t0);
}


// The 1-minute load average: other processes on the cores distort every timing, so
// the benchmarks print it beside their results.
inline std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string one;
  return (f >> one) ? one : std::string("unknown");
}

// The OpenBLAS kernels the products ran on, for a benchmark's header: "OpenBLAS
// SkylakeX kernels" (and who chose them, tensor/threads.h): the same library runs 7x
// slower on its pre-AVX kernels, so every sgemm figure names them.
inline std::string blas_kernels() {
  const BlasCore core = blas_core();
  return "OpenBLAS " + core.name + " kernels" +
         (core.chosen_by_normlab ? " (set by normlab: OpenBLAS did not recognise this CPU)" : "");
}

// --threads 1,2: the thread counts a benchmark sweeps (each positive).
inline void add_thread_counts_flag(FlagParser& p, std::vector<int64_t>& counts) {
  p.integer_list("--threads", counts, 1, 1024, "CPU thread counts to run (OpenMP and OpenBLAS), comma separated",
                 FlagRole::Setting);
}

// The GPT of a benchmark configuration (a struct with vocab, layers, dim, heads and
// context: bench_gpt's BenchConfig, bench_gpu's GpuConfig) with norm `norm`, every other
// setting the default.
template <class Shape>
GPTConfig bench_gpt_config(const Shape& s, const std::string& norm) {
  GPTConfig mc;
  mc.vocab = s.vocab;
  mc.layers = s.layers;
  mc.dim = s.dim;
  mc.heads = s.heads;
  mc.context = s.context;
  mc.norm.name = norm;
  return mc;
}

// --configs: the benchmark configurations to run, each one of `known`.
inline void add_configs_flag(FlagParser& p, std::vector<std::string>& configs, const std::vector<std::string>& known,
                             const std::string& help) {
  p.list("--configs", configs, help);
  p.check([&configs, known] {
    for (const auto& c : configs)
      NL_CHECK(std::find(known.begin(), known.end(), c) != known.end(), "--configs: unknown configuration '", c, "'");
  });
}

// --steps: timed steps after the warm-up (0: each configuration's own number).
inline void add_timed_steps_flag(FlagParser& p, int64_t& steps, const std::string& help) {
  p.integer("--steps", steps, 0, 1000000, help);
}

// --quick: a smoke test of the benchmark, few repetitions.
inline void add_quick_flag(FlagParser& p, bool& quick) {
  p.toggle("--quick", quick, "few repetitions (a smoke test of the benchmark)");
}

// --json FILE: where a benchmark also writes its numbers (empty: nowhere).
inline void add_json_flag(FlagParser& p, std::string& path) {
  p.text("--json", path, "also write the results to this JSON file", FlagRole::Setting);
}

// Writes a benchmark's JSON document, failing with the file's name.
inline void write_json(const std::string& path, const nlohmann::ordered_json& doc) {
  std::ofstream js(path);
  js << doc.dump(2) << "\n";
  NL_CHECK(js.good(), "cannot write --json file ", path);
}

inline double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// The minor page faults of this process so far: the pages it took from the system (a
// step that keeps faulting frees memory back to it and asks again)
inline long minor_page_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// A per-process seconds counter's growth over a span, as a share of the span's wall
// seconds times threads.
class ShareOfSpan {
 public:
  ShareOfSpan(int threads, double (*counter)())
      : threads_(threads), counter_(counter), wall0_(Clock::now()), count0_(counter()) {}
  double get() const { return (counter_() - count0_) / (seconds_since(wall0_) * threads_); }

 private:
  int threads_;
  double (*counter_)();
  Clock::time_point wall0_;
  double count0_;
};

// Share of the cores this process got: CPU seconds used over wall seconds times
// threads. Idle threads spin only briefly (configure_runtime) and then sleep, so
// this share falls below 1.0 both when another process held a core and when the
// program had serial stretches; QueuedShare below tells the two apart.
struct CoreShare : ShareOfSpan {
  explicit CoreShare(int threads) : ShareOfSpan(threads, cpu_seconds) {}
};

// The share of the span this process's threads spent queued behind another process:
// run-queue wait over wall seconds times threads (0: the cores were ours).
struct QueuedShare : ShareOfSpan {
  explicit QueuedShare(int threads) : ShareOfSpan(threads, run_queue_wait_seconds) {}
};

// Times `fns` (each one call of a kernel) interleaved: every repetition runs each of
// them once, in an order that rotates, so drifting clocks and neighbours hit all alike.
// A sample repeats a call until it lasts about sample_s. With a budget (seconds; 0:
// none), slow groups run fewer repetitions, never fewer than 5.
struct Timings {
  std::vector<double> median_s;  // per function: median seconds per call
  std::vector<double> ratio;     // per function: median over repetitions of t[0] / t[i]
  int reps = 0;
};

inline Timings time_interleaved(const std::vector<std::function<void()>>& fns, int reps, double budget_s,
                                double sample_s = 4e-3) {
  const size_t n = fns.size();
  std::vector<int> inner(n);
  double per_rep = 0;
  for (size_t i = 0; i < n; ++i) {
    fns[i]();  // warm-up: caches, allocator, thread pool
    const double t = std::max(seconds_of(fns[i]), 1e-7);
    inner[i] = std::max(1, std::min(1000, (int)(sample_s / t)));
    per_rep += t * inner[i];
  }
  if (budget_s > 0) reps = std::max(std::min(reps, 5), std::min(reps, (int)(budget_s / per_rep)));
  std::vector<std::vector<double>> samples(n, std::vector<double>(reps));
  for (int r = 0; r < reps; ++r)
    for (size_t j = 0; j < n; ++j) {
      const size_t i = (j + (size_t)r) % n;
      samples[i][r] = seconds_of([&] {
                        for (int k = 0; k < inner[i]; ++k) fns[i]();
                      }) /
                      inner[i];
    }
  // A ratio is taken within each repetition, where both sides ran moments apart, and
  // then its median: load that comes and goes cancels better than in a ratio of medians.
  Timings out;
  out.reps = reps;
  for (size_t i = 0; i < n; ++i) {
    out.median_s.push_back(median(samples[i]));
    std::vector<double> q(reps);
    for (int r = 0; r < reps; ++r) q[r] = samples[0][r] / samples[i][r];
    out.ratio.push_back(median(q));
  }
  return out;
}

// A flat JSON record built field by field.
struct JsonRecord {
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
  JsonRecord& num(const std::string& k, double v) {
    fields[k] = v;
    return *this;
  }
  JsonRecord& str(const std::string& k, const std::string& v) {
    fields[k] = v;
    return *this;
  }
};

inline nlohmann::ordered_json json_list(const std::vector<JsonRecord>& rs) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const JsonRecord& r : rs) a.push_back(r.fields);
  return a;
}

}  // namespace nl::bench
