// [cuda] The fused norm kernels of tensor/norms.h on the GPU against the CPU kernels,
// forward and backward, at row lengths below and above one block of threads and above
// the shared-memory row cache.
#include "tensor/norms.h"
#include "tests/cuda/cuda_test.h"

using namespace nl;
using namespace nl::test;

namespace {

// norm outputs: a few ulps per element; parameter gradients: sums over rows
constexpr double kRtolNorm = 1e-4, kAtolNorm = 1e-5;
const std::vector<Shape> kRowShapes = {{1, 7}, {37, 129}, {300, 768}, {3, 13000}};

}  // namespace

TEST_CASE("cuda: layernorm forward and backward", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(21);
  for (const Shape& s : kRowShapes) {
    const int64_t C = s[1];
    Tensor x = add_scalar(mul_scalar(gen.normal(s), 2.0f), 0.5f), dy = gen.normal(s);
    Tensor gamma = gen.normal({C}), beta = gen.normal({C});
    LayerNormForward f = layernorm_forward(x, gamma, beta, 1e-5f);
    LayerNormForward df = layernorm_forward(gpu(x), gpu(gamma), gpu(beta), 1e-5f);
    CHECK_PARITY(df.y, f.y, kRtolNorm, kAtolNorm);
    CHECK_PARITY(df.mean, f.mean, kRtolNorm, kAtolNorm);
    CHECK_PARITY(df.rstd, f.rstd, kRtolNorm, kAtolNorm);
    LayerNormGrads g = layernorm_backward(dy, x, gamma, f.mean, f.rstd);
    LayerNormGrads dg = layernorm_backward(gpu(dy), gpu(x), gpu(gamma), gpu(f.mean), gpu(f.rstd));
    CHECK_PARITY(dg.dx, g.dx, kRtolNorm, kAtolNorm);
    CHECK_PARITY(dg.dgamma, g.dgamma, kRtolNorm, kAtolNorm);
    CHECK_PARITY(dg.dbeta, g.dbeta, kRtolNorm, kAtolNorm);
  }
  // a large offset: mean 1e3, std 1e-1 (the double statistics keep it)
  Tensor x = add_scalar(mul_scalar(gen.normal({5, 301}), 0.1f), 1000.0f);
  Tensor gamma = Tensor::ones({301}), beta = Tensor::zeros({301});
  CHECK_PARITY(layernorm_forward(gpu(x), gpu(gamma), gpu(beta), 1e-5f).y, layernorm_forward(x, gamma, beta, 1e-5f).y,
               1e-3, 1e-4);
}

TEST_CASE("cuda: rmsnorm forward and backward, with and without bias", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(22);
  for (const Shape& s : kRowShapes) {
    const int64_t C = s[1];
    Tensor x = gen.normal(s), dy = gen.normal(s), gamma = gen.normal({C}), beta = gen.normal({C});
    for (bool bias : {false, true}) {
      Tensor b = bias ? beta : Tensor();
      RMSNormForward f = rmsnorm_forward(x, gamma, b, 1e-6f);
      RMSNormForward df = rmsnorm_forward(gpu(x), gpu(gamma), bias ? gpu(beta) : Tensor(), 1e-6f);
      CHECK_PARITY(df.y, f.y, kRtolNorm, kAtolNorm);
      CHECK_PARITY(df.rstd, f.rstd, kRtolNorm, kAtolNorm);
      RMSNormGrads g = rmsnorm_backward(dy, x, gamma, f.rstd, bias);
      RMSNormGrads dg = rmsnorm_backward(gpu(dy), gpu(x), gpu(gamma), gpu(f.rstd), bias);
      CHECK_PARITY(dg.dx, g.dx, kRtolNorm, kAtolNorm);
      CHECK_PARITY(dg.dgamma, g.dgamma, kRtolNorm, kAtolNorm);
      CHECK(dg.dbeta.defined() == bias);
      if (bias) CHECK_PARITY(dg.dbeta, g.dbeta, kRtolNorm, kAtolNorm);
    }
  }
}

TEST_CASE("cuda: dyt forward and backward", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(23);
  for (const Shape& s : kRowShapes) {
    const int64_t C = s[1];
    Tensor x = mul_scalar(gen.normal(s), 3.0f), dy = gen.normal(s);
    Tensor alpha = Tensor::full({1}, 0.7f), gamma = gen.normal({C}), beta = gen.normal({C});
    CHECK_PARITY(dyt_forward(gpu(x), gpu(alpha), gpu(gamma), gpu(beta)), dyt_forward(x, alpha, gamma, beta),
                 kRtolNorm, kAtolNorm);
    DyTGrads g = dyt_backward(dy, x, alpha, gamma);
    DyTGrads dg = dyt_backward(gpu(dy), gpu(x), gpu(alpha), gpu(gamma));
    CHECK_PARITY(dg.dx, g.dx, kRtolNorm, kAtolNorm);
    CHECK_PARITY(dg.dalpha, g.dalpha, kRtolNorm, 1e-4);
    CHECK_PARITY(dg.dgamma, g.dgamma, kRtolNorm, kAtolNorm);
    CHECK_PARITY(dg.dbeta, g.dbeta, kRtolNorm, kAtolNorm);
  }
}

TEST_CASE("cuda: bhyt (exact and with a given denominator) forward and backward", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(24);
  for (const Shape& s : kRowShapes) {
    const int64_t N = s[0], C = s[1];
    Tensor x = add_scalar(gen.normal(s), 0.3f), dy = gen.normal(s);
    Tensor gamma = gen.normal({C}), lambda = Tensor::full({1}, 1.3f);
    BHyTForward f = bhyt_forward(x, gamma, lambda, 10.0f, 1e-5f);
    BHyTForward df = bhyt_forward(gpu(x), gpu(gamma), gpu(lambda), 10.0f, 1e-5f);
    CHECK_PARITY(df.y, f.y, kRtolNorm, kAtolNorm);
    CHECK_PARITY(df.mean, f.mean, kRtolNorm, kAtolNorm);
    CHECK_PARITY(df.sigma, f.sigma, kRtolNorm, kAtolNorm);
    BHyTGrads g = bhyt_backward(dy, x, gamma, lambda, f.mean, f.sigma, 10.0f);
    BHyTGrads dg = bhyt_backward(gpu(dy), gpu(x), gpu(gamma), gpu(lambda), gpu(f.mean), gpu(f.sigma), 10.0f);
    CHECK_PARITY(dg.dx, g.dx, kRtolNorm, kAtolNorm);
    CHECK_PARITY(dg.dgamma, g.dgamma, kRtolNorm, kAtolNorm);
    CHECK_PARITY(dg.dlambda, g.dlambda, kRtolNorm, 1e-4);

    Tensor denom = add_scalar(abs(gen.normal({N})), 0.5f);
    CHECK_PARITY(bhyt_denom_forward(gpu(x), gpu(denom), gpu(gamma), gpu(lambda)),
                 bhyt_denom_forward(x, denom, gamma, lambda), kRtolNorm, kAtolNorm);
    BHyTDenomGrads h = bhyt_denom_backward(dy, x, denom, gamma, lambda);
    BHyTDenomGrads dh = bhyt_denom_backward(gpu(dy), gpu(x), gpu(denom), gpu(gamma), gpu(lambda));
    CHECK_PARITY(dh.dx, h.dx, kRtolNorm, kAtolNorm);
    CHECK_PARITY(dh.ddenom, h.ddenom, kRtolNorm, kAtolNorm);
    CHECK_PARITY(dh.dgamma, h.dgamma, kRtolNorm, kAtolNorm);
    CHECK_PARITY(dh.dlambda, h.dlambda, kRtolNorm, 1e-4);
  }
}
