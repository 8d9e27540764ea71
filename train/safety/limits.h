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

// The pieces of a training run's terms, which each model's run adds up (gpt_run_memory in
// train/gpt/gpt_run_config.h, vit_run_memory in train/vit/vit_run_config.h): the model's
// state, named by its flags ("the model's parameters, gradients and AdamW moments
// (--layers 4 --dim 128 --heads 4 --seq 64)"); the rows of the global batch this rank
// trains on; the files --resume and --init-from read whole.
std::string model_memory_what(int64_t layers, int64_t dim, int64_t heads, const std::string& last);
int64_t shard_rows(int64_t batch);
void add_start_files(std::vector<MemoryTerm>& terms, bool resume, const std::string& out_dir,
                     const std::string& init_from);

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
