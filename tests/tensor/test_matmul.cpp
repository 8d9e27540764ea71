// matmul (tensor/cpu/matmul.cpp) against a naive triple loop written here, on random
// data: 2-D, with the trans flags, with transposed / sliced / expanded views, batched,
// with broadcast batch dims, and with a zero inner dimension.
#include <catch2/catch.hpp>

#include <array>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/tensor/tensor_literals.h"
#include "tests/test_util.h"

using Catch::Contains;
using nl::Shape;
using nl::Tensor;
using nl::test::T;

namespace {

std::vector<float> random_values(nl::Generator& gen, int64_t n) {
  std::vector<float> v((size_t)n);
  for (auto& x : v) x = gen.normal();
  return v;
}

// A logical matrix as a function of (batch, row, col), read from plain row-major data,
// so that the reference never goes through a Tensor view.
struct Mat {
  const std::vector<float>* data;
  int64_t rows, cols;
  int64_t batch_stride;     // 0: the same matrix for every batch
  bool stored_transposed;   // data holds the (cols, rows) transpose
  float operator()(int64_t b, int64_t i, int64_t j) const {
    const float* p = data->data() + b * batch_stride;
    return stored_transposed ? p[j * rows + i] : p[i * cols + j];
  }
};

// out[b][i][j] = sum_k A(b, i, k) B(b, k, j), accumulated in double
Tensor naive(const Mat& A, const Mat& B, int64_t batch, const Shape& out_shape) {
  const int64_t M = A.rows, K = A.cols, N = B.cols;
  std::vector<float> out((size_t)(batch * M * N));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += (double)A(b, i, k) * (double)B(b, k, j);
        out[(size_t)((b * M + i) * N + j)] = (float)s;
      }
  return T(out, out_shape);
}

constexpr double kRtol = 1e-4, kAtol = 1e-5;

}  // namespace

TEST_CASE("matmul 2x2 by hand", "[ops]") {
  Tensor a = T({1, 2, 3, 4}, {2, 2}), b = T({5, 6, 7, 8}, {2, 2});
  CHECK_CLOSE(nl::matmul(a, b), T({19, 22, 43, 50}, {2, 2}), 0, 0);
  CHECK_CLOSE(nl::matmul(a, b, true, false), T({26, 30, 38, 44}, {2, 2}), 0, 0);   // a^T b
  CHECK_CLOSE(nl::matmul(a, b, false, true), T({17, 23, 39, 53}, {2, 2}), 0, 0);   // a b^T
  CHECK_CLOSE(nl::matmul(a, b, true, true), T({23, 31, 34, 46}, {2, 2}), 0, 0);    // a^T b^T
  // a row times a column and a column times a row
  CHECK_CLOSE(nl::matmul(T({1, 2, 3}, {1, 3}), T({4, 5, 6}, {3, 1})), T({32}, {1, 1}), 0, 0);
  CHECK_CLOSE(nl::matmul(T({1, 2}, {2, 1}), T({3, 4, 5}, {1, 3})), T({3, 4, 5, 6, 8, 10}, {2, 3}), 0, 0);
}

TEST_CASE("matmul 2-D random against a naive loop", "[ops]") {
  nl::Generator gen(1);
  for (auto [M, K, N] : std::vector<std::array<int64_t, 3>>{{3, 4, 5}, {1, 7, 1}, {17, 33, 9}, {64, 48, 80}}) {
    INFO("M K N = " << M << " " << K << " " << N);
    auto a = random_values(gen, M * K), b = random_values(gen, K * N);
    Tensor expected = naive({&a, M, K, 0, false}, {&b, K, N, 0, false}, 1, {M, N});
    CHECK_CLOSE(nl::matmul(T(a, {M, K}), T(b, {K, N})), expected, kRtol, kAtol);
  }
}

TEST_CASE("matmul with trans flags against a naive loop", "[ops]") {
  nl::Generator gen(2);
  const int64_t M = 5, K = 6, N = 4;
  auto at = random_values(gen, K * M), bt = random_values(gen, N * K), a = random_values(gen, M * K),
       b = random_values(gen, K * N);
  // stored_transposed: the data is the (cols, rows) matrix, so op(X) reads it transposed
  Mat A{&a, M, K, 0, false}, At{&at, M, K, 0, true}, B{&b, K, N, 0, false}, Bt{&bt, K, N, 0, true};
  CHECK_CLOSE(nl::matmul(T(at, {K, M}), T(b, {K, N}), true, false), naive(At, B, 1, {M, N}), kRtol, kAtol);
  CHECK_CLOSE(nl::matmul(T(a, {M, K}), T(bt, {N, K}), false, true), naive(A, Bt, 1, {M, N}), kRtol, kAtol);
  CHECK_CLOSE(nl::matmul(T(at, {K, M}), T(bt, {N, K}), true, true), naive(At, Bt, 1, {M, N}), kRtol, kAtol);
}

TEST_CASE("matmul reads transposed views without flags, and with them", "[ops]") {
  nl::Generator gen(3);
  const int64_t M = 4, K = 7, N = 3;
  auto at = random_values(gen, K * M), bt = random_values(gen, N * K), a = random_values(gen, M * K),
       b = random_values(gen, K * N);
  Tensor a_view = T(at, {K, M}).transpose(0, 1);  // (M, K), strides (1, M)
  Tensor b_view = T(bt, {N, K}).transpose(0, 1);  // (K, N), strides (1, K)
  REQUIRE_FALSE(a_view.is_contiguous());
  Mat A{&a, M, K, 0, false}, At{&at, M, K, 0, true}, B{&b, K, N, 0, false}, Bt{&bt, K, N, 0, true};
  CHECK_CLOSE(nl::matmul(a_view, T(b, {K, N})), naive(At, B, 1, {M, N}), kRtol, kAtol);
  CHECK_CLOSE(nl::matmul(T(a, {M, K}), b_view), naive(A, Bt, 1, {M, N}), kRtol, kAtol);
  CHECK_CLOSE(nl::matmul(a_view, b_view), naive(At, Bt, 1, {M, N}), kRtol, kAtol);
  // a transposed view with the flag set: transposed twice is the stored matrix
  // T(a, (M,K)).transpose is (K, M); with trans_a it is (M, K) again
  CHECK_CLOSE(nl::matmul(T(a, {M, K}).transpose(0, 1), b_view, true, false), naive(A, Bt, 1, {M, N}), kRtol, kAtol);
  CHECK_CLOSE(nl::matmul(a_view, T(b, {K, N}).transpose(0, 1), false, true), naive(At, B, 1, {M, N}), kRtol, kAtol);
}

TEST_CASE("matmul reads sliced and expanded views", "[ops]") {
  nl::Generator gen(4);
  const int64_t M = 3, K = 4, N = 5;
  // rows 0, 2, 4 of a (6, K) matrix: a row stride larger than the row
  auto big = random_values(gen, 6 * K), b = random_values(gen, K * N);
  std::vector<float> a;
  for (int64_t i = 0; i < 6; i += 2)
    for (int64_t k = 0; k < K; ++k) a.push_back(big[i * K + k]);
  Tensor rows = T(big, {6, K}).slice(0, 0, 6, 2);
  Mat A{&a, M, K, 0, false}, B{&b, K, N, 0, false};
  CHECK_CLOSE(nl::matmul(rows, T(b, {K, N})), naive(A, B, 1, {M, N}), kRtol, kAtol);
  // columns 1..4 of a (M, 6) matrix: a row stride of 6 with 4 columns used
  auto wide = random_values(gen, M * 6);
  std::vector<float> a2;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 1; k < 5; ++k) a2.push_back(wide[i * 6 + k]);
  Mat A2{&a2, M, K, 0, false};
  CHECK_CLOSE(nl::matmul(T(wide, {M, 6}).slice(1, 1, 5), T(b, {K, N})), naive(A2, B, 1, {M, N}), kRtol, kAtol);
  // every other column (column stride 2): needs a copy, must still be right
  std::vector<float> a3;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < 6; k += 2) a3.push_back(wide[i * 6 + k]);
  auto b3 = random_values(gen, 3 * N);
  Mat A3{&a3, M, 3, 0, false}, B3{&b3, 3, N, 0, false};
  CHECK_CLOSE(nl::matmul(T(wide, {M, 6}).slice(1, 0, 6, 2), T(b3, {3, N})), naive(A3, B3, 1, {M, N}), kRtol, kAtol);
  // expanded: a column vector repeated across N columns (stride 0)
  auto col = random_values(gen, K);
  std::vector<float> bx;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) bx.push_back(col[k]);
  Mat Bx{&bx, K, N, 0, false};
  CHECK_CLOSE(nl::matmul(T(a, {M, K}), T(col, {K, 1}).expand({K, N})), naive(A, Bx, 1, {M, N}), kRtol, kAtol);
  // expanded rows on the left
  auto row = random_values(gen, K);
  std::vector<float> ax;
  for (int64_t i = 0; i < M; ++i) ax.insert(ax.end(), row.begin(), row.end());
  Mat Ax{&ax, M, K, 0, false};
  CHECK_CLOSE(nl::matmul(T(row, {1, K}).expand({M, K}), T(b, {K, N})), naive(Ax, B, 1, {M, N}), kRtol, kAtol);
}

TEST_CASE("matmul batched (B,M,K) @ (B,K,N)", "[ops]") {
  nl::Generator gen(5);
  const int64_t Bn = 3, M = 4, K = 5, N = 6;
  auto a = random_values(gen, Bn * M * K), b = random_values(gen, Bn * K * N);
  Mat A{&a, M, K, M * K, false}, B{&b, K, N, K * N, false};
  CHECK_CLOSE(nl::matmul(T(a, {Bn, M, K}), T(b, {Bn, K, N})), naive(A, B, Bn, {Bn, M, N}), kRtol, kAtol);
  // with trans flags on batched operands
  auto at = random_values(gen, Bn * K * M), bt = random_values(gen, Bn * N * K);
  Mat At{&at, M, K, M * K, true}, Bt{&bt, K, N, K * N, true};
  CHECK_CLOSE(nl::matmul(T(at, {Bn, K, M}), T(bt, {Bn, N, K}), true, true), naive(At, Bt, Bn, {Bn, M, N}), kRtol,
              kAtol);
  // batched transposed views (the attention pattern q @ k^T)
  CHECK_CLOSE(nl::matmul(T(a, {Bn, M, K}), T(bt, {Bn, N, K}).transpose(1, 2)), naive(A, Bt, Bn, {Bn, M, N}), kRtol,
              kAtol);
  // 4-D batch
  CHECK_CLOSE(nl::matmul(T(a, {1, Bn, M, K}), T(b, {1, Bn, K, N})), naive(A, B, Bn, {1, Bn, M, N}), kRtol, kAtol);
}

TEST_CASE("matmul broadcast batch 3-D @ 2-D", "[ops]") {
  nl::Generator gen(6);
  const int64_t Bn = 3, M = 4, K = 5, N = 2;
  auto a = random_values(gen, Bn * M * K), b = random_values(gen, K * N), bt = random_values(gen, N * K),
       at = random_values(gen, Bn * K * M);
  Mat A{&a, M, K, M * K, false}, B{&b, K, N, 0, false}, Bt{&bt, K, N, 0, true}, At{&at, M, K, M * K, true};
  CHECK_CLOSE(nl::matmul(T(a, {Bn, M, K}), T(b, {K, N})), naive(A, B, Bn, {Bn, M, N}), kRtol, kAtol);
  CHECK_CLOSE(nl::matmul(T(a, {Bn, M, K}), T(bt, {N, K}), false, true), naive(A, Bt, Bn, {Bn, M, N}), kRtol, kAtol);
  CHECK_CLOSE(nl::matmul(T(a, {Bn, M, K}), T(bt, {N, K}).transpose(0, 1)), naive(A, Bt, Bn, {Bn, M, N}), kRtol,
              kAtol);
  CHECK_CLOSE(nl::matmul(T(at, {Bn, K, M}), T(b, {K, N}), true, false), naive(At, B, Bn, {Bn, M, N}), kRtol, kAtol);
  // the left operand a non-contiguous batch: a permuted (M, Bn, K) tensor viewed as (Bn, M, K)
  std::vector<float> perm((size_t)(M * Bn * K));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t bb = 0; bb < Bn; ++bb)
      for (int64_t k = 0; k < K; ++k) perm[(i * Bn + bb) * K + k] = a[(bb * M + i) * K + k];
  CHECK_CLOSE(nl::matmul(T(perm, {M, Bn, K}).permute({1, 0, 2}), T(b, {K, N})), naive(A, B, Bn, {Bn, M, N}), kRtol,
              kAtol);
  // the right operand with batch dims of size 1
  CHECK_CLOSE(nl::matmul(T(a, {Bn, M, K}), T(b, {1, K, N})), naive(A, B, Bn, {Bn, M, N}), kRtol, kAtol);
  // 2-D @ 3-D: the left matrix shared by every batch
  auto a2 = random_values(gen, M * K), b3 = random_values(gen, Bn * K * N);
  Mat A2{&a2, M, K, 0, false}, B3{&b3, K, N, K * N, false};
  CHECK_CLOSE(nl::matmul(T(a2, {M, K}), T(b3, {Bn, K, N})), naive(A2, B3, Bn, {Bn, M, N}), kRtol, kAtol);
  // 2-D @ (1, K, N): the batch dim of size 1 is kept
  CHECK_CLOSE(nl::matmul(T(a2, {M, K}), T(b, {1, K, N})), naive(A2, B, 1, {1, M, N}), kRtol, kAtol);
}

TEST_CASE("matmul broadcast batch (2,1,M,K) @ (3,K,N)", "[ops]") {
  nl::Generator gen(7);
  const int64_t M = 3, K = 4, N = 5;
  auto a = random_values(gen, 2 * M * K), b = random_values(gen, 3 * K * N);
  Tensor out = nl::matmul(T(a, {2, 1, M, K}), T(b, {3, K, N}));
  REQUIRE(out.shape() == Shape{2, 3, M, N});
  // out[i, j] = a[i] @ b[j]
  std::vector<float> expected;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      std::vector<float> ai(a.begin() + i * M * K, a.begin() + (i + 1) * M * K);
      std::vector<float> bj(b.begin() + j * K * N, b.begin() + (j + 1) * K * N);
      auto blk = naive({&ai, M, K, 0, false}, {&bj, K, N, 0, false}, 1, {M, N}).to_vector();
      expected.insert(expected.end(), blk.begin(), blk.end());
    }
  CHECK_CLOSE(out, T(expected, {2, 3, M, N}), kRtol, kAtol);
  // the same through an expanded left operand and with trans_b
  std::vector<float> bt((size_t)(3 * N * K));
  for (int64_t j = 0; j < 3; ++j)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) bt[(j * N + n) * K + k] = b[(j * K + k) * N + n];
  CHECK_CLOSE(nl::matmul(T(a, {2, 1, M, K}).expand({2, 3, M, K}), T(bt, {3, N, K}), false, true),
              T(expected, {2, 3, M, N}), kRtol, kAtol);
}

TEST_CASE("matmul with a zero inner dimension gives zeros", "[ops]") {
  CHECK_CLOSE(nl::matmul(Tensor::zeros({3, 0}), Tensor::zeros({0, 2})), Tensor::zeros({3, 2}), 0, 0);
  CHECK_CLOSE(nl::matmul(Tensor::zeros({2, 3, 0}), Tensor::zeros({0, 4})), Tensor::zeros({2, 3, 4}), 0, 0);
  CHECK_CLOSE(nl::matmul(Tensor::zeros({0, 3}), Tensor::zeros({4, 0}), true, true), Tensor::zeros({3, 4}), 0, 0);
  // empty outputs have the right shape
  CHECK(nl::matmul(Tensor::zeros({0, 3}), Tensor::zeros({3, 2})).shape() == Shape{0, 2});
  CHECK(nl::matmul(Tensor::zeros({2, 3}), Tensor::zeros({3, 0})).shape() == Shape{2, 0});
  CHECK(nl::matmul(Tensor::zeros({0, 2, 3}), Tensor::zeros({3, 4})).shape() == Shape{0, 2, 4});
}

TEST_CASE("matmul rejects mismatched inner dims", "[ops]") {
  REQUIRE_THROWS_AS(nl::matmul(Tensor::zeros({2, 3}), Tensor::zeros({4, 5})), nl::Error);
  REQUIRE_THROWS_WITH(nl::matmul(Tensor::zeros({2, 3}), Tensor::zeros({4, 5})),
                      Contains("matmul") && Contains("(2, 3)") && Contains("(4, 5)"));
  // (2,3)^T is (3,2): inner dim 2 against 3
  REQUIRE_THROWS_WITH(nl::matmul(Tensor::zeros({2, 3}), Tensor::zeros({3, 5}), true, false),
                      Contains("matmul") && Contains("(3, 5)"));
  REQUIRE_THROWS_WITH(nl::matmul(Tensor::zeros({2, 3}), Tensor::zeros({5, 4}), false, true),
                      Contains("matmul") && Contains("(2, 3)"));
}

TEST_CASE("matmul rejects 1-D operands", "[ops]") {
  REQUIRE_THROWS_WITH(nl::matmul(Tensor::zeros({3}), Tensor::zeros({3, 2})), Contains("matmul") && Contains("(3,)"));
  REQUIRE_THROWS_WITH(nl::matmul(Tensor::zeros({2, 3}), Tensor::zeros({3})), Contains("matmul") && Contains("(3,)"));
  REQUIRE_THROWS_WITH(nl::matmul(Tensor::scalar(1.0f), Tensor::scalar(1.0f)), Contains("matmul"));
}

TEST_CASE("matmul rejects batch dims that do not broadcast", "[ops]") {
  REQUIRE_THROWS_WITH(nl::matmul(Tensor::zeros({2, 3, 4}), Tensor::zeros({3, 4, 5})),
                      Contains("matmul") && Contains("(2,)") && Contains("(3,)"));
}

TEST_CASE("matmul rejects int32 inputs", "[ops]") {
  REQUIRE_THROWS_WITH(nl::matmul(Tensor::from_ints({1, 2, 3, 4}, {2, 2}), Tensor::zeros({2, 2})),
                      Contains("matmul") && Contains("int32") && Contains("(2, 2)"));
}
