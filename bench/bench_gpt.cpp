// bench_gpt: time of one full GPT training step (forward, backward, gradient clipping,
// AdamW on the flat parameter buffer), as train/gpt_run.cpp runs it, for the `tiny` and
// `small` configurations of BENCHMARKS.md and each norm. Token ids are random (from
// nl::Generator), so the benchmark needs no data files. Per run it prints the median
// ms/step after one warm-up step, tokens/s, the achieved GFLOP/s by BENCHMARKS.md's
// formula, the allocations that reached the system after the first step (expected 0)
// and the peak memory in use. Nothing passes or fails on time.
// A second table times a few norms side by side with their steps interleaved (by default
// rms, bhyt and bhyt-exact), as ratios: training step and forward-only pass.
//   build/release/bench_gpt [--threads 2] [--configs tiny,small] [--norms ln,rms,cbwc,dyt,bhyt]
//                           [--steps N] [--compare rms,bhyt,bhyt-exact] [--json FILE]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "nn/gpt.h"
#include "tensor/allocator.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "train/args.h"
#include "train/optim.h"

using namespace nl;

namespace {

struct BenchConfig {
  std::string name;
  int64_t layers, dim, heads, context, batch, vocab;
  int64_t default_steps;  // timed steps after the warm-up
};

const std::vector<BenchConfig>& known_configs() {
  static const std::vector<BenchConfig> configs = {
      {"tiny", 4, 128, 4, 64, 16, 256, 20},
      {"small", 6, 384, 6, 256, 8, 256, 3},
  };
  return configs;
}

// FLOPs of one training step (BENCHMARKS.md): 6 N_mm B T for the weight matrices
// (forward 2, backward 4 per multiply-add), N_mm = 12 L C^2 + V C, plus 6 L C T B T for
// attention (QK^T and AV, forward and backward, the masked half counted too).
double step_flops(const BenchConfig& c) {
  const double L = (double)c.layers, C = (double)c.dim, T = (double)c.context, B = (double)c.batch;
  const double n_mm = 12.0 * L * C * C + (double)c.vocab * C;
  return 6.0 * n_mm * B * T + 6.0 * L * C * T * B * T;
}

struct Result {
  std::string config, norm;
  int threads = 0;
  int64_t steps = 0, params = 0;
  double ms_median = 0, ms_min = 0, tok_s = 0, gflops = 0;
  int64_t system_allocs_after_first = 0;
  double peak_mib = 0;
  float last_loss = 0;
  // CPU seconds over wall seconds times threads during the timed steps. Idle threads
  // spin, so an uncontended run is near 1; well below, another process held a core.
  double core_share = 0;
};

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One model with its optimizer and a batch source: a training step (forward, backward,
// clipping, AdamW) and a forward-only pass (no graph recorded), each timed alone.
class StepRunner {
 public:
  StepRunner(const BenchConfig& bc, const std::string& norm) : bc_(bc), model_(make_config(bc, norm), init_gen_) {
    flat_ = flatten_parameters(model_);
    optim_ = std::make_unique<AdamW>(flat_, AdamWConfig{0.9f, 0.99f, 1e-8f, 0.1f});
    x_ = Tensor::empty({bc.batch, bc.context}, DType::I32);
    y_ = Tensor::empty({bc.batch, bc.context}, DType::I32);
  }
  const GPT& model() const { return model_; }
  float last_loss() const { return last_loss_; }

  // seconds of one training step; the random batch is drawn outside the timed span
  double train_step() {
    next_batch();
    const auto t0 = std::chrono::steady_clock::now();
    flat_.grads.fill_(0.0f);
    Var loss = model_.loss(x_, y_);
    loss.backward();
    clip_grad_norm(flat_, 1.0f);
    optim_->step(1e-3f);
    last_loss_ = loss.item();
    return seconds_since(t0);
  }
  // seconds of one forward pass to the loss with no autograd recording (inference cost)
  double forward_only() {
    next_batch();
    const auto t0 = std::chrono::steady_clock::now();
    NoGradGuard no_grad;
    last_loss_ = model_.loss(x_, y_).item();
    return seconds_since(t0);
  }

 private:
  static GPTConfig make_config(const BenchConfig& bc, const std::string& norm) {
    GPTConfig mc;
    mc.vocab = bc.vocab;
    mc.layers = bc.layers;
    mc.dim = bc.dim;
    mc.heads = bc.heads;
    mc.context = bc.context;
    mc.norm.name = norm;
    return mc;
  }
  static double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  // random next-token batches: the step's cost does not depend on the text
  void next_batch() {
    int32_t *px = x_.idata(), *py = y_.idata();
    for (int64_t i = 0; i < x_.numel(); ++i) {
      px[i] = (int32_t)data_gen_.below((uint32_t)bc_.vocab);
      py[i] = (int32_t)data_gen_.below((uint32_t)bc_.vocab);
    }
  }
  BenchConfig bc_;
  Generator init_gen_{1337}, data_gen_{1338};
  GPT model_;
  FlatParameters flat_;
  std::unique_ptr<AdamW> optim_;
  Tensor x_, y_;
  float last_loss_ = 0;
};

Result run_one(const BenchConfig& bc, const std::string& norm, int threads, int64_t steps) {
  StepRunner runner(bc, norm);
  allocator_reset_peak(Device::CPU);
  runner.train_step();  // warm-up: fills the allocator's cache and the thread pool
  const int64_t allocs_after_first = allocator_stats(Device::CPU).system_allocs;
  std::vector<double> times;
  const double cpu0 = cpu_seconds();
  const auto wall0 = std::chrono::steady_clock::now();
  for (int64_t s = 0; s < steps; ++s) times.push_back(runner.train_step());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double core_share = (cpu_seconds() - cpu0) / (wall * threads);
  const AllocatorStats after = allocator_stats(Device::CPU);
  NL_CHECK(std::isfinite(runner.last_loss()), "bench_gpt: ", bc.name, " with ", norm, " gave a non-finite loss");

  Result r;
  r.config = bc.name;
  r.norm = norm;
  r.threads = threads;
  r.steps = steps;
  r.params = runner.model().num_parameters();
  const double med = median(times);
  r.ms_median = med * 1e3;
  r.ms_min = *std::min_element(times.begin(), times.end()) * 1e3;
  r.tok_s = (double)(bc.batch * bc.context) / med;
  r.gflops = step_flops(bc) / med * 1e-9;
  r.system_allocs_after_first = after.system_allocs - allocs_after_first;
  r.peak_mib = (double)after.peak_in_use_bytes / 1048576.0;
  r.last_loss = runner.last_loss();
  r.core_share = core_share;
  return r;
}

// Times the norms of `norms` side by side on one configuration, their steps interleaved
// (norm 1, norm 2, ..., norm 1, ...) so that a load that comes and goes hits all of them
// alike, and prints median ms of a training step and of a forward-only pass, and each
// norm's ratio to the first. Used for BHyT against BHyT* and RMSNorm (the paper's claim:
// the block-level approximation 13.7 % faster than BHyT*, BHyT 1.6 % faster than RMSNorm).
struct CompareRow {
  std::string config, norm;
  double train_ms = 0, forward_ms = 0, train_ratio = 0, forward_ratio = 0;
};
std::vector<CompareRow> compare_norms(const BenchConfig& bc, const std::vector<std::string>& norms, int64_t steps) {
  std::vector<std::unique_ptr<StepRunner>> runners;
  for (const auto& n : norms) runners.push_back(std::make_unique<StepRunner>(bc, n));
  for (auto& r : runners) r->train_step(), r->forward_only();  // warm-up
  std::vector<std::vector<double>> train(norms.size()), forward(norms.size());
  for (int64_t s = 0; s < steps; ++s)
    for (size_t i = 0; i < runners.size(); ++i) {
      train[i].push_back(runners[i]->train_step());
      forward[i].push_back(runners[i]->forward_only());
    }
  std::vector<CompareRow> rows;
  for (size_t i = 0; i < norms.size(); ++i) {
    CompareRow row;
    row.config = bc.name;
    row.norm = norms[i];
    row.train_ms = median(train[i]) * 1e3;
    row.forward_ms = median(forward[i]) * 1e3;
    row.train_ratio = row.train_ms / (median(train[0]) * 1e3);
    row.forward_ratio = row.forward_ms / (median(forward[0]) * 1e3);
    rows.push_back(row);
  }
  return rows;
}

// The 1-minute load average: other processes on the cores distort every timing, so
// the benchmark prints it beside its results.
std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string one;
  return (f >> one) ? one : std::string("unknown");
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) v.push_back(item);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  prefer_spinning_threads(argv);
  Args args("bench_gpt", "Median ms per GPT training step (forward, backward, AdamW) per configuration and norm.");
  args.add("--threads", "2", "CPU threads (OpenMP and OpenBLAS)");
  args.add("--configs", "tiny,small", "configurations: tiny (L4 C128 T64 B16), small (L6 C384 T256 B8)");
  args.add("--norms", "ln,rms,cbwc,dyt,bhyt", "norms to run (any of ln, rms, cbwc, dyt, bhyt, bhyt-exact)");
  args.add("--steps", "0", "timed steps after one warm-up step (0: tiny 20, small 3)");
  args.add("--json", "", "also write the results to this JSON file");
  args.add("--compare", "rms,bhyt,bhyt-exact",
           "norms timed side by side, steps interleaved, as ratios to the first (empty: skip)");
  args.add("--compare-steps", "0", "interleaved rounds of the comparison (0: tiny 30, small 5)");
  try {
    if (!args.parse(argc, argv)) return 0;
    const int threads = (int)args.integer("--threads");
    NL_CHECK(threads > 0, "--threads must be positive");
    const int64_t steps_flag = args.integer("--steps");
    NL_CHECK(steps_flag >= 0, "--steps must be >= 0");
    std::vector<BenchConfig> configs;
    for (const auto& name : split_list(args.str("--configs"))) {
      auto it = std::find_if(known_configs().begin(), known_configs().end(),
                             [&](const BenchConfig& c) { return c.name == name; });
      NL_CHECK(it != known_configs().end(), "--configs: unknown configuration '", name, "' (tiny, small)");
      configs.push_back(*it);
    }
    const std::vector<std::string> norms = split_list(args.str("--norms"));
    for (const auto& n : norms) check_norm_name(n);
    NL_CHECK(!configs.empty() && !norms.empty(), "--configs and --norms must name at least one each");

    set_num_threads(threads);
    std::printf("bench_gpt: %d thread%s; median over the timed steps after one warm-up step; load average %s\n",
                threads, threads > 1 ? "s" : "", load_average().c_str());
    std::printf("%-6s %-5s %7s %6s %10s %9s %9s %8s %11s %9s %7s %6s\n", "config", "norm", "params", "steps",
                "ms/step", "min ms", "tok/s", "GFLOP/s", "sys allocs", "peak MiB", "loss", "cores");
    std::vector<Result> results;
    for (const auto& bc : configs)
      for (const auto& norm : norms) {
        const int64_t steps = steps_flag > 0 ? steps_flag : bc.default_steps;
        Result r = run_one(bc, norm, threads, steps);
        allocator_release_cached(Device::CPU);  // the next model starts from a clean cache
        std::printf("%-6s %-5s %6.2fM %6lld %10.1f %9.1f %9.0f %8.1f %11lld %9.1f %7.4f %5.0f%%%s\n",
                    r.config.c_str(), r.norm.c_str(), (double)r.params * 1e-6, (long long)r.steps, r.ms_median,
                    r.ms_min, r.tok_s, r.gflops, (long long)r.system_allocs_after_first, r.peak_mib, r.last_loss,
                    100 * r.core_share, r.core_share < 0.9 ? "  <- a core was taken by another process" : "");
        std::fflush(stdout);
        results.push_back(r);
      }
    std::printf("(FLOPs/step: tiny %.2f G, small %.1f G; sys allocs: system allocations after the first step;\n"
                " cores: share of the %d cores this process held while timing, near 100 %% when nothing else ran)\n",
                step_flops(known_configs()[0]) * 1e-9, step_flops(known_configs()[1]) * 1e-9, threads);

    const std::vector<std::string> compared = split_list(args.str("--compare"));
    for (const auto& n : compared) check_norm_name(n);
    const int64_t compare_steps_flag = args.integer("--compare-steps");
    NL_CHECK(compare_steps_flag >= 0, "--compare-steps must be >= 0");
    std::vector<CompareRow> comparison;
    if (!compared.empty()) {
      std::printf("\nside by side, steps interleaved: median ms of a training step and of a forward-only pass "
                  "(no graph), ratio to %s\n",
                  compared[0].c_str());
      std::printf("%-6s %-11s %10s %8s %12s %8s\n", "config", "norm", "train ms", "ratio", "forward ms", "ratio");
      for (const auto& bc : configs) {
        const int64_t rounds = compare_steps_flag > 0 ? compare_steps_flag : (bc.name == "tiny" ? 30 : 5);
        for (const CompareRow& row : compare_norms(bc, compared, rounds)) {
          std::printf("%-6s %-11s %10.2f %8.3f %12.2f %8.3f\n", row.config.c_str(), row.norm.c_str(), row.train_ms,
                      row.train_ratio, row.forward_ms, row.forward_ratio);
          comparison.push_back(row);
        }
        allocator_release_cached(Device::CPU);
        std::fflush(stdout);
      }
      std::printf("(each ratio: this norm's median over the first norm's median, both from the same interleaved run)\n");
    }

    if (!args.str("--json").empty()) {
      std::ofstream js(args.str("--json"));
      NL_CHECK(js.good(), "cannot write --json file ", args.str("--json"));
      js << "{\n  \"benchmark\": \"bench_gpt\",\n  \"threads\": " << threads << ",\n  \"load_average_at_end\": \""
         << load_average() << "\",\n  \"results\": [";
      for (size_t i = 0; i < results.size(); ++i) {
        const Result& r = results[i];
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "%s\n    {\"config\": \"%s\", \"norm\": \"%s\", \"threads\": %d, \"params\": %lld, \"steps\": "
                      "%lld, \"ms_per_step\": %.3f, \"ms_min\": %.3f, \"tok_per_s\": %.1f, \"gflops\": %.2f, "
                      "\"system_allocs_after_first_step\": %lld, \"peak_in_use_mib\": %.2f, \"last_loss\": %.5f, "
                      "\"core_share\": %.3f}",
                      i ? "," : "", r.config.c_str(), r.norm.c_str(), r.threads, (long long)r.params,
                      (long long)r.steps, r.ms_median, r.ms_min, r.tok_s, r.gflops,
                      (long long)r.system_allocs_after_first, r.peak_mib, r.last_loss, r.core_share);
        js << buf;
      }
      js << "\n  ],\n  \"comparison\": [";
      for (size_t i = 0; i < comparison.size(); ++i) {
        const CompareRow& c = comparison[i];
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "%s\n    {\"config\": \"%s\", \"norm\": \"%s\", \"train_ms\": %.3f, \"train_ratio\": %.4f, "
                      "\"forward_ms\": %.3f, \"forward_ratio\": %.4f}",
                      i ? "," : "", c.config.c_str(), c.norm.c_str(), c.train_ms, c.train_ratio, c.forward_ms,
                      c.forward_ratio);
        js << buf;
      }
      js << "\n  ]\n}\n";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpt: %s\n", e.what());
    return 2;
  }
  return 0;
}
