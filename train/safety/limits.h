// The bounds every run setting is checked against (train/flags/families.h), and the
// memory check of a run's size before anything is allocated. The upper bounds are far
// beyond what this project trains; they stop a typo (a sign, an extra zero) from
// becoming a run that allocates the machine's memory or trains on garbage.
#pragma once
#include <cstdint>
#include <string>

namespace nl {

constexpr int64_t kMaxSteps = 1000000000;       // steps, warmup, evaluation and checkpoint intervals
constexpr int64_t kMaxLayers = 256;
constexpr int64_t kMaxDim = 16384;
constexpr int64_t kMaxBatch = 1 << 20;
constexpr int64_t kMaxThreads = 1024;

// Throws when `bytes` (an estimate of what a run allocates) exceeds this machine's
// physical memory, naming what needs it and the flags that set its size.
void check_memory_estimate(double bytes, const std::string& what);

}  // namespace nl
