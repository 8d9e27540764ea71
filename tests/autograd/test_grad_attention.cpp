// The fused attention op (autograd/attention.cpp) against the composite attention it
// replaces in nn/, matmul -> attention_softmax -> matmul (sgemm and the softmax kernels,
// none of the fused code), values and all three gradients; gradcheck on small shapes,
// strided views included; and the peak memory of forward + backward, which must grow
// with T, not with T^2.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "tensor/allocator.h"
#include "tensor/random.h"
#include "tests/test_util.h"

using namespace nl;
namespace ag = nl::ag;

namespace {

Var composite_attention(const Var& q, const Var& k, const Var& v, float scale, bool causal) {
  Var probs = ag::attention_softmax(ag::matmul(q, k, false, true), scale, causal);
  return ag::matmul(probs, v);
}

// Fused and composite on the same inputs with the same upstream gradient.
void check_attention_against_composite(Generator& gen, int64_t B, int64_t H, int64_t T, int64_t S, int64_t hd,
                                       bool causal) {
  INFO("B " << B << " H " << H << " T " << T << " S " << S << " hd " << hd << (causal ? " causal" : " full")
            << ", " << num_threads() << " threads");
  const Tensor q = gen.normal({B, H, T, hd}), k = gen.normal({B, H, S, hd}), v = gen.normal({B, H, S, hd});
  const Tensor dout = gen.normal({B, H, T, hd});
  const float scale = 1.0f / std::sqrt((float)hd);
  Var fq(q, true), fk(k, true), fv(v, true), cq(q, true), ck(k, true), cv(v, true);
  Var fused = ag::attention(fq, fk, fv, scale, causal);
  Var composite = composite_attention(cq, ck, cv, scale, causal);
  CHECK(fused.node()->op == "attention");
  CHECK(fused.node()->inputs.size() == 3);  // one recorded op
  CHECK_CLOSE(fused.value(), composite.value(), 1e-4, 1e-5);
  fused.backward(dout);
  composite.backward(dout);
  INFO("dq");
  CHECK_CLOSE(fq.grad(), cq.grad(), 1e-4, 2e-5);
  INFO("dk");
  CHECK_CLOSE(fk.grad(), ck.grad(), 1e-4, 2e-5);
  INFO("dv");
  CHECK_CLOSE(fv.grad(), cv.grad(), 1e-4, 2e-5);
}

}  // namespace

TEST_CASE("attention op equals matmul, attention_softmax, matmul: values and gradients, odd T", "[grad][attention]") {
  Generator gen(80);
  for (bool causal : {true, false})
    for (int64_t T : {1, 7, 63, 64, 65, 130}) check_attention_against_composite(gen, 2, 2, T, T, 16, causal);
  check_attention_against_composite(gen, 1, 3, 6, 75, 8, true);    // new rows against a key/value cache
  check_attention_against_composite(gen, 2, 1, 20, 9, 32, false);  // fewer keys than queries
}

TEST_CASE("attention op equals the composite with fewer and more (batch, head) pairs than threads",
          "[grad][attention]") {
  Generator gen(81);
  for (int threads : {1, 2, 4}) {
    ScopedThreads scoped(threads);
    for (bool causal : {true, false}) {
      check_attention_against_composite(gen, 1, 1, 150, 150, 32, causal);  // B * H = 1
      check_attention_against_composite(gen, 3, 4, 70, 70, 32, causal);    // B * H = 12
    }
  }
}

TEST_CASE("attention op equals the composite at T = 1024", "[grad][attention]") {
  Generator gen(82);
  check_attention_against_composite(gen, 1, 2, 1024, 1024, 8, true);
  check_attention_against_composite(gen, 1, 1, 1024, 1024, 8, false);
}

TEST_CASE("attention op gradcheck on small shapes, causal and not, strided views", "[grad][attention]") {
  Generator gen(83);
  for (bool causal : {true, false}) {
    INFO((causal ? "causal" : "full"));
    auto fn = [causal](const std::vector<Var>& x) { return ag::attention(x[0], x[1], x[2], 0.6f, causal); };
    CHECK_GRADCHECK(gradcheck(fn, {gen.normal({1, 2, 5, 3}), gen.normal({1, 2, 5, 3}), gen.normal({1, 2, 5, 3})}));
    CHECK_GRADCHECK(gradcheck(fn, {gen.normal({2, 1, 1, 4}), gen.normal({2, 1, 1, 4}), gen.normal({2, 1, 1, 4})}));
    // more keys than queries (for causal: a key/value cache's new rows)
    CHECK_GRADCHECK(gradcheck(fn, {gen.normal({1, 1, 3, 4}), gen.normal({1, 1, 8, 4}), gen.normal({1, 1, 8, 4})}));
    // a tile boundary: 66 queries and keys, one head of 2 dims
    CHECK_GRADCHECK(gradcheck(fn, {gen.normal({1, 1, 66, 2}), gen.normal({1, 1, 66, 2}), gen.normal({1, 1, 66, 2})}));
    // the head views nn/attention.cpp makes of a qkv output (B, T, 3C), and a transposed head dim
    const Tensor qkv = gen.normal({2, 4, 3 * 6});
    auto head = [&](int part) {
      return qkv.slice(2, part * 6, (part + 1) * 6).reshape({2, 4, 2, 3}).permute({0, 2, 1, 3});
    };
    CHECK_GRADCHECK(gradcheck(fn, {head(0), head(1), head(2)}));
    CHECK_GRADCHECK(gradcheck(fn, {gen.normal({1, 2, 3, 5}).transpose(2, 3), gen.normal({1, 2, 5, 3}),
                                   gen.normal({1, 2, 3, 5}).transpose(2, 3)}));
  }
}

TEST_CASE("attention op: forward + backward peak memory grows with T, not T^2", "[grad][attention]") {
  const int64_t B = 2, H = 2, hd = 16;
  Generator gen(84);
  // peak bytes in use above what was in use before, over one forward + backward
  auto peak_of = [&](int64_t T, auto attention) {
    const Tensor q = gen.normal({B, H, T, hd}), k = gen.normal({B, H, T, hd}), v = gen.normal({B, H, T, hd});
    const Tensor dout = gen.normal({B, H, T, hd});
    Var vq(q, true), vk(k, true), vv(v, true);
    const int64_t before = allocator_stats(Device::CPU).in_use_bytes;
    allocator_reset_peak(Device::CPU);
    attention(vq, vk, vv).backward(dout);
    return allocator_stats(Device::CPU).peak_in_use_bytes - before;
  };
  auto fused = [](const Var& a, const Var& b, const Var& c) { return ag::attention(a, b, c, 0.25f, true); };
  auto composite = [](const Var& a, const Var& b, const Var& c) { return composite_attention(a, b, c, 0.25f, true); };
  const int64_t T = 1024;
  const int64_t probs_bytes = B * H * T * T * (int64_t)sizeof(float);  // one (B, H, T, T) tensor: 16 MiB
  const int64_t head_bytes = B * H * T * hd * (int64_t)sizeof(float);  // one (B, H, T, hd) tensor: 256 KiB
  const int64_t fused_1024 = peak_of(T, fused), fused_512 = peak_of(T / 2, fused);
  const int64_t composite_1024 = peak_of(T, composite), composite_512 = peak_of(T / 2, composite);
  INFO("peak bytes above the inputs, T = 512 and 1024: fused " << fused_512 << ", " << fused_1024 << "; composite "
                                                                << composite_512 << ", " << composite_1024
                                                                << "; one (B, H, T, T) at T = 1024: " << probs_bytes);
  // the measure sees the composite's (T, T) tensors: scores and probabilities at least
  CHECK(composite_1024 >= 2 * probs_bytes);
  CHECK(composite_1024 > 3 * composite_512);
  // the fused op holds out, dq, dk, dv (four (B, H, T, hd) tensors), lse and per-thread
  // tiles (tens of KiB): twice the tokens, at most about twice the bytes
  CHECK(fused_1024 < 5 * head_bytes + (256 << 10));
  CHECK(fused_1024 < 2.2 * fused_512);
  CHECK(fused_1024 * 10 < probs_bytes);
}

// attention_qkv against the path nn/ took before it: slices of qkv as head views,
// the attention op, the heads merged by a permute and a reshape (the slice, permute and
// reshape backwards, none of attention_qkv's code), values and the qkv gradient.
TEST_CASE("attention_qkv equals slice, attention, merge: values and the qkv gradient", "[grad][attention]") {
  Generator gen(85);
  for (bool causal : {true, false})
    for (const auto& shape : std::vector<std::array<int64_t, 4>>{{2, 7, 2, 8}, {3, 65, 4, 16}, {1, 1, 1, 4}}) {
      // plain locals, not a structured binding: the lambda below captures them (C++17)
      const int64_t B = shape[0], T = shape[1], H = shape[2], hd = shape[3];
      INFO("B " << B << " T " << T << " H " << H << " hd " << hd << (causal ? " causal" : " full"));
      const int64_t C = H * hd;
      const Tensor x = gen.normal({B, T, 3 * C}), dout = gen.normal({B, T, C});
      const float scale = 1.0f / std::sqrt((float)hd);
      Var fx(x, true), cx(x, true);
      Var fused = ag::attention_qkv(fx, H, scale, causal);
      auto head = [&](int part) {
        return ag::permute(ag::reshape(ag::slice(cx, 2, part * C, (part + 1) * C), {B, T, H, hd}), {0, 2, 1, 3});
      };
      Var composite =
          ag::reshape(ag::permute(ag::attention(head(0), head(1), head(2), scale, causal), {0, 2, 1, 3}), {B, T, C});
      CHECK(fused.node()->inputs.size() == 1);
      CHECK_CLOSE(fused.value(), composite.value(), 1e-6, 1e-6);
      fused.backward(dout);
      composite.backward(dout);
      CHECK_CLOSE(fx.grad(), cx.grad(), 1e-6, 1e-6);
    }
}

TEST_CASE("attention_qkv gradcheck, causal and not", "[grad][attention]") {
  Generator gen(86);
  for (bool causal : {true, false}) {
    INFO((causal ? "causal" : "full"));
    auto fn = [causal](const std::vector<Var>& x) { return ag::attention_qkv(x[0], 2, 0.6f, causal); };
    CHECK_GRADCHECK(gradcheck(fn, {gen.normal({2, 5, 3 * 6})}));
    CHECK_GRADCHECK(gradcheck(fn, {gen.normal({1, 1, 3 * 4})}));
  }
}

TEST_CASE("attention_qkv refuses a qkv that is not (B, T, 3 H hd)", "[grad][attention]") {
  Generator gen(87);
  CHECK_THROWS_WITH(ag::attention_qkv(Var(gen.normal({2, 4, 10})), 2, 1.0f, true),
                    Catch::Contains("attention_qkv") && Catch::Contains("(2, 4, 10)"));
  CHECK_THROWS_WITH(ag::attention_qkv(Var(gen.normal({4, 12})), 2, 1.0f, true), Catch::Contains("attention_qkv"));
}
