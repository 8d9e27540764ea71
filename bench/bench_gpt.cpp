// bench_gpt: time of one full GPT training step (forward, backward, gradient clipping,
// AdamW on the flat parameter buffer), as train/gpt/gpt_run.cpp runs it, for the `tiny` and
// `small` configurations of BENCHMARKS.md, each norm, and each thread count. Token ids
// are random (from nl::Generator), so the benchmark needs no data files. Nothing passes
// or fails on time. For each thread count and configuration it prints:
//   1. the sgemm roof of the step, measured in the same run: every matrix product of the
//      step (the linears' forward, input and weight gradients, the tied head, attention's
//      six per-head products) timed as a direct cblas_sgemm call, priced by its count;
//   2. per norm: median ms/step after one warm-up step, tokens/s, GFLOP/s by
//      BENCHMARKS.md's formula, the ratio to the roof, the allocations that reached the
//      system after the first step (expected 0) and the peak memory in use;
//   3. for the first norm, the step split into phases (autograd/profile.h: embedding,
//      norms, attention, MLP, residual adds (only where a block cannot add them in its
//      projections' epilogues: Peri-LN, dropout), head, loss, the backward of each, the
//      optimizer), means over the timed steps that add up to the mean step;
// and, at the last thread count, a table of a few norms side by side (default rms, bhyt,
// bhyt-exact), their steps interleaved, as ratios: training step and forward-only pass;
// and generation speed at batch 1 with the key/value cache and without.
//   build/release/bench_gpt [--threads 1,2] [--configs tiny,small] [--norms ln,rms,cbwc,dyt,bhyt]
//                           [--steps N] [--compare rms,bhyt,bhyt-exact] [--json FILE]
#include <cblas.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autograd/profile.h"
#include "bench/bench_util.h"
#include "nn/gpt.h"
#include "tensor/allocator.h"
#include "tensor/cpu/gemm.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "nn/norms/registry.h"
#include "train/loop/trainer.h"

using namespace nl;
using namespace nl::bench;

namespace {

struct BenchConfig {
  std::string name;
  int64_t layers, dim, heads, context, batch, vocab;
  int64_t default_steps;  // timed steps after the warm-up
};

// tiny and small, and the sweeps that show how cost grows: tiny at longer contexts
// (tiny-T128 ... tiny-T1024, batch kept at 16) and small at other widths (small-C128
// ... small-C768, 64-wide heads); scripts/compare_torch.sh runs PyTorch on the same.
const std::vector<BenchConfig>& known_configs() {
  static const std::vector<BenchConfig> configs = [] {
    std::vector<BenchConfig> c = {{"tiny", 4, 128, 4, 64, 16, 256, 20}, {"small", 6, 384, 6, 256, 8, 256, 3}};
    for (int64_t T : {128, 256, 512, 1024})
      c.push_back({"tiny-T" + std::to_string(T), 4, 128, 4, T, 16, 256, T <= 256 ? 10 : 3});
    for (int64_t C : {128, 256, 512, 768})
      c.push_back({"small-C" + std::to_string(C), 6, C, C / 64, 256, 8, 256, C <= 256 ? 5 : 3});
    return c;
  }();
  return configs;
}

std::vector<std::string> config_names_of(const std::vector<BenchConfig>& configs) {
  std::vector<std::string> names;
  for (const auto& c : configs) names.push_back(c.name);
  return names;
}

// FLOPs of one training step (BENCHMARKS.md): 6 N_mm B T for the weight matrices
// (forward 2, backward 4 per multiply-add), N_mm = 12 L C^2 + V C, plus 6 L C T B T for
// attention (QK^T and AV, forward and backward, the masked half counted too).
double step_flops(const BenchConfig& c) {
  const double L = (double)c.layers, C = (double)c.dim, T = (double)c.context, B = (double)c.batch;
  const double n_mm = 12.0 * L * C * C + (double)c.vocab * C;
  return 6.0 * n_mm * B * T + 6.0 * L * C * T * B * T;
}

// ---------------------------------------------------------------- the sgemm roof

// One matrix product C (M, N) = op(A) op(B), done `count` times per step.
struct Product {
  std::string name;
  int64_t M, N, K;
  bool ta, tb;
  int64_t count;
  double seconds = 0;           // median of a direct cblas_sgemm call
  double dispatch_seconds = 0;  // median of nl::matmul: the library's own dispatch (tensor/cpu/gemm.h)
};

// Every product of a training step. A linear x W^T with x (BT, in), W (out, in) runs
// forward NT (BT, out, in), input gradient dY W NN (BT, in, out), weight gradient
// dY^T x TN (out, in, BT). Attention per layer and per (batch, head): S = Q K^T,
// dQ = dS K, dK = dS^T Q, Y = P V, dP = dY V^T, dV = P^T dY.
std::vector<Product> step_products(const BenchConfig& c) {
  const int64_t BT = c.batch * c.context, C = c.dim, L = c.layers, T = c.context, hd = c.dim / c.heads;
  const int64_t per_head = L * c.batch * c.heads;
  std::vector<Product> p;
  auto linear = [&](const std::string& name, int64_t in, int64_t out, int64_t count) {
    p.push_back({name + " fwd", BT, out, in, false, true, count});
    p.push_back({name + " dX", BT, in, out, false, false, count});
    p.push_back({name + " dW", out, in, BT, true, false, count});
  };
  linear("qkv", C, 3 * C, L);
  linear("attn proj", C, C, L);
  linear("fc", C, 4 * C, L);
  linear("mlp proj", 4 * C, C, L);
  linear("head", C, c.vocab, 1);
  p.push_back({"attn S = QK^T", T, T, hd, false, true, per_head});
  p.push_back({"attn dQ = dS K", T, hd, T, false, false, per_head});
  p.push_back({"attn dK = dS^T Q", T, hd, T, true, false, per_head});
  p.push_back({"attn Y = PV", T, hd, T, false, false, per_head});
  p.push_back({"attn dP = dY V^T", T, T, hd, false, true, per_head});
  p.push_back({"attn dV = P^T dY", T, hd, T, true, false, per_head});
  return p;
}

// Two roofs of the same products in the same run: OpenBLAS called once per product, and
// the library's dispatch (one-thread sgemms over output tiles, OpenBLAS's or with
// GEMM=onednn oneDNN's). The faster of the two is the honest bar for a step.
struct Roof {
  double seconds = 0, dispatch_seconds = 0, flops = 0;
  std::vector<Product> products;
  double best() const { return std::min(seconds, dispatch_seconds); }
};

const char* dispatch_library() { return tile_sgemm_library(); }

Roof measure_roof(const BenchConfig& c) {
  Roof roof;
  roof.products = step_products(c);
  Generator gen(5);
  for (Product& p : roof.products) {
    Tensor a = gen.normal(p.ta ? Shape{p.K, p.M} : Shape{p.M, p.K});
    Tensor b = gen.normal(p.tb ? Shape{p.N, p.K} : Shape{p.K, p.N});
    Tensor out = Tensor::zeros({p.M, p.N});
    const float *pa = a.data(), *pb = b.data();
    float* po = out.data();
    Tensor dispatched;  // its own result: `out`'s buffer stays the direct call's
    const auto timed = time_interleaved({[&] {
                                           cblas_sgemm(CblasRowMajor, p.ta ? CblasTrans : CblasNoTrans,
                                                       p.tb ? CblasTrans : CblasNoTrans, (int)p.M, (int)p.N, (int)p.K,
                                                       1.0f, pa, (int)a.size(1), pb, (int)b.size(1), 0.0f, po,
                                                       (int)p.N);
                                         },
                                         [&] { dispatched = nl::matmul(a, b, p.ta, p.tb); }},
                                        9, 0.0, 2e-3);
    p.seconds = timed.median_s[0];
    p.dispatch_seconds = timed.median_s[1];
    roof.seconds += p.seconds * (double)p.count;
    roof.dispatch_seconds += p.dispatch_seconds * (double)p.count;
    roof.flops += 2.0 * (double)p.M * (double)p.N * (double)p.K * (double)p.count;
  }
  return roof;
}

// ---------------------------------------------------------------- one model's steps

// One model with its optimizer and a batch source: a training step (forward, backward,
// clipping, AdamW) and a forward-only pass (no graph recorded), each timed alone.
class StepRunner {
 public:
  StepRunner(const BenchConfig& bc, const std::string& norm) : bc_(bc), model_(bench_gpt_config(bc, norm), init_gen_) {
    flat_ = flatten_parameters(model_);
    optim_ = std::make_unique<AdamW>(flat_, AdamWConfig{0.9f, 0.99f, 1e-8f, 0.1f});
    x_ = Tensor::empty({bc.batch, bc.context}, DType::I32);
    y_ = Tensor::empty({bc.batch, bc.context}, DType::I32);
  }
  const GPT& model() const { return model_; }
  float last_loss() const { return last_loss_; }

  // seconds of one training step; the random batch is drawn outside the timed span.
  // With profiling on, the zeroing of gradients and the optimizer are phases too.
  double train_step() {
    next_batch();
    const auto t0 = Clock::now();
    RunEnd end;
    const StepOutcome s =
        nl::train_step([&] { return model_.loss(x_, y_); }, flat_, *optim_, 1e-3f, 1.0f, guard_, ++steps_, end);
    NL_CHECK(s.grad_norm, "bench_gpt: ", end.fault);
    last_loss_ = s.loss;
    return seconds_since(t0);
  }
  // seconds of one forward pass to the loss with no autograd recording (inference cost)
  double forward_only() {
    next_batch();
    const auto t0 = Clock::now();
    NoGradGuard no_grad;
    last_loss_ = model_.loss(x_, y_).item();
    return seconds_since(t0);
  }

 private:
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
  NonFiniteGuard guard_{NonFiniteAction::Stop, nullptr};
  int64_t steps_ = 0;
  Tensor x_, y_;
  float last_loss_ = 0;
};

struct Result {
  std::string config, norm;
  int threads = 0;
  int64_t steps = 0, params = 0;
  double ms_median = 0, ms_min = 0, ms_mean = 0, tok_s = 0, gflops = 0, roof_ratio = 0;
  double best_roof_ratio = 0;  // against the faster of the two roofs (Roof::best)
  int64_t system_allocs_after_first = 0;
  double page_faults_per_step = 0;  // minor page faults of the process per timed step
  double peak_mib = 0;
  float last_loss = 0;
  // CPU seconds over wall seconds times threads during the timed steps, and the share
  // of that span the threads spent queued behind another process (bench_util.h).
  double core_share = 0, queued_share = 0;
  std::vector<std::pair<std::string, double>> phases;  // mean seconds per step (profiled runs)
};

// roof_seconds: the step's sgemm roof (0: not measured, no ratio)
Result run_one(const BenchConfig& bc, const std::string& norm, int threads, int64_t steps, bool profiled,
               double roof_seconds, ThreadGovernor* governor = nullptr) {
  StepRunner runner(bc, norm);
  allocator_reset_peak(Device::CPU);
  runner.train_step();  // warm-up: fills the allocator's cache and the thread pool
  const int64_t allocs_after_first = allocator_stats(Device::CPU).system_allocs;
  std::vector<double> times;
  profile::reset();
  profile::enable(profiled);
  const CoreShare share(threads);
  const QueuedShare queued(threads);
  const long faults_before = minor_page_faults();
  for (int64_t s = 0; s < steps; ++s) {
    // with a governor, the thread count of the training loop's policy (train/loop/thread_governor.h)
    if (governor) governor->start_step();
    times.push_back(runner.train_step());
    if (governor) governor->end_step(times.back());
  }
  profile::enable(false);
  const long faults = minor_page_faults() - faults_before;
  const double core_share = share.get(), queued_share = queued.get();
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
  double total = 0;
  for (double t : times) total += t;
  r.ms_mean = total / (double)steps * 1e3;
  r.tok_s = (double)(bc.batch * bc.context) / med;
  r.gflops = step_flops(bc) / med * 1e-9;
  r.roof_ratio = roof_seconds > 0 ? med / roof_seconds : 0;
  r.system_allocs_after_first = after.system_allocs - allocs_after_first;
  r.page_faults_per_step = (double)faults / (double)steps;
  r.peak_mib = (double)after.peak_in_use_bytes / 1048576.0;
  r.last_loss = runner.last_loss();
  r.core_share = core_share;
  r.queued_share = queued_share;
  if (profiled)
    for (const auto& [phase, seconds] : profile::totals()) r.phases.emplace_back(phase, seconds / (double)steps);
  profile::reset();
  return r;
}

// The phases of one profiled run: forward and backward side by side, then the rest,
// and what no phase covers (the step's own bookkeeping, the loss's item()), so that the
// rows add up to the mean step.
void print_breakdown(const Result& r) {
  std::printf("\n  %s %s, %d thread%s: where a step goes (means over %lld profiled steps)\n", r.config.c_str(),
              r.norm.c_str(), r.threads, r.threads > 1 ? "s" : "", (long long)r.steps);
  std::printf("  %-28s %10s %10s %10s %7s\n", "phase", "fwd ms", "bwd ms", "total ms", "share");
  std::map<std::string, double> by_name(r.phases.begin(), r.phases.end());
  double covered = 0;
  auto row = [&](const std::string& name, double fwd, double bwd) {
    std::printf("  %-28s %10.2f %10.2f %10.2f %6.1f%%\n", name.c_str(), fwd * 1e3, bwd * 1e3, (fwd + bwd) * 1e3,
                100.0 * (fwd + bwd) / (r.ms_mean * 1e-3));
    covered += fwd + bwd;
  };
  std::vector<std::string> done;
  auto is_backward = [](const std::string& name) {
    return name.size() > 9 && name.compare(name.size() - 9, 9, " backward") == 0;
  };
  for (const auto& [name, seconds] : r.phases) {
    if (is_backward(name)) continue;
    const auto bwd = by_name.find(name + " backward");
    row(name, seconds, bwd == by_name.end() ? 0.0 : bwd->second);
    done.push_back(name);
    if (bwd != by_name.end()) done.push_back(bwd->first);
  }
  // backward-only phases (the graph walk, summing into leaf gradients)
  for (const auto& [name, seconds] : r.phases)
    if (std::find(done.begin(), done.end(), name) == done.end())
      row(is_backward(name) ? name.substr(0, name.size() - 9) : name, 0.0, seconds);
  row("other (not in any phase)", r.ms_mean * 1e-3 - covered, 0.0);
  std::printf("  %-28s %10s %10s %10.2f  (mean step; median %.2f)\n", "sum", "", "", r.ms_mean, r.ms_median);
}

// Times the norms of `norms` side by side on one configuration, their steps interleaved
// (norm 1, norm 2, ..., norm 1, ...) so that a load that comes and goes hits all of them
// alike, and returns median ms of a training step and of a forward-only pass, and each
// norm's ratio to the first. Used for BHyT against BHyT* and RMSNorm (the paper's claim:
// the block-level approximation 13.7 % faster than BHyT*, BHyT 1.6 % faster than RMSNorm).
struct CompareRow {
  std::string config, norm;
  int threads = 0;
  double train_ms = 0, forward_ms = 0, train_ratio = 0, forward_ratio = 0;
};

std::vector<CompareRow> compare_side_by_side(const BenchConfig& bc, const std::vector<std::string>& norms,
                                             int64_t rounds, int threads) {
  std::vector<std::unique_ptr<StepRunner>> runners;
  for (const auto& n : norms) runners.push_back(std::make_unique<StepRunner>(bc, n));
  for (auto& r : runners) r->train_step(), r->forward_only();  // warm-up
  std::vector<std::vector<double>> train(norms.size()), forward(norms.size());
  for (int64_t s = 0; s < rounds; ++s)
    for (size_t i = 0; i < runners.size(); ++i) {
      train[i].push_back(runners[i]->train_step());
      forward[i].push_back(runners[i]->forward_only());
    }
  std::vector<CompareRow> rows;
  for (size_t i = 0; i < norms.size(); ++i) {
    CompareRow row;
    row.config = bc.name;
    row.norm = norms[i];
    row.threads = threads;
    row.train_ms = median(train[i]) * 1e3;
    row.forward_ms = median(forward[i]) * 1e3;
    row.train_ratio = row.train_ms / (median(train[0]) * 1e3);
    row.forward_ratio = row.forward_ms / (median(forward[0]) * 1e3);
    rows.push_back(row);
  }
  return rows;
}

// Generation at batch 1, greedy, from one token up to `length` tokens: each new token
// through the key/value cache (GPT::forward_cached), and by a full forward of the
// sequence so far, as generation without a cache does. Returns tokens/s of each and
// whether both produced the same tokens.
struct GenerationRow {
  std::string config;
  int threads = 0;
  int64_t tokens = 0;
  double cached_tok_s = 0, uncached_tok_s = 0;
  bool same_tokens = false;
};

GenerationRow generation_speed(const BenchConfig& bc, int threads) {
  Generator gen(1337);
  GPT model(bench_gpt_config(bc, kReferenceNorm), gen);
  model.eval();
  NoGradGuard no_grad;
  const int64_t length = std::min<int64_t>(256, bc.context), V = bc.vocab;
  auto argmax_last = [&](const Tensor& logits) {
    const float* last = logits.data() + (logits.numel() - V);
    return (int32_t)(std::max_element(last, last + V) - last);
  };
  auto generate = [&](bool cached) {
    std::vector<int32_t> ids = {10};
    KVCache cache = model.make_cache(1);
    while ((int64_t)ids.size() < length) {
      const Tensor logits =
          cached ? model.forward_cached(Tensor::from_ints({ids.back()}, {1, 1}), cache)
                 : model.forward(Tensor::from_ints(ids, {1, (int64_t)ids.size()})).value().contiguous();
      ids.push_back(argmax_last(logits));
    }
    return ids;
  };
  generate(true);  // warm-up
  const auto t0 = Clock::now();
  const std::vector<int32_t> with_cache = generate(true);
  const double cached_s = seconds_since(t0);
  const auto t1 = Clock::now();
  const std::vector<int32_t> without = generate(false);
  const double uncached_s = seconds_since(t1);
  GenerationRow row;
  row.config = bc.name;
  row.threads = threads;
  row.tokens = length - 1;
  row.cached_tok_s = (double)(length - 1) / cached_s;
  row.uncached_tok_s = (double)(length - 1) / uncached_s;
  row.same_tokens = with_cache == without;
  return row;
}

// A CPU-bound process beside the benchmark for as long as it lives: a forked child that
// only spins, its niceness set by the parent (raising it needs no privilege; lowering
// it below the benchmark's does, so `nice_level` reads back what it got).
class Competitor {
 public:
  explicit Competitor(int nice_wanted) {
    pid_ = fork();
    NL_CHECK(pid_ >= 0, "bench_gpt --contend: cannot fork the competing process");
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with the benchmark, however that ends
      if (getppid() == 1) _exit(0);      // the benchmark ended before the line above ran
      for (volatile unsigned long i = 0;; i = i + 1) {
      }
    }
    setpriority(PRIO_PROCESS, (id_t)pid_, nice_wanted);
    errno = 0;
    nice_level = getpriority(PRIO_PROCESS, (id_t)pid_);
  }
  ~Competitor() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  Competitor(const Competitor&) = delete;
  Competitor& operator=(const Competitor&) = delete;
  int nice_level = 0;

 private:
  pid_t pid_ = -1;
};

// --contend: the first norm's step alone and beside a competing CPU-bound process at
// nice 0 and at nice 19, at each thread count; the thread counts of one condition run
// back to back, so their ratio is a same-run comparison. The target (BENCHMARKS.md):
// beside a competitor, the 2-thread step is no slower than the 1-thread step.
struct ContendRow {
  std::string config, condition;
  int threads = 0;
  bool adaptive = false;  // the training loop's policy: --threads-adapt on, starting at `threads`
  double ms = 0, core_share = 0, queued_share = 0;
  int final_threads = 0;  // the count the policy ended on
};

std::vector<ContendRow> contend(const BenchConfig& bc, const std::string& norm, const std::vector<int64_t>& threads,
                                int64_t steps) {
  std::vector<ContendRow> rows;
  for (int nice_wanted : {-1, 0, 19}) {
    std::unique_ptr<Competitor> other;
    std::string condition = "alone";
    if (nice_wanted >= 0) {
      other = std::make_unique<Competitor>(nice_wanted);
      condition = "beside nice " + std::to_string(other->nice_level);
    }
    for (int64_t t : threads) {
      set_num_threads((int)t);
      const Result r = run_one(bc, norm, (int)t, steps, false, 0);
      allocator_release_cached(Device::CPU);
      rows.push_back({bc.name, condition, (int)t, false, r.ms_median, r.core_share, r.queued_share, (int)t});
    }
    // what a training run with --threads-adapt on (the default) gets at the largest count
    // once the policy has decided: its first window at the full count and its probe (the
    // cost a run pays once per hold of 200 steps) run first, untimed, then `steps` steps
    // at the count it chose, the policy still watching
    const int most = (int)*std::max_element(threads.begin(), threads.end());
    if (most > 1) {
      set_num_threads(most);
      ThreadGovernor governor(most);
      const ThreadGovernor::Options o;
      run_one(bc, norm, most, 2 * o.window, false, 0, &governor);
      const int chosen = governor.threads();
      const Result r = run_one(bc, norm, chosen, steps, false, 0, &governor);
      allocator_release_cached(Device::CPU);
      rows.push_back({bc.name, condition, most, true, r.ms_median, r.core_share, r.queued_share, governor.threads()});
      set_num_threads(most);
    }
  }
  return rows;
}

void print_contend(const std::vector<ContendRow>& rows, const std::string& norm) {
  std::printf("\nunder load (%s): median ms/step alone and beside a CPU-bound process; ratio: this thread count's "
              "step over the 1-thread step of the same condition (target beside a process: <= 1)\n",
              norm.c_str());
  std::printf("%-11s %-14s %-12s %9s %7s %6s %7s\n", "config", "condition", "threads", "ms/step", "ratio", "cores",
              "queued");
  for (const ContendRow& r : rows) {
    double one = 0;
    for (const ContendRow& o : rows)
      if (o.config == r.config && o.condition == r.condition && o.threads == 1 && !o.adaptive) one = o.ms;
    const std::string threads = r.adaptive ? std::to_string(r.threads) + " adapt->" + std::to_string(r.final_threads)
                                           : std::to_string(r.threads);
    std::printf("%-11s %-14s %-12s %9.1f %7.3f %5.0f%% %6.0f%%\n", r.config.c_str(), r.condition.c_str(),
                threads.c_str(), r.ms, one > 0 ? r.ms / one : 0.0, 100 * r.core_share, 100 * r.queued_share);
  }
  std::printf(
      "(cores: CPU time over wall time x threads; queued: the share of it the threads waited for a core;\n"
      " N adapt->M: the training loop's policy, --threads-adapt on, starting at N threads: its first\n"
      " window and probe untimed, then the same steps as the other rows at the count it chose, M at the end)\n");
}

// How cost grows: one row per configuration of the run, for the first norm, with its
// shape, ms/step at each thread count, per-token cost and the allocator's peak.
void print_growth(const std::vector<Result>& results, const std::vector<BenchConfig>& configs,
                  const std::vector<int64_t>& threads, const std::string& norm) {
  std::printf("\nhow cost grows (%s): ms/step and peak memory in use per configuration\n", norm.c_str());
  std::printf("%-11s %3s %4s %3s %5s %3s", "config", "L", "C", "H", "T", "B");
  for (int64_t t : threads) std::printf(" %9s %8s", ("ms " + std::to_string(t) + "t").c_str(), "us/tok");
  std::printf(" %9s\n", "peak MiB");
  for (const BenchConfig& bc : configs) {
    std::printf("%-11s %3lld %4lld %3lld %5lld %3lld", bc.name.c_str(), (long long)bc.layers, (long long)bc.dim,
                (long long)bc.heads, (long long)bc.context, (long long)bc.batch);
    double peak = 0;
    for (int64_t t : threads)
      for (const Result& r : results)
        if (r.config == bc.name && r.norm == norm && r.threads == t) {
          std::printf(" %9.1f %8.2f", r.ms_median, r.ms_median * 1e3 / (double)(bc.batch * bc.context));
          peak = std::max(peak, r.peak_mib);
        }
    std::printf(" %9.1f\n", peak);
  }
}

}  // namespace

int main(int argc, char** argv) {
  configure_runtime(argv);
  FlagParser p("bench_gpt",
               "Median ms per GPT training step (forward, backward, AdamW) per configuration, norm and thread count, "
               "against the sgemm roof of the step measured in the same run, with a per-phase breakdown.");
  std::vector<int64_t> thread_counts = {1, 2};
  add_thread_counts_flag(p, thread_counts);
  std::vector<std::string> config_names = {"tiny", "small"}, norms = {"ln", "rms", "cbwc", "dyt", "bhyt"},
                           compared = {"rms", "bhyt", "bhyt-exact"};
  add_configs_flag(p, config_names, config_names_of(known_configs()),
                   "configurations: tiny (L4 C128 T64 B16), small (L6 C384 T256 B8), tiny-T128 ... tiny-T1024 "
                   "(tiny at context T), small-C128 ... small-C768 (small at width C, 64-wide heads)");
  add_norms_list_flag(p, norms);
  int64_t steps_flag = 0, compare_steps_flag = 0;
  add_timed_steps_flag(p, steps_flag, "timed steps after one warm-up step (0: tiny 20, small 3)");
  std::string breakdown = "first";
  p.choice("--breakdown", breakdown, {"first", "all", "none"},
           "per-phase breakdown for: first (the first norm), all, none");
  p.custom(
      "--compare", "rms,bhyt,bhyt-exact", [&](const std::string& v) { compared = split_list(v); },
      "norms timed side by side at the last thread count, steps interleaved, as ratios to the first (empty: skip)");
  p.integer("--compare-steps", compare_steps_flag, 0, 1000000,
            "interleaved rounds of the comparison (0: tiny 30, small 5)");
  bool contend_flag = false;
  p.toggle("--contend", contend_flag,
           "also time the first norm's step beside a competing CPU-bound process at nice 0 and at nice 19");
  bool no_generation = false;
  p.toggle("--no-generation", no_generation, "skip the generation table (batch 1, key/value cache against none)");
  std::string json_path;
  add_json_flag(p, json_path);
  std::vector<BenchConfig> configs;
  p.check([&] {
    for (const auto& name : config_names)
      configs.push_back(*std::find_if(known_configs().begin(), known_configs().end(),
                                      [&](const BenchConfig& c) { return c.name == name; }));
    for (const auto& n : compared) norm_kind(n);
  });
  try {
    if (!p.parse(argc, argv)) return 0;
    std::printf("bench_gpt: median over the timed steps after one warm-up step; load average %s; %s\n",
                load_average().c_str(), blas_kernels().c_str());
    std::vector<Result> results;
    std::vector<JsonRecord> roofs;
    for (int threads : thread_counts) {
      set_num_threads(threads);
      NL_CHECK(num_threads() == threads, "asked for ", threads, " threads, OpenMP gives ", num_threads());
      for (const auto& bc : configs) {
        const Roof roof = measure_roof(bc);
        std::printf("\n%s, %d thread%s: sgemm roof %.1f ms/step (%.2f GFLOP in %zu product shapes at %.1f GFLOP/s; "
                    "BENCHMARKS.md formula %.2f GFLOP); the library's dispatch (%s tiles) %.1f ms/step\n",
                    bc.name.c_str(), threads, threads > 1 ? "s" : "", roof.seconds * 1e3, roof.flops * 1e-9,
                    roof.products.size(), roof.flops / roof.seconds * 1e-9, step_flops(bc) * 1e-9,
                    dispatch_library(), roof.dispatch_seconds * 1e3);
        roofs.push_back(JsonRecord()
                            .str("config", bc.name)
                            .num("threads", threads)
                            .num("roof_ms", roof.seconds * 1e3)
                            .num("dispatch_roof_ms", roof.dispatch_seconds * 1e3)
                            .str("dispatch_library", dispatch_library())
                            .num("roof_gflop", roof.flops * 1e-9));
        std::printf("%-10s %-10s %7s %6s %10s %9s %9s %8s %7s %7s %11s %7s %9s %7s %6s %6s\n", "config", "norm",
                    "params", "steps", "ms/step", "min ms", "tok/s", "GFLOP/s", "x roof", "x best", "sys allocs",
                    "faults", "peak MiB", "loss", "cores", "queued");
        for (size_t i = 0; i < norms.size(); ++i) {
          const int64_t steps = steps_flag > 0 ? steps_flag : bc.default_steps;
          const bool profiled = breakdown == "all" || (breakdown == "first" && i == 0);
          Result r = run_one(bc, norms[i], threads, steps, profiled, roof.seconds);
          r.best_roof_ratio = r.roof_ratio * roof.seconds / roof.best();
          allocator_release_cached(Device::CPU);  // the next model starts from a clean cache
          std::printf(
              "%-10s %-10s %6.2fM %6lld %10.1f %9.1f %9.0f %8.1f %7.2f %7.2f %11lld %7.1f %9.1f %7.4f %5.0f%% "
              "%5.0f%%%s\n",
              r.config.c_str(), r.norm.c_str(), (double)r.params * 1e-6, (long long)r.steps, r.ms_median, r.ms_min,
              r.tok_s, r.gflops, r.roof_ratio, r.best_roof_ratio, (long long)r.system_allocs_after_first,
              r.page_faults_per_step, r.peak_mib,
              r.last_loss, 100 * r.core_share, 100 * r.queued_share,
              r.queued_share > 0.05 ? "  <- another process held a core" : "");
          std::fflush(stdout);
          results.push_back(r);
        }
        for (const Result& r : results)
          if (r.config == bc.name && r.threads == threads && !r.phases.empty()) print_breakdown(r);
      }
    }
    std::printf("\n(FLOPs/step: tiny %.2f G, small %.1f G; x roof: median step over the sgemm roof of the same run;\n"
                " x best: over the faster of that roof and the library's dispatch on the same products;\n"
                " sys allocs: system allocations after the first step; faults: the process's minor page faults per\n"
                " timed step (pages taken from the system); cores: CPU time over wall time x threads while\n"
                " timing; queued: the share of it the threads waited for a core another process held, near 0 %% when\n"
                " nothing else ran; profiled steps pay a clock read per op)\n",
                step_flops(known_configs()[0]) * 1e-9, step_flops(known_configs()[1]) * 1e-9);

    if (configs.size() > 1) print_growth(results, configs, thread_counts, norms[0]);
    std::vector<ContendRow> contention;
    if (contend_flag)
      for (const auto& bc : configs) {
        const std::vector<ContendRow> rows =
            contend(bc, norms[0], thread_counts, steps_flag > 0 ? steps_flag : bc.default_steps);
        contention.insert(contention.end(), rows.begin(), rows.end());
      }
    if (contend_flag) print_contend(contention, norms[0]);

    std::vector<CompareRow> comparison;
    if (!compared.empty()) {
      const int threads = thread_counts.back();
      set_num_threads(threads);
      std::printf("\nside by side, %d thread%s, steps interleaved: median ms of a training step and of a "
                  "forward-only pass (no graph), ratio to %s\n",
                  threads, threads > 1 ? "s" : "", compared[0].c_str());
      std::printf("%-6s %-11s %10s %8s %12s %8s\n", "config", "norm", "train ms", "ratio", "forward ms", "ratio");
      for (const auto& bc : configs) {
        const int64_t rounds = compare_steps_flag > 0 ? compare_steps_flag : (bc.name == "tiny" ? 30 : 5);
        for (const CompareRow& row : compare_side_by_side(bc, compared, rounds, threads)) {
          std::printf("%-6s %-11s %10.2f %8.3f %12.2f %8.3f\n", row.config.c_str(), row.norm.c_str(), row.train_ms,
                      row.train_ratio, row.forward_ms, row.forward_ratio);
          comparison.push_back(row);
        }
        allocator_release_cached(Device::CPU);
        std::fflush(stdout);
      }
      std::printf(
          "(each ratio: this norm's median over the first norm's median, both from the same interleaved run)\n");
    }

    std::vector<GenerationRow> generation;
    if (!no_generation) {
      const int threads = thread_counts.back();
      set_num_threads(threads);
      std::printf("\ngeneration, batch 1, greedy, ln model, %d thread%s: tokens/s with the key/value cache and with a "
                  "full forward per token\n",
                  threads, threads > 1 ? "s" : "");
      std::printf("%-6s %7s %14s %14s %9s %12s\n", "config", "tokens", "cached tok/s", "full tok/s", "speed-up",
                  "same tokens");
      for (const auto& bc : configs) {
        const GenerationRow g = generation_speed(bc, threads);
        std::printf("%-6s %7lld %14.0f %14.0f %8.1fx %12s\n", g.config.c_str(), (long long)g.tokens, g.cached_tok_s,
                    g.uncached_tok_s, g.cached_tok_s / g.uncached_tok_s, g.same_tokens ? "yes" : "NO");
        generation.push_back(g);
        allocator_release_cached(Device::CPU);
        std::fflush(stdout);
      }
    }

    if (!json_path.empty()) {
      std::vector<JsonRecord> runs, phases, compare, gen_rows;
      for (const GenerationRow& g : generation)
        gen_rows.push_back(JsonRecord()
                               .str("config", g.config)
                               .num("threads", g.threads)
                               .num("tokens", (double)g.tokens)
                               .num("cached_tok_per_s", g.cached_tok_s)
                               .num("full_forward_tok_per_s", g.uncached_tok_s)
                               .num("same_tokens", g.same_tokens ? 1 : 0));
      for (const Result& r : results) {
        runs.push_back(JsonRecord()
                           .str("config", r.config)
                           .str("norm", r.norm)
                           .num("threads", r.threads)
                           .num("params", (double)r.params)
                           .num("steps", (double)r.steps)
                           .num("ms_per_step", r.ms_median)
                           .num("ms_min", r.ms_min)
                           .num("ms_mean", r.ms_mean)
                           .num("tok_per_s", r.tok_s)
                           .num("gflops", r.gflops)
                           .num("ratio_to_roof", r.roof_ratio)
                           .num("ratio_to_best_roof", r.best_roof_ratio)
                           .num("system_allocs_after_first_step", (double)r.system_allocs_after_first)
                           .num("page_faults_per_step", r.page_faults_per_step)
                           .num("peak_in_use_mib", r.peak_mib)
                           .num("last_loss", r.last_loss)
                           .num("core_share", r.core_share)
                           .num("queued_share", r.queued_share));
        for (const auto& [phase, seconds] : r.phases)
          phases.push_back(JsonRecord()
                               .str("config", r.config)
                               .str("norm", r.norm)
                               .num("threads", r.threads)
                               .str("phase", phase)
                               .num("ms_per_step", seconds * 1e3));
      }
      std::vector<JsonRecord> contend_rows;
      for (const ContendRow& c : contention)
        contend_rows.push_back(JsonRecord()
                                   .str("config", c.config)
                                   .str("condition", c.condition)
                                   .num("threads", c.threads)
                                   .num("adaptive", c.adaptive ? 1 : 0)
                                   .num("final_threads", c.final_threads)
                                   .num("ms_per_step", c.ms)
                                   .num("core_share", c.core_share)
                                   .num("queued_share", c.queued_share));
      for (const CompareRow& c : comparison)
        compare.push_back(JsonRecord()
                              .str("config", c.config)
                              .str("norm", c.norm)
                              .num("threads", c.threads)
                              .num("train_ms", c.train_ms)
                              .num("train_ratio", c.train_ratio)
                              .num("forward_ms", c.forward_ms)
                              .num("forward_ratio", c.forward_ratio));
      write_json(json_path, {{"benchmark", "bench_gpt"},
                             {"load_average_at_end", load_average()},
                             {"roofs", json_list(roofs)},
                             {"results", json_list(runs)},
                             {"phases", json_list(phases)},
                             {"comparison", json_list(compare)},
                             {"contention", json_list(contend_rows)},
                             {"generation", json_list(gen_rows)}});
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpt: %s\n", e.what());
    return 2;
  }
  return 0;
}
