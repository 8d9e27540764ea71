// [cuda] Every op of tensor/ops.h on the GPU against the CPU op, forward and backward
// maps alike, on random non-round shapes, contiguous and strided inputs.
#include <cmath>
#include <limits>

#include "tests/cuda/cuda_test.h"

using namespace nl;
using namespace nl::test;

namespace {

Tensor positive(Generator& gen, const Shape& s) { return add_scalar(abs(gen.normal(s)), 0.1f); }

}  // namespace

TEST_CASE("cuda: binary ops with every broadcast path", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(1);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{13, 37}, {13, 37}},       // flat
      {{5, 7, 37}, {37}},         // bias-like suffix
      {{37}, {5, 7, 37}},         // suffix on the left
      {{3, 1, 5}, {1, 4, 1}},     // general broadcast
      {{6, 1}, {6, 9}},           // column
      {{}, {4, 3}}};              // scalar
  for (const auto& [sa, sb] : cases) {
    Tensor a = gen.normal(sa), b = add_scalar(gen.normal(sb), 3.0f);  // b away from 0 for div
    Tensor da = gpu(a), db = gpu(b);
    CHECK_PARITY(add(da, db), add(a, b), kRtol, kAtol);
    CHECK_PARITY(sub(da, db), sub(a, b), kRtol, kAtol);
    CHECK_PARITY(mul(da, db), mul(a, b), kRtol, kAtol);
    CHECK_PARITY(div(da, db), div(a, b), kRtol, kAtol);
  }
  // strided operands: a transposed view and a sliced one
  Tensor a = gen.normal({11, 19}), b = gen.normal({19, 11});
  CHECK_PARITY(add(gpu(a), gpu(b).transpose(0, 1)), add(a, b.transpose(0, 1)), kRtol, kAtol);
  CHECK_PARITY(mul(gpu(a).slice(1, 1, 19, 3), gpu(b).transpose(0, 1).slice(1, 0, 18, 3)),
               mul(a.slice(1, 1, 19, 3), b.transpose(0, 1).slice(1, 0, 18, 3)), kRtol, kAtol);
  Tensor r = Tensor::from_vector({1, 2, 3, 2}, {4}), s = Tensor::from_vector({2}, {1});
  CHECK_PARITY(equal_mask(gpu(r), gpu(s)), equal_mask(r, s), 0, 0);
}

TEST_CASE("cuda: scalar and unary maps and their backward maps", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(2);
  Tensor x = mul_scalar(gen.normal({9, 131}), 2.0f), dy = gen.normal({9, 131}), p = positive(gen, {9, 131});
  Tensor dx = gpu(x), ddy = gpu(dy), dp = gpu(p);
  CHECK_PARITY(add_scalar(dx, 0.7f), add_scalar(x, 0.7f), kRtol, kAtol);
  CHECK_PARITY(mul_scalar(dx, -1.3f), mul_scalar(x, -1.3f), kRtol, kAtol);
  CHECK_PARITY(pow_scalar(dp, 1.7f), pow_scalar(p, 1.7f), 1e-5, 1e-6);
  CHECK_PARITY(neg(dx), neg(x), 0, 0);
  CHECK_PARITY(abs(dx), abs(x), 0, 0);
  CHECK_PARITY(sign(dx), sign(x), 0, 0);
  CHECK_PARITY(relu(dx), relu(x), 0, 0);
  // the CPU's exp and tanh are polynomial approximations within a few ulps
  CHECK_PARITY(exp(dx), exp(x), 1e-5, 1e-6);
  CHECK_PARITY(log(dp), log(p), 1e-5, 1e-6);
  CHECK_PARITY(sqrt(dp), sqrt(p), 1e-6, 1e-7);
  CHECK_PARITY(rsqrt(dp), rsqrt(p), 1e-6, 1e-7);
  CHECK_PARITY(tanh(dx), tanh(x), 1e-5, 1e-6);
  CHECK_PARITY(erf(dx), erf(x), 1e-5, 1e-6);
  CHECK_PARITY(gelu(dx), gelu(x), 1e-5, 1e-6);
  CHECK_PARITY(silu(dx), silu(x), 1e-5, 1e-6);
  CHECK_PARITY(gelu_backward(dx, ddy), gelu_backward(x, dy), 1e-5, 1e-6);
  CHECK_PARITY(silu_backward(dx, ddy), silu_backward(x, dy), 1e-5, 1e-6);
  CHECK_PARITY(relu_backward(dx, ddy), relu_backward(x, dy), 0, 0);
  Tensor t = tanh(x);
  CHECK_PARITY(tanh_backward(gpu(t), ddy), tanh_backward(t, dy), 1e-5, 1e-6);
  // a strided input is made contiguous first
  CHECK_PARITY(gelu(dx.transpose(0, 1)), gelu(x.transpose(0, 1)), 1e-5, 1e-6);
}

TEST_CASE("cuda: in-place add_ and axpy_", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(3);
  Tensor a = gen.normal({6, 29}), b = gen.normal({6, 29}), bias = gen.normal({29});
  Tensor da = gpu(a);
  add_(da, gpu(b));
  add_(a, b);
  CHECK_PARITY(da, a, kRtol, kAtol);
  add_(da, gpu(bias));  // broadcast source
  add_(a, bias);
  CHECK_PARITY(da, a, kRtol, kAtol);
  axpy_(da, -0.25f, gpu(b));
  axpy_(a, -0.25f, b);
  CHECK_PARITY(da, a, kRtol, kAtol);
}

TEST_CASE("cuda: sum, mean, max and var over any axes", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(4);
  Tensor x = gen.normal({7, 13, 33});
  Tensor dx = gpu(x);
  const std::vector<std::vector<int64_t>> axes_list = {{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {-1}};
  for (const auto& axes : axes_list) {
    for (bool keep : {false, true}) {
      CHECK_PARITY(sum(dx, axes, keep), sum(x, axes, keep), 1e-5, 1e-5);
      CHECK_PARITY(mean(dx, axes, keep), mean(x, axes, keep), 1e-5, 1e-6);
      CHECK_PARITY(max(dx, axes, keep), max(x, axes, keep), 0, 0);
      CHECK_PARITY(var(dx, axes, keep, 1), var(x, axes, keep, 1), 1e-5, 1e-6);
      CHECK_PARITY(var(dx, axes, keep, 0), var(x, axes, keep, 0), 1e-5, 1e-6);
    }
  }
  // a row long enough to be split into several segments, and a strided input
  Tensor long_row = gen.normal({3, 70001});
  CHECK_PARITY(sum(gpu(long_row), {1}), sum(long_row, {1}), 1e-5, 1e-4);
  CHECK_PARITY(max(gpu(long_row), {}), max(long_row, {}), 0, 0);
  CHECK_PARITY(sum(dx.transpose(0, 2), {0}), sum(x.transpose(0, 2), {0}), 1e-5, 1e-5);
  // bias gradients: many rows summed per column
  Tensor tall = gen.normal({4099, 45});
  CHECK_PARITY(sum(gpu(tall), {0}), sum(tall, {0}), 1e-5, 1e-4);
  CHECK_PARITY(sum_to(gpu(tall), {1, 45}), sum_to(tall, {1, 45}), 1e-5, 1e-4);
  // NaN propagates through max, as on the CPU
  Tensor nan_row = Tensor::from_vector({1, std::numeric_limits<float>::quiet_NaN(), 3, 4}, {2, 2});
  CHECK_PARITY(max(gpu(nan_row), {1}), max(nan_row, {1}), 0, 0);
}

TEST_CASE("cuda: softmax and log_softmax, forward and backward", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(5);
  for (const Shape& s : std::vector<Shape>{{5, 3, 17}, {9, 1000}, {2, 3000}, {4, 1}}) {
    Tensor x = mul_scalar(gen.normal(s), 3.0f), dy = gen.normal(s);
    Tensor y = softmax(x), ly = log_softmax(x);
    CHECK_PARITY(softmax(gpu(x)), y, 1e-5, 1e-7);
    CHECK_PARITY(log_softmax(gpu(x)), ly, 1e-5, 1e-5);
    CHECK_PARITY(softmax_backward(gpu(y), gpu(dy)), softmax_backward(y, dy), 1e-4, 1e-6);
    CHECK_PARITY(log_softmax_backward(gpu(ly), gpu(dy)), log_softmax_backward(ly, dy), 1e-4, 1e-5);
  }
  // masked (-inf) entries, as attention sees them
  Tensor masked = causal_mask_fill(gen.normal({3, 6, 6}), -std::numeric_limits<float>::infinity());
  CHECK_PARITY(softmax(gpu(masked)), softmax(masked), 1e-5, 1e-7);
}

TEST_CASE("cuda: matmul through cuBLAS, every layout and batch", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(6);
  Tensor a = gen.normal({37, 53}), b = gen.normal({53, 29});
  CHECK_PARITY(matmul(gpu(a), gpu(b)), matmul(a, b), 1e-4, 1e-4);
  Tensor at = gen.normal({53, 37}), bt = gen.normal({29, 53});
  CHECK_PARITY(matmul(gpu(at), gpu(b), true, false), matmul(at, b, true, false), 1e-4, 1e-4);
  CHECK_PARITY(matmul(gpu(a), gpu(bt), false, true), matmul(a, bt, false, true), 1e-4, 1e-4);
  CHECK_PARITY(matmul(gpu(at), gpu(bt), true, true), matmul(at, bt, true, true), 1e-4, 1e-4);
  // Linear: (B, T, K) @ W^T folds the batch into the rows
  Tensor x = gen.normal({3, 11, 53}), w = gen.normal({29, 53});
  CHECK_PARITY(matmul(gpu(x), gpu(w), false, true), matmul(x, w, false, true), 1e-4, 1e-4);
  // batched, with broadcast batch dims
  Tensor p = gen.normal({2, 3, 7, 13}), q = gen.normal({3, 13, 5}), r = gen.normal({2, 1, 13, 5});
  CHECK_PARITY(matmul(gpu(p), gpu(q)), matmul(p, q), 1e-4, 1e-4);
  CHECK_PARITY(matmul(gpu(p), gpu(r)), matmul(p, r), 1e-4, 1e-4);
  // attention heads: permuted views of one (B, T, 3C) tensor, no copies
  const int64_t B = 2, T = 19, H = 3, hd = 7, C = H * hd;
  Tensor qkv = gen.normal({B, T, 3 * C});
  auto heads = [&](const Tensor& t, int part) {
    return t.slice(2, part * C, (part + 1) * C).reshape({B, T, H, hd}).permute({0, 2, 1, 3});
  };
  Tensor dqkv = gpu(qkv);
  CHECK_PARITY(matmul(heads(dqkv, 0), heads(dqkv, 1), false, true), matmul(heads(qkv, 0), heads(qkv, 1), false, true),
               1e-4, 1e-4);
  Tensor att = softmax(gen.normal({B, H, T, T}));
  CHECK_PARITY(matmul(gpu(att), heads(dqkv, 2)), matmul(att, heads(qkv, 2)), 1e-4, 1e-4);
  CHECK_PARITY(matmul(gpu(att), heads(dqkv, 2), true, false), matmul(att, heads(qkv, 2), true, false), 1e-4, 1e-4);
  // a view that is neither layout is copied first; K = 0 gives zeros
  Tensor wide = gen.normal({37, 106});
  CHECK_PARITY(matmul(gpu(wide).slice(1, 0, 106, 2), gpu(b)), matmul(wide.slice(1, 0, 106, 2), b), 1e-4, 1e-4);
  CHECK_PARITY(matmul(gpu(Tensor::zeros({4, 0})), gpu(Tensor::zeros({0, 3}))), Tensor::zeros({4, 3}), 0, 0);
}

TEST_CASE("cuda: embedding and cross-entropy, forward and backward", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(7);
  Tensor table = gen.normal({41, 23});
  Tensor ids = Tensor::from_ints({3, 40, 3, 0, 17, 3, 40, 9, 9, 1}, {2, 5});
  CHECK_PARITY(embedding_forward(gpu(table), gpu(ids)), embedding_forward(table, ids), 0, 0);
  Tensor dout = gen.normal({2, 5, 23});
  CHECK_PARITY(embedding_backward(gpu(dout), gpu(ids), 41), embedding_backward(dout, ids, 41), 1e-6, 1e-6);
  REQUIRE_THROWS_AS(embedding_forward(gpu(table), gpu(Tensor::from_ints({41}, {1}))), Error);

  Tensor logits = mul_scalar(gen.normal({13, 259}), 2.0f);
  Tensor targets = Tensor::from_ints({0, 5, 258, -100, 7, 7, 100, 3, -100, 200, 1, 2, 9}, {13});
  Tensor lse, dlse;
  Tensor loss = cross_entropy_forward(logits, targets, -100, lse);
  CHECK_PARITY(cross_entropy_forward(gpu(logits), gpu(targets), -100, dlse), loss, 1e-5, 1e-6);
  CHECK_PARITY(dlse, lse, 1e-5, 1e-5);
  CHECK_PARITY(cross_entropy_backward(gpu(logits), gpu(targets), gpu(lse), 0.5f, -100),
               cross_entropy_backward(logits, targets, lse, 0.5f, -100), 1e-5, 1e-7);
  Tensor all_ignored = Tensor::from_ints(std::vector<int32_t>(13, -100), {13});
  CHECK(std::isnan(cross_entropy_forward(gpu(logits), gpu(all_ignored), -100, dlse).item()));
}

TEST_CASE("cuda: concat, split, causal mask", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(8);
  Tensor a = gen.normal({3, 4, 5}), b = gen.normal({3, 2, 5}), c = gen.normal({3, 7, 5});
  CHECK_PARITY(concat({gpu(a), gpu(b), gpu(c)}, 1), concat({a, b, c}, 1), 0, 0);
  Tensor joined = concat({a, b, c}, 1);
  auto parts = split(gpu(joined), {4, 2, 7}, 1);
  CHECK_PARITY(parts[1], b, 0, 0);
  Tensor s = gen.normal({2, 3, 5, 8});  // more keys than queries
  CHECK_PARITY(causal_mask_fill(gpu(s), -7.0f), causal_mask_fill(s, -7.0f), 0, 0);
}
