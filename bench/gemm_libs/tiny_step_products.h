// The matrix products of one training step of the `tiny` GPT (../shared/BENCHMARKS.md:
// 4 layers, width 128, 4 heads of 32, context 64, batch 16: 1024 tokens; 256 byte
// classes, tied head), as row-major C (m x n) = op(A) op(B) with the transposes normlab
// passes: a linear layer is y = x W^T (W stored out x in), so its forward is (N, T), its
// input gradient dy W (N, N) and its weight gradient dy^T x (T, N). Attention's products
// run once per (sequence, head): 64 of each, Q, K and V read with stride 3C out of qkv.
// The list is what bench_gemm_libs times with each library.
#pragma once
#include <cstdint>
#include <vector>

namespace nl::bench {

struct Product {
  const char* name;
  int64_t count;  // products of this shape in one step (per layer x layers, or per head x heads x batch)
  bool trans_a, trans_b;
  int64_t m, n, k;
  int64_t lda, ldb, ldc;
};

inline std::vector<Product> tiny_step_products() {
  constexpr int64_t N = 1024, C = 128, L = 4, V = 256, T = 64, H = 64, D = 32;  // H: 16 sequences x 4 heads
  return {
      {"qkv forward", L, false, true, N, 3 * C, C, C, C, 3 * C},
      {"qkv input grad", L, false, false, N, C, 3 * C, 3 * C, C, C},
      {"qkv weight grad", L, true, false, 3 * C, C, N, 3 * C, C, C},
      {"attn proj forward", L, false, true, N, C, C, C, C, C},
      {"attn proj input grad", L, false, false, N, C, C, C, C, C},
      {"attn proj weight grad", L, true, false, C, C, N, C, C, C},
      {"mlp fc forward", L, false, true, N, 4 * C, C, C, C, 4 * C},
      {"mlp fc input grad", L, false, false, N, C, 4 * C, 4 * C, C, C},
      {"mlp fc weight grad", L, true, false, 4 * C, C, N, 4 * C, C, C},
      {"mlp proj forward", L, false, true, N, C, 4 * C, 4 * C, 4 * C, C},
      {"mlp proj input grad", L, false, false, N, 4 * C, C, C, 4 * C, 4 * C},
      {"mlp proj weight grad", L, true, false, C, 4 * C, N, C, 4 * C, 4 * C},
      {"head forward", 1, false, true, N, V, C, C, C, V},
      {"head input grad", 1, false, false, N, C, V, V, C, C},
      {"head weight grad", 1, true, false, V, C, N, V, C, C},
      {"attn scores q k^T", L * H, false, true, T, T, D, 3 * C, 3 * C, T},
      {"attn out p v", L * H, false, false, T, D, T, T, 3 * C, C},
      {"attn grad dp = do v^T", L * H, false, true, T, T, D, C, 3 * C, T},
      {"attn grad dv = p^T do", L * H, true, false, T, D, T, T, C, 3 * C},
      {"attn grad dq = ds k", L * H, false, false, T, D, T, T, 3 * C, 3 * C},
      {"attn grad dk = ds^T q", L * H, true, false, T, D, T, T, 3 * C, 3 * C},
  };
}

}  // namespace nl::bench
