// Matrix products whose every output element is summed in the same order at any thread
// count, so that a run writes the same numbers at 1, 2 or N threads.
//
// OpenBLAS does not promise that: it splits a product among its threads by a rule of the
// count, and whether that changes the bits depends on its kernel family: with the
// Haswell kernels (AVX2 machines) every linear product of a demo-sized step did, and a
// train_gpt run wrote other gradient norms and weights at 2 threads than at 1
// (tests/train/test_thread_governor.cpp); with the Cooperlake ones they agreed.
// So OpenBLAS only ever runs on one thread here: each product is cut into output tiles
// chosen from its shape alone, each tile is one single-threaded sgemm over the whole
// inner dimension, and our OpenMP threads share out the tiles.
#pragma once
#include <cblas.h>

#include <cstdint>
#include <functional>

#include "tensor/tensor.h"

namespace nl {

// One row-major product C (m x n) = alpha op(A) op(B) + beta C, as cblas_sgemm takes it.
struct Gemm {
  CBLAS_TRANSPOSE trans_a, trans_b;
  int64_t m, n, k;
  float alpha;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float beta;
  float* c;
  int64_t ldc;
};

// cblas_sgemm on the calling thread alone, wherever it is called from (OpenBLAS's
// OpenMP build follows omp_get_max_threads() outside an active parallel region).
void sgemm_one_thread(const Gemm& g);

// The library whose sgemm each tile calls in this build: "OpenBLAS", or "oneDNN" (GEMM=onednn).
const char* tile_sgemm_library();

// The tile a product of this shape is cut into: `rows` x `cols` of C (the last row and
// column of tiles may be smaller). A function of (m, n, k) only.
struct GemmTile {
  int64_t rows, cols;
};
GemmTile gemm_tile(int64_t m, int64_t n, int64_t k);

// Work on one tile of C right after the sgemm that wrote it, on the same thread, while the
// tile is still in cache (a linear layer's bias and GELU, tensor/cpu/linear.cpp). `tile` is
// its product's Gemm cut to the tile (c, m, n, ldc: the tile's rows and columns); (i0, j0)
// is where the tile starts in its product's C. It may touch that tile's elements only, so
// the result does not depend on which thread ran which tile.
using GemmEpilogue = std::function<void(const Gemm& tile, int64_t i0, int64_t j0)>;

// `count` products of one shape (m, n, k), each cut into its tiles, all tiles of all
// products dealt out over the threads in one parallel loop; `epilogue`, when given, runs
// on each tile after its sgemm.
void sgemm_tiled(const Gemm* products, int64_t count, const GemmEpilogue& epilogue = {});

// nl::matmul (tensor/ops.h) with `epilogue` run on each tile of the output. When the inner
// dimension is 0 the output is zero-filled and given to it as one tile of rows x N.
Tensor matmul_with_epilogue(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b,
                            const GemmEpilogue& epilogue);

}  // namespace nl
