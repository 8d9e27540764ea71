// bench_gpu (built with make CUDA=1 only): one full GPT training step on the GPU
// (batch copied from the host, forward, backward, gradient clipping, AdamW as one
// kernel), as train_gpt --device cuda runs it, for the `small` and `gpt2-124M`
// configurations of ../shared/BENCHMARKS.md: median ms/step after one warm-up step,
// tokens/s, GFLOP/s by BENCHMARKS.md's formula, cudaMalloc calls after the first step
// (expected 0) and peak GPU memory in use. Then matmul GFLOP/s of the nl::matmul
// wrapper against one direct cublasSgemm call on the same shapes. Matmuls are plain
// fp32 unless --tf32 is given; the output says which. Nothing passes or fails on time.
//   build/release-cuda/bench_gpu [--configs small,gpt2-124M] [--norm ln] [--steps 10] [--tf32]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "nn/gpt.h"
#include "tensor/allocator.h"
#include "tensor/cuda/kernels.h"
#include "train/flags/flag_parser.h"
#include "train/loop/trainer.h"

using namespace nl;
using namespace nl::bench;

namespace {

struct GpuConfig {
  std::string name;
  int64_t layers, dim, heads, context, batch, vocab;
};

const std::vector<GpuConfig> kConfigs = {
    {"small", 6, 384, 6, 256, 8, 256},
    {"gpt2-124M", 12, 768, 12, 1024, 8, 256},
};

// BENCHMARKS.md: 6 N_mm B T + 6 L C T B T, N_mm = 12 L C^2 + V C
double step_flops(const GpuConfig& c) {
  const double L = (double)c.layers, C = (double)c.dim, T = (double)c.context, B = (double)c.batch;
  return 6.0 * (12.0 * L * C * C + (double)c.vocab * C) * B * T + 6.0 * L * C * T * B * T;
}

Tensor random_ids(Generator& gen, int64_t B, int64_t T, int64_t V) {
  std::vector<int32_t> v((size_t)(B * T));
  for (auto& id : v) id = (int32_t)gen.below((uint32_t)V);
  return Tensor::from_ints(v, {B, T});
}

void bench_model(const GpuConfig& c, const std::string& norm, int steps) {
  Generator gen(1337), data(7);
  GPT model(bench_gpt_config(c, norm), gen);
  model.to(Device::CUDA);
  FlatParameters flat = flatten_parameters(model);
  AdamW optim(flat, AdamWConfig{});
  NonFiniteGuard guard(NonFiniteAction::Stop, nullptr);
  const Tensor x = random_ids(data, c.batch, c.context, c.vocab), y = random_ids(data, c.batch, c.context, c.vocab);
  std::vector<double> times;
  int64_t allocs_after_first = 0;
  float loss_value = 0;
  allocator_reset_peak(Device::CUDA);
  for (int step = 0; step <= steps; ++step) {
    cuda::synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    RunEnd end;
    const StepOutcome s = train_step([&] { return model.loss(x.to(Device::CUDA), y.to(Device::CUDA)); }, flat, optim,
                                     1e-4f, 1.0f, guard, step + 1, end);
    NL_CHECK(s.grad_norm, "bench_gpu: ", end.fault);
    loss_value = s.loss;  // the loss's item() waited for the step
    const double dt = seconds_since(t0);
    if (step == 0) allocs_after_first = allocator_stats(Device::CUDA).system_allocs;
    else times.push_back(dt);
  }
  const double ms = 1e3 * median(times);
  const AllocatorStats st = allocator_stats(Device::CUDA);
  std::printf("%-10s %-5s params %6.1fM  %8.1f ms/step  %9.0f tok/s  %7.0f GFLOP/s  cudaMalloc after step 1: %lld"
              "  peak %.0f MiB  loss %.3f\n",
              c.name.c_str(), norm.c_str(), (double)flat.values.numel() / 1e6, ms,
              (double)(c.batch * c.context) / (ms / 1e3), step_flops(c) / (ms / 1e3) / 1e9,
              (long long)(st.system_allocs - allocs_after_first), (double)st.peak_in_use_bytes / (1024.0 * 1024.0),
              loss_value);
  std::fflush(stdout);
}

// GFLOP/s of C (M, N) = A (M, K) @ B (K, N): the wrapper, then one direct cublasSgemm
void bench_matmul(int64_t M, int64_t K, int64_t N, int reps) {
  Generator gen(3);
  const Tensor a = gen.normal({M, K}).to(Device::CUDA), b = gen.normal({K, N}).to(Device::CUDA);
  Tensor c = Tensor::empty({M, N}, DType::F32, Device::CUDA);
  auto time_it = [&](auto fn) {
    fn();  // warm-up (and cuBLAS's first-call setup)
    cuda::synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) fn();
    cuda::synchronize();
    return 2.0 * (double)M * (double)N * (double)K * reps / seconds_since(t0) / 1e9;
  };
  const double wrapper = time_it([&] { c = matmul(a, b); });
  const double direct = time_it([&] { cuda::sgemm_direct(a.data(), b.data(), c.data(), M, N, K); });
  std::printf("matmul %5lld x %5lld x %5lld   wrapper %8.0f GFLOP/s   direct cublasSgemm %8.0f GFLOP/s   ratio %.3f\n",
              (long long)M, (long long)K, (long long)N, wrapper, direct, wrapper / direct);
}

}  // namespace

int main(int argc, char** argv) {
  FlagParser p("bench_gpu", "GPT training steps and matmuls on the GPU (median ms/step, tok/s, GFLOP/s).");
  std::vector<std::string> configs = {"small", "gpt2-124M"}, norms = {"ln"};
  add_configs_flag(p, configs, {"small", "gpt2-124M"},
                   "configurations: small (L6 C384 T256 B8), gpt2-124M (L12 C768 T1024 B8)");
  add_norms_list_flag(p, norms);
  int64_t steps = 10;
  add_timed_steps_flag(p, steps, "timed steps after one warm-up step");
  bool tf32 = false;
  p.toggle("--tf32", tf32, "let cuBLAS use TF32 tensor cores (default: plain fp32)");
  try {
    if (!p.parse(argc, argv)) return 0;
    NL_CHECK(cuda_available(), "bench_gpu: no GPU (", cuda::device_description(), ")");
    cuda::set_tf32(tf32);
    std::printf("bench_gpu on %s, matmul math: %s\n", cuda::device_description().c_str(),
                cuda::tf32() ? "TF32 tensor cores" : "plain fp32 (no TF32)");
    for (const auto& name : configs)
      for (const auto& norm : norms)
        bench_model(*std::find_if(kConfigs.begin(), kConfigs.end(), [&](const GpuConfig& c) { return c.name == name; }),
                    norm, (int)steps);
    // the shapes of gpt2-124M's linear layers (B T = 8192 rows)
    bench_matmul(8192, 768, 2304, 20);
    bench_matmul(8192, 768, 3072, 20);
    bench_matmul(8192, 3072, 768, 20);
    bench_matmul(4096, 4096, 4096, 10);
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_gpu: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
