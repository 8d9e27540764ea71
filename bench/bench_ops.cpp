// bench_ops: how close the library's kernels come to what the machine can do.
//   (a) nl::matmul against a direct cblas_sgemm call on the same buffers, for the matrix
//       products of one training step of the `tiny` and `small` GPTs (BENCHMARKS.md);
//   (b) memory bandwidth of copies, elementwise add and softmax against a plain memcpy;
//   (c) forward + backward of the fused norm kernels (tensor/norms.h) against the same copy;
//   (d) forward + backward of causal attention: the fused op (ag::attention) against the
//       composite it replaced (matmul, attention_softmax, matmul), time and peak memory.
// Every figure is a median over repetitions, the two sides of a ratio measured
// interleaved in the same run. Nothing passes or fails on time.
//   build/release/bench_ops [--threads 1,2] [--quick] [--json FILE]
#include <cblas.h>
#include <sys/resource.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "tensor/allocator.h"
#include "tensor/norms.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "bench/bench_util.h"

using namespace nl;
using namespace nl::bench;

namespace {

// ---------------------------------------------------------------- (a) matmul

// One product C (M, N) = op(A) @ op(B), with A stored (M, K) or, for trans_a, (K, M);
// B stored (K, N) or, for trans_b, (N, K): the layouts nl::matmul and sgemm both read.
struct MatmulCase {
  std::string config, name;
  int64_t M, N, K;
  bool ta, tb;
  std::string layout() const { return std::string(ta ? "T" : "N") + (tb ? "T" : "N"); }
};

// The matrix products of one training step. nn::Linear stores W (out, in) and computes
// x W^T, so its forward is NT, its input gradient dY W is NN, and its weight gradient
// dY^T X is TN. The NN forms of the forward shapes are listed too: they are also the
// input-gradient products of the layer of transposed shape (fc's dX is (BT, 4C) @ (4C, C)).
std::vector<MatmulCase> step_cases(const std::string& config, int64_t BT, int64_t C, int64_t V) {
  return {
      {config, "qkv", BT, 3 * C, C, false, true},
      {config, "qkv", BT, 3 * C, C, false, false},
      {config, "attn proj", BT, C, C, false, true},
      {config, "attn proj", BT, C, C, false, false},
      {config, "fc", BT, 4 * C, C, false, true},
      {config, "fc", BT, 4 * C, C, false, false},
      {config, "mlp proj", BT, C, 4 * C, false, true},
      {config, "mlp proj", BT, C, 4 * C, false, false},
      {config, "head x wte^T", BT, V, C, false, true},
      {config, "head dX = dL wte", BT, C, V, false, false},
      {config, "fc dW = dY^T X", 4 * C, C, BT, true, false},
      {config, "head dwte = dL^T X", V, C, BT, true, false},
  };
}

void bench_matmul(const std::vector<MatmulCase>& cases, int threads, int reps, std::vector<JsonRecord>& out) {
  std::printf("\n(a) matmul, %d thread%s: GFLOP/s of nl::matmul (wrapper) and cblas_sgemm (direct), median of %d;\n"
              "    ratio = wrapper / direct speed, the median of its value in each repetition\n",
              threads, threads > 1 ? "s" : "", reps);
  std::printf("%-6s %-20s %6s %6s %6s %4s %9s %9s %7s\n", "config", "product", "M", "N", "K", "op", "wrapper",
              "direct", "ratio");
  Generator gen(1);
  for (const auto& c : cases) {
    Tensor a = gen.normal(c.ta ? Shape{c.K, c.M} : Shape{c.M, c.K});
    Tensor b = gen.normal(c.tb ? Shape{c.N, c.K} : Shape{c.K, c.N});
    Tensor direct_out = Tensor::zeros({c.M, c.N});
    Tensor wrapper_out;
    auto direct = [&] {
      cblas_sgemm(CblasRowMajor, c.ta ? CblasTrans : CblasNoTrans, c.tb ? CblasTrans : CblasNoTrans, (int)c.M,
                  (int)c.N, (int)c.K, 1.0f, a.data(), (int)a.size(1), b.data(), (int)b.size(1), 0.0f,
                  direct_out.data(), (int)c.N);
    };
    // the previous result is dropped before each call, so the allocator hands its block back
    auto wrapper = [&] {
      wrapper_out = Tensor();
      wrapper_out = matmul(a, b, c.ta, c.tb);
    };
    // function 0 is the direct call, so ratio[1] is wrapper speed / direct speed
    const Timings tm = time_interleaved({direct, wrapper}, reps, 0.0);
    // both sides must have computed the same product, or the ratio means nothing
    float max_diff = 0, max_abs = 0;
    for (int64_t i = 0; i < c.M * c.N; ++i) {
      max_diff = std::max(max_diff, std::fabs(wrapper_out.data()[i] - direct_out.data()[i]));
      max_abs = std::max(max_abs, std::fabs(direct_out.data()[i]));
    }
    NL_CHECK(max_diff <= 1e-5f * max_abs + 1e-6f, "bench_ops: nl::matmul and sgemm disagree on ", c.name, " ",
             c.layout(), " by ", max_diff);
    const double flops = 2.0 * (double)c.M * (double)c.N * (double)c.K;
    const double gw = flops / tm.median_s[1] * 1e-9, gd = flops / tm.median_s[0] * 1e-9, ratio = tm.ratio[1];
    std::printf("%-6s %-20s %6lld %6lld %6lld %4s %9.1f %9.1f %7.3f\n", c.config.c_str(), c.name.c_str(),
                (long long)c.M, (long long)c.N, (long long)c.K, c.layout().c_str(), gw, gd, ratio);
    out.push_back(JsonRecord()
                      .str("config", c.config)
                      .str("product", c.name)
                      .num("threads", threads)
                      .num("M", (double)c.M)
                      .num("N", (double)c.N)
                      .num("K", (double)c.K)
                      .str("layout", c.layout())
                      .num("wrapper_gflops", gw)
                      .num("direct_gflops", gd)
                      .num("ratio", ratio));
  }
}

// ---------------------------------------------------------------- (b) bandwidth

// The baseline: memcpy of the buffer, split into one contiguous chunk per thread (with
// one thread, a plain memcpy). GB/s counts bytes read plus bytes written.
std::function<void()> chunked_memcpy(float* dst, const float* src, int64_t n) {
  return [=] {
#ifdef _OPENMP
#pragma omp parallel
    {
      const int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
      const int64_t lo = n * id / nt, hi = n * (id + 1) / nt;
      std::memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(float));
    }
#else
    std::memcpy(dst, src, (size_t)n * sizeof(float));
#endif
  };
}

struct BandwidthCase {
  std::string name;
  double bytes;  // read + written per call
  std::function<void()> run;
};

// Runs the cases interleaved with the memcpy baseline (case 0) and prints GB/s and the
// ratio to it. Slow kernels get fewer repetitions: a group is held to about this many seconds.
constexpr double kGroupBudget = 2.5;

void report_bandwidth(const std::string& section, const std::vector<BandwidthCase>& cases, int threads, int reps,
                      std::vector<JsonRecord>& out) {
  std::vector<std::function<void()>> fns;
  for (const auto& c : cases) fns.push_back(c.run);
  const Timings tm = time_interleaved(fns, reps, kGroupBudget);
  const std::vector<double>& t = tm.median_s;
  const int reps_done = tm.reps;
  for (size_t i = 0; i < cases.size(); ++i) {
    const double gbs = cases[i].bytes / t[i] * 1e-9;
    // bandwidth ratio = (bytes_i / t_i) / (bytes_0 / t_0), per repetition
    const double ratio = tm.ratio[i] * cases[i].bytes / cases[0].bytes;
    std::printf("%-44s %8.1f %9.3f %8.1f %7.3f %5d\n", cases[i].name.c_str(), cases[i].bytes / 1048576.0, t[i] * 1e3,
                gbs, ratio, reps_done);
    out.push_back(JsonRecord()
                      .str("section", section)
                      .str("op", cases[i].name)
                      .num("threads", threads)
                      .num("mbytes", cases[i].bytes / 1048576.0)
                      .num("ms", t[i] * 1e3)
                      .num("gbps", gbs)
                      .num("ratio_to_memcpy", ratio)
                      .num("reps", reps_done));
  }
}

// 32 MiB per float array: a copy then touches 64 MiB, twice the 32 MiB L3 of the
// benchmark machine, so every figure is a DRAM figure.
constexpr int64_t kElems = 8 << 20;

void bench_bandwidth(int threads, int reps, std::vector<JsonRecord>& out) {
  std::printf("\n(b) bandwidth, %d thread%s: GB/s = (bytes read + written) / median time; ratio to memcpy\n", threads,
              threads > 1 ? "s" : "");
  std::printf("%-44s %8s %9s %8s %7s %5s\n", "op", "MiB mv", "ms", "GB/s", "ratio", "reps");
  Generator gen(2);
  const double arr = (double)kElems * sizeof(float);
  Tensor a = gen.normal({kElems}), b = gen.normal({kElems}), dst = Tensor::zeros({kElems});
  Tensor wide = a.view({8192, 1024}).transpose(0, 1);  // a strided view: contiguous() must gather
  Tensor rows256 = a.view({kElems / 256, 256}), rows1024 = a.view({kElems / 1024, 1024});
  Tensor r;
  std::vector<BandwidthCase> cases = {
      {"memcpy (baseline, one chunk per thread)", 2 * arr, chunked_memcpy(dst.data(), a.data(), kElems)},
      {"memcpy (single call)", 2 * arr, [&] { std::memcpy(dst.data(), a.data(), (size_t)arr); }},
      {"Tensor::clone (contiguous)", 2 * arr, [&] { r = Tensor(); r = a.clone(); }},
      {"contiguous() of a transposed (1024,8192) view", 2 * arr, [&] { r = Tensor(); r = wide.contiguous(); }},
      {"add(a, b), same shape", 3 * arr, [&] { r = Tensor(); r = add(a, b); }},
      {"softmax, rows of 256", 2 * arr, [&] { r = Tensor(); r = softmax(rows256); }},
      {"softmax, rows of 1024", 2 * arr, [&] { r = Tensor(); r = softmax(rows1024); }},
  };
  report_bandwidth("bandwidth", cases, threads, reps, out);
}

// ---------------------------------------------------------------- (c) norms

// Forward then backward of each fused norm on x (N, C), N * C = kElems. Bytes counted
// per the kernels' arrays: every (N, C) array read or written is N C floats, every
// per-row statistic N floats, every per-channel parameter or gradient C floats.
// rows_per_call 0: each call covers the 32 MiB buffer (rows = 8 M elements / C), a
// stream from DRAM; else that many rows per call (2048: a training step's batch of
// tokens, whose rows sit in L2/L3).
void bench_norms(int threads, int reps, std::vector<JsonRecord>& out, int64_t rows_per_call) {
  std::printf(
      "\n(c) norm kernels, forward + backward, %d thread%s, %s; ratio to memcpy of as many bytes in the same run\n",
      threads, threads > 1 ? "s" : "",
      rows_per_call > 0 ? (std::to_string(rows_per_call) + " rows per call").c_str() : "32 MiB per tensor");
  std::printf("%-44s %8s %9s %8s %7s %5s\n", "kernel (rows x cols)", "MiB mv", "ms", "GB/s", "ratio", "reps");
  Generator gen(3);
  Tensor src = gen.normal({kElems}), dst = Tensor::zeros({kElems});
  for (int64_t C : {128, 384, 768, 1536}) {
    const int64_t N = rows_per_call > 0 ? rows_per_call : kElems / C;
    Tensor x = gen.normal({N, C}, 0.5f, 2.0f), dy = gen.normal({N, C});
    Tensor gamma = gen.normal({C}, 1.0f, 0.1f), beta = gen.normal({C}, 0.0f, 0.1f);
    Tensor alpha = Tensor::from_vector({0.5f}, {1}), lambda = Tensor::from_vector({1.0f}, {1});
    Tensor denom = gen.uniform({N}, 1.0f, 3.0f);
    const float eps = 1e-5f, kappa = 10.0f;
    const double f = sizeof(float), nc = (double)(N * C) * f, n = (double)N * f, c = (double)C * f;
    // The results are kept in these, dropped before each call so the allocator reuses them.
    LayerNormForward lf = layernorm_forward(x, gamma, beta, eps);
    RMSNormForward rf = rmsnorm_forward(x, gamma, Tensor(), eps);
    BHyTForward bf = bhyt_forward(x, gamma, lambda, kappa, eps);
    LayerNormGrads lg;
    RMSNormGrads rg;
    DyTGrads dg;
    BHyTGrads bg;
    BHyTDenomGrads bdg;
    Tensor y;
    char shape[48];
    std::snprintf(shape, sizeof shape, " (%lld x %lld)", (long long)N, (long long)C);
    const std::string s = shape;
    std::vector<BandwidthCase> cases = {
        {"memcpy (baseline)", 2 * nc, chunked_memcpy(dst.data(), src.data(), N * C)},
        // fwd: x, gamma, beta -> y, mean, rstd; bwd: dy, x, gamma, mean, rstd -> dx, dgamma, dbeta
        {"layernorm fwd+bwd" + s, (2 * nc + 2 * c + 2 * n) + (3 * nc + c + 2 * n + 2 * c),
         [&] {
           lf = LayerNormForward();
           lg = LayerNormGrads();
           lf = layernorm_forward(x, gamma, beta, eps);
           lg = layernorm_backward(dy, x, gamma, lf.mean, lf.rstd);
         }},
        // fwd: x, gamma -> y, rstd; bwd: dy, x, gamma, rstd -> dx, dgamma
        {"rmsnorm fwd+bwd" + s, (2 * nc + c + n) + (3 * nc + c + n + c),
         [&] {
           rf = RMSNormForward();
           rg = RMSNormGrads();
           rf = rmsnorm_forward(x, gamma, Tensor(), eps);
           rg = rmsnorm_backward(dy, x, gamma, rf.rstd, false);
         }},
        // fwd: x, gamma, beta -> y; bwd: dy, x, gamma -> dx, dgamma, dbeta (alpha is one float)
        {"dyt fwd+bwd" + s, (2 * nc + 2 * c) + (3 * nc + 3 * c),
         [&] {
           y = Tensor();
           dg = DyTGrads();
           y = dyt_forward(x, alpha, gamma, beta);
           dg = dyt_backward(dy, x, alpha, gamma);
         }},
        // fwd: x, gamma -> y, mean, sigma; bwd: dy, x, gamma, mean, sigma -> dx, dgamma
        {"bhyt (exact) fwd+bwd" + s, (2 * nc + c + 2 * n) + (3 * nc + c + 2 * n + c),
         [&] {
           bf = BHyTForward();
           bg = BHyTGrads();
           bf = bhyt_forward(x, gamma, lambda, kappa, eps);
           bg = bhyt_backward(dy, x, gamma, lambda, bf.mean, bf.sigma, kappa);
         }},
        // fwd: x, denom, gamma -> y; bwd: dy, x, denom, gamma -> dx, ddenom, dgamma
        {"bhyt (given denom) fwd+bwd" + s, (2 * nc + n + c) + (3 * nc + 2 * n + 2 * c),
         [&] {
           y = Tensor();
           bdg = BHyTDenomGrads();
           y = bhyt_denom_forward(x, denom, gamma, lambda);
           bdg = bhyt_denom_backward(dy, x, denom, gamma, lambda);
         }},
    };
    report_bandwidth("norms", cases, threads, reps, out);
  }
}

// ---------------------------------------------------------------- (d) attention

// Forward + backward of causal attention on the head views of a (B, T, 3C) qkv tensor,
// as nn/attention.cpp makes them: the composite matmul -> attention_softmax -> matmul
// (per-head sgemm calls and a (B, H, T, T) probability tensor) against the fused op.
// Peak memory: the allocator's peak bytes in use above what was in use before, over one
// forward + backward (inputs not counted).
void bench_attention(int threads, int reps, std::vector<JsonRecord>& out) {
  std::printf("\n(d) causal attention, forward + backward, %d thread%s: median ms, composite (matmul, "
              "attention_softmax, matmul) and fused (ag::attention);\n    speed-up = composite / fused time, the "
              "median of its value in each repetition; peak MiB above the inputs\n",
              threads, threads > 1 ? "s" : "");
  std::printf("%-6s %4s %3s %4s %5s %13s %9s %9s %14s %10s\n", "heads", "B", "H", "hd", "T", "composite ms",
              "fused ms", "speed-up", "composite MiB", "fused MiB");
  struct HeadShape {
    const char* name;
    int64_t B, H, hd;
  };
  Generator gen(4);
  for (const HeadShape& hs : {HeadShape{"tiny", 16, 4, 32}, HeadShape{"small", 8, 6, 64}}) {
    for (int64_t T : {64, 128, 256, 512, 1024}) {
      const int64_t C = hs.H * hs.hd;
      const Tensor qkv = gen.normal({hs.B, T, 3 * C}), dout = gen.normal({hs.B, hs.H, T, hs.hd});
      auto head_view = [&](int part) {
        return Var(qkv.slice(2, part * C, (part + 1) * C).reshape({hs.B, T, hs.H, hs.hd}).permute({0, 2, 1, 3}),
                   true);
      };
      Var q = head_view(0), k = head_view(1), v = head_view(2);
      const float scale = 1.0f / std::sqrt((float)hs.hd);
      auto run_composite = [&] {
        Var probs = ag::attention_softmax(ag::matmul(q, k, false, true), scale, true);
        ag::matmul(probs, v).backward(dout);
      };
      auto run_fused = [&] { ag::attention(q, k, v, scale, true).backward(dout); };
      auto clear_grads = [&] {
        q.zero_grad();
        k.zero_grad();
        v.zero_grad();
      };
      auto peak_mib = [&](const std::function<void()>& run) {
        clear_grads();
        const int64_t before = allocator_stats(Device::CPU).in_use_bytes;
        allocator_reset_peak(Device::CPU);
        run();
        return (double)(allocator_stats(Device::CPU).peak_in_use_bytes - before) / 1048576.0;
      };
      const double composite_mib = peak_mib(run_composite), fused_mib = peak_mib(run_fused);
      // the leaves' gradients accumulate over repetitions; each call's work is the same
      const Timings tm = time_interleaved({run_composite, run_fused}, reps, 2 * kGroupBudget);
      std::printf("%-6s %4lld %3lld %4lld %5lld %13.3f %9.3f %9.2f %14.1f %10.1f\n", hs.name, (long long)hs.B,
                  (long long)hs.H, (long long)hs.hd, (long long)T, tm.median_s[0] * 1e3, tm.median_s[1] * 1e3,
                  tm.ratio[1], composite_mib, fused_mib);
      out.push_back(JsonRecord()
                        .str("section", "attention")
                        .str("heads", hs.name)
                        .num("threads", threads)
                        .num("B", (double)hs.B)
                        .num("H", (double)hs.H)
                        .num("hd", (double)hs.hd)
                        .num("T", (double)T)
                        .num("composite_ms", tm.median_s[0] * 1e3)
                        .num("fused_ms", tm.median_s[1] * 1e3)
                        .num("speedup", tm.ratio[1])
                        .num("composite_peak_mib", composite_mib)
                        .num("fused_peak_mib", fused_mib)
                        .num("reps", tm.reps));
      allocator_release_cached(Device::CPU);  // the composite's (T, T) blocks are not reused by the next shape
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  configure_runtime(argv);
  FlagParser p("bench_ops", "GFLOP/s of nl::matmul against direct sgemm, GB/s of copies, add, softmax and the norm "
                            "kernels against memcpy, and fused attention against the composite it replaced.");
  std::vector<int64_t> thread_counts = {1, 2};
  add_thread_counts_flag(p, thread_counts);
  int64_t reps_flag = 15;
  p.integer("--reps", reps_flag, 1, 100000, "timed repetitions per kernel (the median is reported)");
  bool quick = false;
  add_quick_flag(p, quick);
  std::string json_path, wanted = "abcd";
  add_json_flag(p, json_path);
  p.text("--sections", wanted, "which sections to run: a (matmul), b (bandwidth), c (norm kernels), d (attention)");
  try {
    if (!p.parse(argc, argv)) return 0;
    const int reps = quick ? 5 : (int)reps_flag;
    std::printf("bench_ops: medians of %d repetitions; thread counts:", reps);
    for (int t : thread_counts) std::printf(" %d", t);
    std::printf("; load average %s; %s\n", load_average().c_str(), blas_kernels().c_str());

    // tiny: L4 C128 T64 B16; small: L6 C384 T256 B8; byte vocabulary V = 256
    std::vector<MatmulCase> cases = step_cases("tiny", 16 * 64, 128, 256);
    for (const auto& c : step_cases("small", 8 * 256, 384, 256)) cases.push_back(c);

    std::vector<JsonRecord> mm, bw, at;
    std::vector<JsonRecord> shares;
    auto section = [&](const std::string& name, int t, const std::function<void()>& run) {
      CoreShare share(t);
      run();
      const double s = share.get();
      std::printf("    cores held by this process during (%s): %.0f %%%s\n", name.c_str(), 100 * s,
                  s < 0.9 ? "  <- another process took a core: rerun for trustworthy figures" : "");
      shares.push_back(JsonRecord().str("section", name).num("threads", t).num("core_share", s));
    };
    for (int t : thread_counts) {
      set_num_threads(t);
      NL_CHECK(num_threads() == t, "asked for ", t, " threads, OpenMP gives ", num_threads());
      if (wanted.find('a') != std::string::npos) section("a", t, [&] { bench_matmul(cases, t, reps, mm); });
      if (wanted.find('b') != std::string::npos) section("b", t, [&] { bench_bandwidth(t, reps, bw); });
      if (wanted.find('c') != std::string::npos) section("c", t, [&] {
          bench_norms(t, reps, bw, 0);
          bench_norms(t, reps, bw, 2048);
        });
      if (wanted.find('d') != std::string::npos) section("d", t, [&] { bench_attention(t, reps, at); });
    }
    if (!json_path.empty())
      write_json(json_path, {{"benchmark", "bench_ops"},
                             {"reps", reps},
                             {"threads", thread_counts},
                             {"load_average_at_end", load_average()},
                             {"matmul", json_list(mm)},
                             {"bandwidth", json_list(bw)},
                             {"attention", json_list(at)},
                             {"core_share", json_list(shares)}});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_ops: %s\n", e.what());
    return 2;
  }
  return 0;
}
