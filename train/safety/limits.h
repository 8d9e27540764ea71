// The bounds every run setting is checked against (train/flags/families.h), and the
// memory estimate: before anything is allocated, what a run will hold is added up from
// every setting that scales it (the model's sizes, from flags or from a checkpoint's
// metadata; the batch; the validation batches; a probe's batch; the files read whole)
// and compared with the memory this process may use. The upper bounds are far beyond
// what this project trains; they stop a typo (a sign, an extra zero) from becoming a run
// that allocates the machine's memory or trains on garbage.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/gpt.h"
#include "nn/vit.h"

namespace nl {

constexpr int64_t kMaxSteps = 1000000000;       // steps, warmup, evaluation and checkpoint intervals
constexpr int64_t kMaxLayers = 256;
constexpr int64_t kMaxDim = 16384;
constexpr int64_t kMaxBatch = 1 << 20;
constexpr int64_t kMaxThreads = 1024;

// One part of a run's memory: what sets its size, as the message names it ("--eval-batches
// 1000000 (the fixed validation batches)"), and its bytes.
struct MemoryTerm {
  std::string what;
  double bytes = 0;
};

// What the models hold, roughly (no more than 1.25x below the measured peak nor 2.5x above
// it, tests/train/test_memory_estimate.cpp; the terms of a check):
// parameters; the bytes of one forward over `rows` rows (sequences of the context, or
// images), `training`: with everything the backward pass keeps, else the peak of a
// forward that keeps nothing (an evaluation, a probe). Model state is
// kStateBytesPerParameter per parameter: values, gradients, the two AdamW moments (16),
// and each gradient as its op makes it, before it is added into the flat buffer (8;
// measured: 19-21 bytes a parameter per layer of width 512).
constexpr double kStateBytesPerParameter = 24;
double gpt_parameters(const GPTConfig& m);
double gpt_forward_bytes(const GPTConfig& m, int64_t rows, bool training);
double vit_parameters(const ViTConfig& m);
double vit_forward_bytes(const ViTConfig& m, int64_t rows, bool training);

struct GPTRunConfig;
struct ViTRunConfig;
// The terms of one training run: the model's state (parameters, gradients, moments),
// --batch (what the backward keeps), the evaluation (--eval-batches / --eval-batch), the
// data read whole, and the files --resume and --init-from read whole.
std::vector<MemoryTerm> gpt_run_memory(const GPTRunConfig& c);
std::vector<MemoryTerm> vit_run_memory(const ViTRunConfig& c);

// The size of a file that will be read whole (0 when there is none: that error comes
// when it is read).
double file_bytes(const std::string& path);
// The regular files at the top of a folder, together (0 when there is none).
double folder_bytes(const std::string& dir);

// The memory this process may use: the smallest of the machine's physical memory, what
// it has available now (MemAvailable: a run needing more makes it swap until the kernel
// kills something), its control group's limit (memory.max), and what the address-space
// limit (ulimit -v) leaves beside what is mapped now; `what` names the bound that set it.
struct MemoryBound {
  double bytes = 0;
  std::string what;
};
MemoryBound memory_bound();

// Throws one line when the terms together exceed memory_bound(), naming the total, the
// bound, and the largest terms with their GiB:
//   the run needs about 15.4 GiB, more than the 23.5 GiB of this machine's memory:
//   --eval-batches 1000000 (the fixed validation batches) 15.3 GiB, ...
// The last terms checked are kept for memory_estimate_note().
void check_memory_estimate(const std::vector<MemoryTerm>& terms);

// For an allocation that failed anyway (the estimate is rough): "the run was estimated
// at about 1.2 GiB, the most for --batch 16 ... (0.9 GiB)", or "" before any estimate.
std::string memory_estimate_note();

// "12.3 GiB", one decimal.
std::string gib(double bytes);

}  // namespace nl
