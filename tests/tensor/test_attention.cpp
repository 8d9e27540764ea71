// The fused attention kernels (tensor/cpu/attention.cpp) against attention written out
// here in double precision, one (query, key) pair at a time from the definition:
// forward values and log-sum-exp, and the gradients of L = sum(out * dout) from the
// softmax's Jacobian (D_i as the sum over keys, not the kernel's dout . out). Shapes
// with odd T that end mid-tile, T = 1, more keys than queries (the rows of a key/value
// cache), strided views, a long sequence; the same bits at every thread count.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/tensor/tensor_literals.h"
#include "tests/test_util.h"

using namespace nl;
using Catch::Contains;
using nl::test::same_bits;

namespace {

struct NaiveAttention {
  std::vector<double> out, lse, dq, dk, dv;
};

// q (B, H, T, hd), k and v (B, H, S, hd), dout (B, H, T, hd); query i sees key j when
// j <= i + S - T (causal) or always.
NaiveAttention naive_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dout, float scale,
                               bool causal) {
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), S = k.size(2), hd = q.size(3);
  const std::vector<float> qv = q.to_vector(), kv = k.to_vector(), vv = v.to_vector(), gv = dout.to_vector();
  NaiveAttention r{std::vector<double>(B * H * T * hd), std::vector<double>(B * H * T),
                   std::vector<double>(B * H * T * hd), std::vector<double>(B * H * S * hd),
                   std::vector<double>(B * H * S * hd)};
  std::vector<double> s(S), p(S), dp(S);
  for (int64_t bh = 0; bh < B * H; ++bh) {
    const int64_t qo = bh * T * hd, ko = bh * S * hd;
    for (int64_t i = 0; i < T; ++i) {
      const int64_t seen = causal ? i + S - T + 1 : S;
      double m = -INFINITY;
      for (int64_t j = 0; j < seen; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < hd; ++d) dot += (double)qv[qo + i * hd + d] * kv[ko + j * hd + d];
        s[j] = scale * dot;
        m = std::max(m, s[j]);
      }
      double z = 0;
      for (int64_t j = 0; j < seen; ++j) z += std::exp(s[j] - m);
      r.lse[bh * T + i] = m + std::log(z);
      double delta = 0;
      for (int64_t j = 0; j < seen; ++j) {
        p[j] = std::exp(s[j] - m) / z;
        dp[j] = 0;
        for (int64_t d = 0; d < hd; ++d) {
          r.out[qo + i * hd + d] += p[j] * vv[ko + j * hd + d];
          dp[j] += (double)gv[qo + i * hd + d] * vv[ko + j * hd + d];
        }
        delta += p[j] * dp[j];
      }
      for (int64_t j = 0; j < seen; ++j) {
        const double ds = p[j] * (dp[j] - delta);
        for (int64_t d = 0; d < hd; ++d) {
          r.dv[ko + j * hd + d] += p[j] * gv[qo + i * hd + d];
          r.dq[qo + i * hd + d] += scale * ds * kv[ko + j * hd + d];
          r.dk[ko + j * hd + d] += scale * ds * qv[qo + i * hd + d];
        }
      }
    }
  }
  return r;
}

Tensor as_tensor(const std::vector<double>& v, const Shape& shape) {
  return Tensor::from_vector(std::vector<float>(v.begin(), v.end()), shape);
}

// float32 against the double reference: one float32 rounding per term of sums over at
// most S keys and hd dims, relative to the largest value of the tensor
void check_against(const std::string& what, const Tensor& got, const std::vector<double>& want) {
  double top = 0;
  for (double w : want) top = std::max(top, std::fabs(w));
  INFO(what);
  CHECK_CLOSE(got, as_tensor(want, got.shape()), 1e-4, 1e-5 * std::max(top, 1.0));
}

void check_kernels(Generator& gen, int64_t B, int64_t H, int64_t T, int64_t S, int64_t hd, bool causal) {
  INFO("B " << B << " H " << H << " T " << T << " S " << S << " hd " << hd << (causal ? " causal" : " full"));
  const Tensor q = gen.normal({B, H, T, hd}), k = gen.normal({B, H, S, hd}), v = gen.normal({B, H, S, hd});
  const Tensor dout = gen.normal({B, H, T, hd});
  const float scale = 1.0f / std::sqrt((float)hd);
  const NaiveAttention want = naive_attention(q, k, v, dout, scale, causal);
  const AttentionForward f = attention_forward(q, k, v, scale, causal);
  check_against("out", f.out, want.out);
  check_against("lse", f.lse, want.lse);
  const AttentionGrads g = attention_backward(dout, q, k, v, f.out, f.lse, scale, causal);
  check_against("dq", g.dq, want.dq);
  check_against("dk", g.dk, want.dk);
  check_against("dv", g.dv, want.dv);
}

}  // namespace

TEST_CASE("attention kernels match attention written out in double, causal and not, T ending mid-tile", "[attention]") {
  Generator gen(70);
  for (bool causal : {true, false}) {
    check_kernels(gen, 1, 1, 1, 1, 4, causal);  // T = 1: one query, one key
    check_kernels(gen, 2, 3, 7, 7, 5, causal);
    check_kernels(gen, 1, 2, 63, 63, 16, causal);
    check_kernels(gen, 2, 1, 65, 65, 32, causal);  // one row into the second tile
    check_kernels(gen, 1, 2, 130, 130, 12, causal);
    check_kernels(gen, 1, 1, 64, 64, 64, causal);  // exactly one tile
  }
  check_kernels(gen, 2, 2, 9, 130, 8, false);  // fewer queries than keys, not causal
  check_kernels(gen, 2, 1, 130, 3, 8, false);  // more queries than keys
}

TEST_CASE("attention kernels with more keys than queries: the new rows against a key/value cache", "[attention]") {
  Generator gen(71);
  check_kernels(gen, 1, 2, 1, 37, 8, true);    // one new token after 36 cached ones
  check_kernels(gen, 2, 1, 5, 70, 16, true);   // a block of 5 straddling the tile boundary at 64
  check_kernels(gen, 1, 1, 70, 200, 4, true);  // queries over two tiles, keys over four
}

TEST_CASE("attention kernels at T = 1024 with a small head dim", "[attention]") {
  Generator gen(72);
  check_kernels(gen, 1, 2, 1024, 1024, 8, true);
  check_kernels(gen, 1, 1, 1024, 1024, 8, false);
}

TEST_CASE("attention kernels read strided head views in place and copy a strided head dim", "[attention]") {
  // the strided views' backward copies each head's keys and values into contiguous rows
  // first (tensor/cpu/attention.cpp, compact_kv); the contiguous copies' reads them in place
  Generator gen(73);
  const int64_t B = 2, T = 70, H = 3, hd = 8, C = H * hd;
  const Tensor qkv = gen.normal({B, T, 3 * C});  // a qkv projection's output
  auto head_view = [&](int part) {
    return qkv.slice(2, part * C, (part + 1) * C).reshape({B, T, H, hd}).permute({0, 2, 1, 3});
  };
  const Tensor q = head_view(0), k = head_view(1), v = head_view(2);
  REQUIRE(!q.is_contiguous());
  const Tensor dout_store = gen.normal({B, T, H, hd});
  const Tensor dout = dout_store.permute({0, 2, 1, 3});  // the gradient as the head merge hands it back
  for (bool causal : {true, false}) {
    INFO((causal ? "causal" : "full"));
    const AttentionForward views = attention_forward(q, k, v, 0.3f, causal);
    const AttentionForward copies = attention_forward(q.contiguous(), k.contiguous(), v.contiguous(), 0.3f, causal);
    CHECK(same_bits(views.out, copies.out));
    CHECK(same_bits(views.lse, copies.lse));
    const AttentionGrads gv = attention_backward(dout, q, k, v, views.out, views.lse, 0.3f, causal);
    const AttentionGrads gc = attention_backward(dout.contiguous(), q.contiguous(), k.contiguous(), v.contiguous(),
                                                 copies.out, copies.lse, 0.3f, causal);
    CHECK(same_bits(gv.dq, gc.dq));
    CHECK(same_bits(gv.dk, gc.dk));
    CHECK(same_bits(gv.dv, gc.dv));
    // a head dim with stride 2: copied, same numbers
    const Tensor wide = gen.normal({B, H, T, 2 * hd}).slice(3, 0, 2 * hd, 2);
    const AttentionForward strided = attention_forward(wide, k, v, 0.3f, causal);
    CHECK(same_bits(strided.out, attention_forward(wide.contiguous(), k, v, 0.3f, causal).out));
  }
}

TEST_CASE("attention kernels give the same bits at any thread count, on both backward paths", "[attention]") {
  Generator gen(74);
  // B * H = 2: one thread takes the per-head backward, three or five the split one
  // (key tiles, then query tiles); B * H = 12 keeps the per-head one up to 12 threads
  for (const Shape& shape : {Shape{1, 2, 150, 16}, Shape{3, 4, 70, 8}}) {
    INFO(to_string(shape));
    const Tensor q = gen.normal(shape), k = gen.normal(shape), v = gen.normal(shape), dout = gen.normal(shape);
    for (bool causal : {true, false}) {
      AttentionForward f1;
      AttentionGrads g1;
      {
        ScopedThreads one(1);
        f1 = attention_forward(q, k, v, 0.25f, causal);
        g1 = attention_backward(dout, q, k, v, f1.out, f1.lse, 0.25f, causal);
      }
      for (int threads : {2, 3, 5}) {
        INFO(threads << " threads" << (causal ? ", causal" : ""));
        ScopedThreads many(threads);
        const AttentionForward f = attention_forward(q, k, v, 0.25f, causal);
        const AttentionGrads g = attention_backward(dout, q, k, v, f.out, f.lse, 0.25f, causal);
        CHECK(same_bits(f.out, f1.out));
        CHECK(same_bits(f.lse, f1.lse));
        CHECK(same_bits(g.dq, g1.dq));
        CHECK(same_bits(g.dk, g1.dk));
        CHECK(same_bits(g.dv, g1.dv));
      }
    }
  }
}

TEST_CASE("attention kernels write into given head views the bits they return in new tensors", "[attention]") {
  Generator gen(75);
  // B * H = 2 with 3 threads takes the split backward, with 1 the per-head one; two batches,
  // so that a kernel ignoring the given views' batch stride is caught
  const int64_t B = 2, T = 150, H = 1, hd = 16, C = H * hd;
  const Tensor qkv = gen.normal({B, T, 3 * C}), dout = gen.normal({B, H, T, hd});
  auto heads_of = [&](const Tensor& t, int part) {
    return t.slice(2, part * C, (part + 1) * C).reshape({B, T, H, hd}).permute({0, 2, 1, 3});
  };
  const Tensor q = heads_of(qkv, 0), k = heads_of(qkv, 1), v = heads_of(qkv, 2);
  for (bool causal : {true, false})
    for (int threads : {1, 3}) {
      INFO((causal ? "causal, " : "full, ") << threads << " threads");
      ScopedThreads scoped(threads);
      const AttentionForward fresh = attention_forward(q, k, v, 0.3f, causal);
      const Tensor merged = Tensor::full({B, T, C}, 7.0f);  // (B, T, H hd), as attention_qkv merges heads
      const AttentionForward into = attention_forward(q, k, v, 0.3f, causal, heads_of(merged, 0));
      CHECK(into.out.data() == merged.data());
      CHECK(same_bits(merged.reshape({B, T, H, hd}).permute({0, 2, 1, 3}), fresh.out));
      CHECK(same_bits(into.lse, fresh.lse));
      const AttentionGrads g = attention_backward(dout, q, k, v, fresh.out, fresh.lse, 0.3f, causal);
      const Tensor dqkv = Tensor::full({B, T, 3 * C}, 7.0f);
      // the saved output read in place from its head view
      const AttentionGrads gi = attention_backward(dout, q, k, v, into.out, into.lse, 0.3f, causal,
                                                   {heads_of(dqkv, 0), heads_of(dqkv, 1), heads_of(dqkv, 2)});
      CHECK(gi.dk.data() == dqkv.data() + C);
      CHECK(same_bits(heads_of(dqkv, 0), g.dq));
      CHECK(same_bits(heads_of(dqkv, 1), g.dk));
      CHECK(same_bits(heads_of(dqkv, 2), g.dv));
    }
  // an output whose head dim is strided, or of another shape, is refused by name
  const Tensor wide = Tensor::zeros({B, H, T, 2 * hd}).slice(3, 0, 2 * hd, 2);
  CHECK_THROWS_WITH(attention_forward(q, k, v, 0.3f, true, wide),
                    Contains("attention_forward") && Contains("contiguous head dim"));
  CHECK_THROWS_WITH(attention_backward(dout, q, k, v, dout, Tensor::zeros({B, H, T}), 0.3f, true,
                                       {Tensor(), Tensor::zeros({B, H, T + 1, hd}), Tensor()}),
                    Contains("attention_backward") && Contains("is not (2, 1, 150, 16)"));
}

TEST_CASE("attention kernels refuse mismatched shapes, a causal mask with fewer keys, empty heads", "[attention]") {
  const Tensor q = Tensor::zeros({1, 2, 5, 4}), k = Tensor::zeros({1, 2, 6, 4});
  CHECK_THROWS_WITH(attention_forward(q, k, Tensor::zeros({1, 2, 6, 3}), 1.0f, false),
                    Contains("attention_forward") && Contains("do not match") && Contains("(1, 2, 6, 3)"));
  CHECK_THROWS_WITH(attention_forward(q, Tensor::zeros({1, 2, 4, 4}), Tensor::zeros({1, 2, 4, 4}), 1.0f, true),
                    Contains("at least as many keys as queries"));
  CHECK_THROWS_WITH(attention_forward(Tensor::zeros({2, 5, 4}), k, k, 1.0f, false), Contains("(B, H, rows, hd)"));
  CHECK_THROWS_WITH(attention_forward(q, Tensor::zeros({1, 2, 0, 4}), Tensor::zeros({1, 2, 0, 4}), 1.0f, false),
                    Contains("no keys"));
  CHECK_THROWS_WITH(attention_forward(Tensor::zeros({1, 2, 5, 0}), Tensor::zeros({1, 2, 5, 0}),
                                      Tensor::zeros({1, 2, 5, 0}), 1.0f, false),
                    Contains("head dim is empty"));
  const AttentionForward f = attention_forward(q, k, k, 1.0f, false);
  CHECK_THROWS_WITH(attention_backward(q, q, k, k, f.out, Tensor::zeros({1, 2, 4}), 1.0f, false),
                    Contains("attention_backward") && Contains("lse"));
  CHECK(attention_forward(Tensor::zeros({1, 2, 0, 4}), k, k, 1.0f, true).out.shape() == Shape{1, 2, 0, 4});
}
