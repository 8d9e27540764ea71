// Range checks for run settings, shared by the GPT and ViT runs: each names the flag and
// the range it must lie in, so that a typo (a sign, an extra zero, "nan") is one error
// line instead of a run that allocates the machine's memory or trains on garbage. The
// upper bounds are far beyond what this project trains; they only stop the absurd.
#pragma once
#include <cstdint>
#include <string>

namespace nl {

constexpr int64_t kMaxSteps = 1000000000;       // steps, warmup, evaluation and checkpoint intervals
constexpr int64_t kMaxLayers = 256;
constexpr int64_t kMaxDim = 16384;
constexpr int64_t kMaxBatch = 1 << 20;
constexpr int64_t kMaxThreads = 1024;

void check_int_flag(const char* flag, int64_t value, int64_t lo, int64_t hi);
// value finite and in [lo, hi]; lo_open excludes lo itself ("must be > 0")
void check_real_flag(const char* flag, double value, double lo, double hi, bool lo_open = false);

// The flags the GPT and ViT runs share, checked against the same ranges.
struct SharedRunFlags {
  int64_t layers, dim, heads, batch, warmup, eval_every, threads, stop_after;
  double lr, min_lr, wd, clip, dyt_alpha0, bhyt_lambda0;
};
void check_shared_run_flags(const SharedRunFlags& f);

// Throws when `bytes` (an estimate of what a run allocates) exceeds this machine's
// physical memory, naming what needs it and the flags that set its size.
void check_memory_estimate(double bytes, const std::string& what);

}  // namespace nl
