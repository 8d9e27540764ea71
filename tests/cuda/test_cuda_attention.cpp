// [cuda] The fused attention kernels on the GPU against the CPU kernels as the oracle:
// forward (output and log-sum-exp) and backward (dq, dk, dv), causal and not, T ending
// mid-tile, T = 1, more keys than queries, head dims that are not a multiple of 32,
// strided head views of a qkv tensor; the same bits on a second run.
#include "tests/cuda/cuda_test.h"

using namespace nl;
using namespace nl::test;

namespace {

// Different summation orders on the two devices (the CPU tiles by 64 keys, the GPU sums
// key by key), one float32 rounding per term of sums over up to S keys.
constexpr double kAttnRtol = 1e-4, kAttnAtol = 2e-5;

void check_parity(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dout, float scale, bool causal) {
  INFO("q " << to_string(q.shape()) << " k " << to_string(k.shape()) << (causal ? " causal" : " full"));
  const AttentionForward cpu = attention_forward(q, k, v, scale, causal);
  const AttentionForward gpu_f = attention_forward(gpu(q), gpu(k), gpu(v), scale, causal);
  CHECK_PARITY(gpu_f.out, cpu.out, kAttnRtol, kAttnAtol);
  CHECK_PARITY(gpu_f.lse, cpu.lse, kAttnRtol, kAttnAtol);
  const AttentionGrads want = attention_backward(dout, q, k, v, cpu.out, cpu.lse, scale, causal);
  const AttentionGrads got =
      attention_backward(gpu(dout), gpu(q), gpu(k), gpu(v), gpu_f.out, gpu_f.lse, scale, causal);
  CHECK_PARITY(got.dq, want.dq, kAttnRtol, kAttnAtol);
  CHECK_PARITY(got.dk, want.dk, kAttnRtol, kAttnAtol);
  CHECK_PARITY(got.dv, want.dv, kAttnRtol, kAttnAtol);
}

}  // namespace

TEST_CASE("cuda: fused attention forward and backward against the CPU kernels", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(90);
  struct Case {
    int64_t B, H, T, S, hd;
    bool causal;
  };
  const Case cases[] = {
      {2, 3, 7, 7, 16, true},    {2, 3, 7, 7, 16, false},   {1, 2, 1, 1, 8, true},
      {1, 2, 65, 65, 32, true},  {2, 1, 130, 130, 64, true}, {1, 2, 33, 33, 128, false},
      {1, 3, 5, 70, 12, true},   {2, 2, 9, 130, 40, false},  {1, 1, 300, 300, 64, true},
  };
  for (const Case& c : cases) {
    const Tensor q = gen.normal({c.B, c.H, c.T, c.hd}), k = gen.normal({c.B, c.H, c.S, c.hd});
    const Tensor v = gen.normal({c.B, c.H, c.S, c.hd}), dout = gen.normal({c.B, c.H, c.T, c.hd});
    check_parity(q, k, v, dout, 1.0f / std::sqrt((float)c.hd), c.causal);
  }
}

TEST_CASE("cuda: fused attention on strided head views, and the same bits twice", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(91);
  const int64_t B = 2, T = 70, H = 3, hd = 24, C = H * hd;
  const Tensor qkv = gen.normal({B, T, 3 * C});
  const Tensor dqkv = gpu(qkv);
  auto head_view = [&](const Tensor& t, int part) {
    return t.slice(2, part * C, (part + 1) * C).reshape({B, T, H, hd}).permute({0, 2, 1, 3});
  };
  const Tensor dout = gen.normal({B, H, T, hd});
  check_parity(head_view(qkv, 0), head_view(qkv, 1), head_view(qkv, 2), dout, 0.2f, true);
  const AttentionForward a = attention_forward(head_view(dqkv, 0), head_view(dqkv, 1), head_view(dqkv, 2), 0.2f, true);
  const AttentionForward b = attention_forward(head_view(dqkv, 0), head_view(dqkv, 1), head_view(dqkv, 2), 0.2f, true);
  CHECK(a.out.to_vector() == b.out.to_vector());
  const AttentionGrads ga = attention_backward(gpu(dout), head_view(dqkv, 0), head_view(dqkv, 1), head_view(dqkv, 2),
                                               a.out, a.lse, 0.2f, true);
  const AttentionGrads gb = attention_backward(gpu(dout), head_view(dqkv, 0), head_view(dqkv, 1), head_view(dqkv, 2),
                                               a.out, a.lse, 0.2f, true);
  CHECK(ga.dk.to_vector() == gb.dk.to_vector());
  CHECK(ga.dq.to_vector() == gb.dq.to_vector());
  // a head dim beyond what the kernels hold is refused, naming the limit
  const Tensor wide = gpu(gen.normal({1, 1, 4, 130}));
  CHECK_THROWS_WITH(attention_forward(wide, wide, wide, 1.0f, false), Catch::Contains("up to 128"));
}
