// bench_fold: what folding LayerNorm into CBWC + RMSNorm (nn/fold.h) buys at inference.
//   (a) one forward pass (NoGradGuard, eval mode) of an ln GPT and of its folded cbwc
//       form, for the `tiny` and `small` configurations of BENCHMARKS.md at batch 1 and 8
//       and sequence 64 and 256: ms per forward, tokens/s, the speed-up, and the share
//       of the ln forward spent in its 2L+1 LayerNorm kernels (timed alone at that shape);
//   (b) the norm kernels alone: layernorm_forward against rmsnorm_forward with beta
//       (tensor/norms.h) on 8192 rows of 128 to 1536 channels, with the bytes they move.
// The folded model uses its centred weights as they are (Linear::set_folded) and pays
// one centring of the embedding sum that the ln model does not have. The two sides of
// every ratio run interleaved in the same repetitions; figures are medians. Nothing
// passes or fails on time.
//   build/release/bench_fold [--threads 2] [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "nn/fold.h"
#include "tensor/norms.h"
#include "tensor/threads.h"
#include "train/flags/flag_parser.h"
#include "bench/bench_util.h"

using namespace nl;
using namespace nl::bench;

namespace {

// bench_fold's samples last about 2 ms and each group is held to its budget.
Timings interleaved(const std::vector<std::function<void()>>& fns, int reps, double budget_s) {
  return time_interleaved(fns, std::max(reps, 5), budget_s, 2e-3);
}

struct ModelConfig {
  std::string name;
  int64_t layers, dim, heads;
};

void bench_models(bool quick) {
  const std::vector<ModelConfig> configs = {{"tiny", 4, 128, 4}, {"small", 6, 384, 6}};
  const std::vector<int64_t> batches = {1, 8}, seqs = {64, 256};
  std::printf("\n(a) inference: one forward pass of the ln GPT and of its folded cbwc form (NoGradGuard)\n");
  std::printf("%-6s %2s %4s  %9s %9s  %9s %9s  %8s  %10s  %4s\n", "config", "B", "T", "ln ms", "fold ms", "ln tok/s",
              "fold tok/s", "speed-up", "LN share", "reps");
  for (const auto& mc : configs) {
    GPTConfig c;
    c.layers = mc.layers;
    c.dim = mc.dim;
    c.heads = mc.heads;
    c.context = 256;  // room for both sequence lengths
    c.norm.name = "ln";
    Generator gen(1);
    GPT ln(c, gen);
    std::shared_ptr<GPT> folded = fold_gpt(ln, detect_gpt(ln), /*weights_folded=*/true);
    ln.eval();
    folded->eval();
    NoGradGuard no_grad;
    for (int64_t B : batches)
      for (int64_t T : seqs) {
        std::vector<int32_t> ids(B * T);
        for (auto& id : ids) id = (int32_t)gen.below((uint32_t)c.vocab);
        const Tensor x = Tensor::from_ints(ids, {B, T});
        // the ln model's norm work alone: 2L+1 LayerNorm kernels on (B T, C)
        const Tensor rows = gen.normal({B * T, c.dim}), gamma = Tensor::ones({c.dim}), beta = Tensor::zeros({c.dim});
        const int sites = 2 * (int)c.layers + 1;
        const double budget = quick ? 0.5 : (mc.name == "small" ? 4.0 : 1.5);
        Timings t = interleaved({[&] { ln.forward(x); }, [&] { folded->forward(x); },
                                 [&] {
                                   for (int s = 0; s < sites; ++s) layernorm_forward(rows, gamma, beta, 1e-5f);
                                 }},
                                quick ? 5 : 30, budget);
        const double tokens = (double)(B * T);
        std::printf("%-6s %2lld %4lld  %9.3f %9.3f  %9.0f %9.0f  %+7.1f%%  %9.1f%%  %4d\n", mc.name.c_str(),
                    (long long)B, (long long)T, 1e3 * t.median_s[0], 1e3 * t.median_s[1], tokens / t.median_s[0],
                    tokens / t.median_s[1], 100.0 * (t.ratio[1] - 1.0), 100.0 * t.median_s[2] / t.median_s[0], t.reps);
      }
  }
  std::printf("speed-up: median over repetitions of t(ln) / t(folded) - 1. LN share: time of the ln model's\n"
              "2L+1 LayerNorm kernels alone over its whole forward: the most that a free norm could save.\n");
}

void bench_kernels(bool quick) {
  const int64_t N = 8192;
  std::printf("\n(b) norm kernels alone, forward, %lld rows: LayerNorm vs RMSNorm + beta\n", (long long)N);
  std::printf("%5s  %9s %9s  %8s  %9s %9s  %4s\n", "C", "LN ms", "RMS ms", "speed-up", "LN GB/s", "RMS GB/s", "reps");
  for (int64_t C : {128, 384, 768, 1536}) {
    Generator gen(2);
    const Tensor x = gen.normal({N, C}, 0.5f, 1.0f), gamma = gen.normal({C}, 1.0f, 0.1f), beta = gen.normal({C});
    Timings t = interleaved({[&] { layernorm_forward(x, gamma, beta, 1e-5f); },
                             [&] { rmsnorm_forward(x, gamma, beta, 1e-5f); }},
                            quick ? 5 : 41, quick ? 0.3 : 2.0);
    // bytes each must move: read x, write y (the per-row statistics are negligible)
    const double bytes = 2.0 * (double)(N * C) * sizeof(float);
    std::printf("%5lld  %9.3f %9.3f  %+7.1f%%  %9.1f %9.1f  %4d\n", (long long)C, 1e3 * t.median_s[0],
                1e3 * t.median_s[1], 100.0 * (t.ratio[1] - 1.0), bytes / t.median_s[0] / 1e9,
                bytes / t.median_s[1] / 1e9, t.reps);
  }
  std::printf("speed-up: median of t(LN) / t(RMS) - 1; GB/s: (read x + write y) / time.\n");
}

}  // namespace

int main(int argc, char** argv) {
  configure_runtime(argv);
  FlagParser p("bench_fold",
               "Inference speed of an ln GPT against its folded cbwc form, and LayerNorm vs RMSNorm kernels.");
  std::vector<int64_t> thread_counts = {2};
  add_thread_counts_flag(p, thread_counts);
  bool quick = false;
  add_quick_flag(p, quick);
  try {
    if (!p.parse(argc, argv)) return 0;
    const auto t0 = Clock::now();
    for (int64_t threads : thread_counts) {
      set_num_threads((int)threads);
      std::printf("bench_fold: %d threads%s\n", num_threads(), quick ? ", quick" : "");
      bench_models(quick);
      bench_kernels(quick);
    }
    std::printf("\ntotal %.0f s\n", std::chrono::duration<double>(Clock::now() - t0).count());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_fold: error: %s\n", e.what());
    return 2;
  }
}
