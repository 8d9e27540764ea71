// matmul at several thread counts (tensor/cpu/gemm.h): the same bits at 1, 2 and 3
// threads on the products of a demo-sized training step and on ragged shapes, and the
// right values where a product is cut into tiles whose last row and column are partial.
// It also runs itself under OpenBLAS's Haswell kernels (tests/haswell_rerun.h), with
// which OpenBLAS's own threading gave every one of the step's products other bits at 2
// threads than at 1.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "tensor/cpu/gemm.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "tests/haswell_rerun.h"
#include "tests/test_util.h"

using nl::Shape;
using nl::Tensor;

namespace {

Tensor random_tensor(nl::Generator& gen, const Shape& shape) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = gen.normal();
  return t;
}

// One product: C (m x n) = op(A) op(B) with A stored (k, m) when trans_a, B (n, k) when trans_b.
struct Product {
  int64_t m, n, k;
  bool trans_a, trans_b;
};

Tensor product_at(const Product& c, const Tensor& a, const Tensor& b, int threads) {
  nl::ScopedThreads scope(threads);
  return nl::matmul(a, b, c.trans_a, c.trans_b);
}

// The same shape and bytes (memcmp: the sign of a zero counts, a NaN matches itself).
bool same_bytes(const Tensor& x, const Tensor& y) {
  return x.shape() == y.shape() && std::memcmp(x.data(), y.data(), sizeof(float) * (size_t)x.numel()) == 0;
}

}  // namespace

TEST_CASE("matmul: the same bits at 1, 2 and 3 threads", "[ops][threads]") {
  // a demo-sized step (batch 16 x 64 tokens, width 128, MLP 512, 256 bytes): each linear's
  // forward (NT), input gradient (NN) and weight gradient (TN); then ragged shapes
  std::vector<Product> cases;
  for (auto [out, in] : std::vector<std::pair<int64_t, int64_t>>{{384, 128}, {128, 128}, {512, 128}, {128, 512},
                                                                  {256, 128}}) {
    cases.push_back({1024, out, in, false, true});
    cases.push_back({1024, in, out, false, false});
    cases.push_back({out, in, 1024, true, false});
  }
  cases.push_back({256, 64, 64, false, false});
  cases.push_back({1000, 300, 200, true, true});
  cases.push_back({37, 1001, 129, false, true});
  nl::Generator gen(21);
  for (const Product& c : cases) {
    INFO("m n k = " << c.m << " " << c.n << " " << c.k << ", trans " << c.trans_a << c.trans_b);
    const Tensor a = random_tensor(gen, c.trans_a ? Shape{c.k, c.m} : Shape{c.m, c.k});
    const Tensor b = random_tensor(gen, c.trans_b ? Shape{c.n, c.k} : Shape{c.k, c.n});
    const Tensor one = product_at(c, a, b, 1);
    CHECK(same_bytes(one, product_at(c, a, b, 2)));
    CHECK(same_bytes(one, product_at(c, a, b, 3)));
  }
  // batched, each (64, 64) @ (64, 48): the batch's products dealt out, not split
  const Tensor a = random_tensor(gen, {8, 64, 64}), b = random_tensor(gen, {8, 64, 48});
  const Product batched{64, 48, 64, false, false};
  CHECK(same_bytes(product_at(batched, a, b, 1), product_at(batched, a, b, 2)));

  std::string haswell;
  const bool passes = nl::test::passes_under_haswell("matmul: the same bits at 1*", haswell);
  INFO(haswell);
  CHECK(passes);
}

TEST_CASE("matmul cut into tiles with partial edges gives the product", "[ops][threads]") {
  // shapes large enough to be cut, with m and n not multiples of the tile sides, every
  // transposition, and A a slice of a wider matrix (its leading dimension above k)
  nl::Generator gen(22);
  for (const Product& c : std::vector<Product>{{1000, 300, 200, false, false},
                                               {1000, 300, 200, true, false},
                                               {300, 1000, 200, false, true},
                                               {300, 1000, 200, true, true}}) {
    INFO("m n k = " << c.m << " " << c.n << " " << c.k << ", trans " << c.trans_a << c.trans_b);
    const nl::GemmTile tile = nl::gemm_tile(c.m, c.n, c.k);
    REQUIRE((tile.rows < c.m || tile.cols < c.n));
    REQUIRE((c.m % tile.rows != 0 || c.n % tile.cols != 0));
    const Tensor wide = random_tensor(gen, c.trans_a ? Shape{c.k, c.m + 5} : Shape{c.m, c.k + 5});
    const Tensor a = wide.slice(1, 0, c.trans_a ? c.m : c.k);
    const Tensor b = random_tensor(gen, c.trans_b ? Shape{c.n, c.k} : Shape{c.k, c.n});
    std::vector<float> expected((size_t)(c.m * c.n));
    const Tensor ac = a.contiguous();
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double s = 0;
        for (int64_t k = 0; k < c.k; ++k) {
          const double x = c.trans_a ? ac.data()[k * c.m + i] : ac.data()[i * c.k + k];
          const double y = c.trans_b ? b.data()[j * c.k + k] : b.data()[k * c.n + j];
          s += x * y;
        }
        expected[(size_t)(i * c.n + j)] = (float)s;
      }
    CHECK_CLOSE(product_at(c, a, b, 2), Tensor::from_vector(expected, {c.m, c.n}), 1e-4, 1e-4);
  }
}
