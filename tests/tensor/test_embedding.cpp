// Embedding gather and its scatter-add backward (tensor/cpu/embedding.cpp).
#include <catch2/catch.hpp>

#include <vector>

#include "tensor/ops.h"
#include "tests/tensor/tensor_literals.h"
#include "tests/test_util.h"

using Catch::Contains;
using nl::Shape;
using nl::Tensor;
using nl::test::T;

namespace {

// table[v, c] = 10 v + c
Tensor table43() { return T({0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32}, {4, 3}); }

}  // namespace

TEST_CASE("embedding gathers rows, repeated ids included", "[ops]") {
  Tensor ids = Tensor::from_ints({2, 0, 2, 3}, {4});
  CHECK_CLOSE(nl::embedding_forward(table43(), ids), T({20, 21, 22, 0, 1, 2, 20, 21, 22, 30, 31, 32}, {4, 3}), 0, 0);
}

TEST_CASE("embedding keeps the shape of 2-D ids", "[ops]") {
  Tensor ids = Tensor::from_ints({1, 1, 3, 0}, {2, 2});
  Tensor out = nl::embedding_forward(table43(), ids);
  REQUIRE(out.shape() == Shape{2, 2, 3});
  CHECK_CLOSE(out, T({10, 11, 12, 10, 11, 12, 30, 31, 32, 0, 1, 2}, {2, 2, 3}), 0, 0);
  // a single id of a 0-d tensor gives one row
  CHECK_CLOSE(nl::embedding_forward(table43(), Tensor::from_ints({2}, {})), T({20, 21, 22}, {3}), 0, 0);
}

TEST_CASE("embedding reads non-contiguous tables and ids", "[ops]") {
  // stored (3, 4): column v is row v of the table
  Tensor stored = T({0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32}, {3, 4});
  Tensor table = stored.transpose(0, 1);
  REQUIRE_FALSE(table.is_contiguous());
  Tensor ids = Tensor::from_ints({3, 9, 1, 9}, {4}).slice(0, 0, 4, 2);  // [3, 1]
  CHECK_CLOSE(nl::embedding_forward(table, ids), T({30, 31, 32, 10, 11, 12}, {2, 3}), 0, 0);
}

TEST_CASE("embedding_backward scatter-adds rows, repeated ids summed", "[ops]") {
  Tensor ids = Tensor::from_ints({2, 0, 2, 2}, {4});
  Tensor dout = T({1, 2, 3, 10, 20, 30, 100, 200, 300, 1000, 2000, 3000}, {4, 3});
  // row 2 = dout[0] + dout[2] + dout[3], row 0 = dout[1], rows 1 and 3 untouched
  Tensor expected = T({10, 20, 30, 0, 0, 0, 1101, 2202, 3303, 0, 0, 0}, {4, 3});
  CHECK_CLOSE(nl::embedding_backward(dout, ids, 4), expected, 0, 0);
  // 2-D ids with a (2, 2, C) gradient, and a non-contiguous gradient
  Tensor ids2 = Tensor::from_ints({2, 0, 2, 2}, {2, 2});
  CHECK_CLOSE(nl::embedding_backward(dout.reshape({2, 2, 3}), ids2, 4), expected, 0, 0);
  Tensor dout_t = dout.transpose(0, 1).contiguous().transpose(0, 1);
  REQUIRE_FALSE(dout_t.is_contiguous());
  CHECK_CLOSE(nl::embedding_backward(dout_t, ids, 4), expected, 0, 0);
  // a larger vocabulary than the ids use: the rest stays zero
  CHECK(nl::embedding_backward(dout, ids, 6).shape() == Shape{6, 3});
  CHECK_CLOSE(nl::sum(nl::embedding_backward(dout, ids, 6), {1}), T({60, 0, 6606, 0, 0, 0}, {6}), 0, 0);
}

TEST_CASE("embedding rejects out-of-range ids", "[ops]") {
  REQUIRE_THROWS_AS(nl::embedding_forward(table43(), Tensor::from_ints({0, 4}, {2})), nl::Error);
  REQUIRE_THROWS_WITH(nl::embedding_forward(table43(), Tensor::from_ints({0, 4}, {2})),
                      Contains("embedding") && Contains("id 4") && Contains("[0, 4)"));
  REQUIRE_THROWS_WITH(nl::embedding_forward(table43(), Tensor::from_ints({-1}, {1})),
                      Contains("embedding") && Contains("-1"));
  REQUIRE_THROWS_WITH(nl::embedding_backward(Tensor::zeros({2, 3}), Tensor::from_ints({0, 5}, {2}), 4),
                      Contains("embedding_backward") && Contains("5"));
}

TEST_CASE("embedding rejects bad dtypes and shapes", "[ops]") {
  REQUIRE_THROWS_WITH(nl::embedding_forward(table43(), T({0, 1}, {2})), Contains("embedding") && Contains("int32"));
  REQUIRE_THROWS_WITH(nl::embedding_forward(T({1, 2, 3}, {3}), Tensor::from_ints({0}, {1})),
                      Contains("embedding") && Contains("(3,)"));
  REQUIRE_THROWS_WITH(nl::embedding_forward(Tensor::from_ints({1, 2, 3, 4}, {2, 2}), Tensor::from_ints({0}, {1})),
                      Contains("embedding") && Contains("int32"));
  REQUIRE_THROWS_WITH(nl::embedding_backward(Tensor::zeros({3, 3}), Tensor::from_ints({0, 1}, {2}), 4),
                      Contains("embedding_backward") && Contains("(3, 3)") && Contains("(2,)"));
}
