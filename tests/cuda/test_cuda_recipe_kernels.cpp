// [cuda] The kernels the papers' recipes add, on the GPU against the CPU kernels: BHyT's
// code form (no centring), DyT without beta, and the rotary position embedding.
#include "tensor/norms.h"
#include "tensor/ops.h"
#include "tests/cuda/cuda_test.h"

using namespace nl;
using namespace nl::test;

TEST_CASE("cuda: bhyt code form forward and backward", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(1621);
  for (const Shape& s : std::vector<Shape>{{1, 7}, {37, 129}, {3, 13000}}) {
    const int64_t C = s[1];
    Tensor x = add_scalar(gen.normal(s), 0.8f), dy = gen.normal(s), gamma = gen.normal({C}, 1.0f, 0.3f);
    Tensor lam = Tensor::from_vector({1.7f}, {1});
    BHyTForward f = bhyt_forward(x, gamma, lam, 10.0f, 1e-5f, false);
    BHyTForward df = bhyt_forward(gpu(x), gpu(gamma), gpu(lam), 10.0f, 1e-5f, false);
    CHECK_PARITY(df.y, f.y, 1e-4, 1e-5);
    CHECK_PARITY(df.mean, f.mean, 0, 0);
    CHECK_PARITY(df.sigma, f.sigma, 1e-5, 1e-6);
    BHyTGrads g = bhyt_backward(dy, x, gamma, lam, f.mean, f.sigma, 10.0f, false);
    BHyTGrads dg = bhyt_backward(gpu(dy), gpu(x), gpu(gamma), gpu(lam), gpu(f.mean), gpu(f.sigma), 10.0f, false);
    CHECK_PARITY(dg.dx, g.dx, 1e-4, 1e-5);
    CHECK_PARITY(dg.dgamma, g.dgamma, 1e-4, 1e-5);
    CHECK_PARITY(dg.dlambda, g.dlambda, 1e-4, 1e-5);
  }
}

TEST_CASE("cuda: dyt forward without beta", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(1622);
  Tensor x = gen.normal({37, 129}), gamma = gen.normal({129}), alpha = Tensor::from_vector({0.7f}, {1});
  CHECK_PARITY(dyt_forward(gpu(x), gpu(alpha), gpu(gamma), Tensor()), dyt_forward(x, alpha, gamma, Tensor()), 1e-5,
               1e-6);
}

TEST_CASE("cuda: rope forward and backward", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(1623);
  Tensor x = gen.normal({3, 17, 96}), dy = gen.normal({3, 17, 96});
  CHECK_PARITY(rope_forward(gpu(x), 16, 64, 5, 10000.0f), rope_forward(x, 16, 64, 5, 10000.0f), 1e-5, 1e-6);
  CHECK_PARITY(rope_backward(gpu(dy), 16, 64, 5, 10000.0f), rope_backward(dy, 16, 64, 5, 10000.0f), 1e-5, 1e-6);
}
