// Sums down the columns of a row-major matrix (bias gradients, the norms' per-chunk
// partials) whose bits do not follow the thread count: the columns are cut into blocks,
// each block runs on one thread and adds its rows in row order into its own double
// accumulators, so every column is summed in the same order whatever the blocks' width.
// That lets the width follow the thread count: one block per thread, and on one thread
// whole rows, which the loops read as one stream each. The GELU MLP's backward pass over
// the tiny step's (1024 x 512) activations, in blocks of 128 columns before, went from
// 4.5 % to 2.3 % of a 1-thread perf profile so, on an AVX-512 EPYC (docs/performance.md,
// "Column sums").
#pragma once
#include <algorithm>
#include <cstdint>

#include "tensor/threads.h"

namespace nl::cpu {

// The widest block: its double accumulators (32 KiB) stay in L1 or L2, on the stack.
constexpr int64_t kMaxColumnBlock = 4096;

// The blocks' width: one block per thread when `parallel`, else whole rows; a multiple of
// 16 from 16 to kMaxColumnBlock.
inline int64_t column_block(int64_t cols, bool parallel) {
  const int64_t threads = parallel ? std::max(1, num_threads()) : 1;
  const int64_t per_thread = (cols + threads - 1) / threads;
  return std::clamp<int64_t>((per_thread + 15) / 16 * 16, 16, kMaxColumnBlock);
}

// fn(j0, j1, acc) for each block of columns [j0, j1), the blocks shared out over the
// threads when `parallel`; acc is the block's j1 - j0 accumulators, zeroed.
template <class Fn>
void for_column_blocks(int64_t cols, bool parallel, const Fn& fn) {
  const int64_t block = column_block(cols, parallel);
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t j0 = 0; j0 < cols; j0 += block) {
    const int64_t j1 = std::min(cols, j0 + block);
    double acc[kMaxColumnBlock];  // on the stack: no allocation inside a training step's loops
    std::fill(acc, acc + (j1 - j0), 0.0);
    fn(j0, j1, acc);
  }
}

}  // namespace nl::cpu
