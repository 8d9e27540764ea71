// The kernels the papers' recipes add, against plain double-precision loops written
// here: BHyT in the released code's form (no centring, D = kappa sqrt(mean(x^2) + eps)),
// DyT without beta, and the rotary position embedding (forward and backward). Backward
// against central finite differences of the same references, contracted with a random
// upstream gradient r (L = sum(y * r)).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tensor/norms.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "tests/tensor/double_reference.h"
#include "tests/test_util.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;

namespace {

// gamma * tanh(lambda * x / (kappa * sqrt(mean(x^2) + eps))), row by row
Vec ref_bhyt_code(const Vec& x, const Vec& gamma, double lambda, int64_t N, int64_t C, double kappa, double eps) {
  Vec y(N * C);
  for (int64_t n = 0; n < N; ++n) {
    double ms = 0;
    for (int64_t c = 0; c < C; ++c) ms += x[n * C + c] * x[n * C + c] / (double)C;
    const double D = kappa * std::sqrt(ms + eps);
    for (int64_t c = 0; c < C; ++c) y[n * C + c] = gamma[c] * std::tanh(lambda * x[n * C + c] / D);
  }
  return y;
}

// Plain loops of RoPE on x (B, T, W): heads of hd channels in [0, rotated), pair
// (2i, 2i+1) at position first + t turned by (first + t) base^(-2i/hd) times `sign`.
Vec ref_rope(const Vec& x, int64_t B, int64_t T, int64_t W, int64_t hd, int64_t rotated, int64_t first, double base,
             double sign = 1.0) {
  Vec y = x;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < rotated / hd; ++h)
        for (int64_t i = 0; i < hd / 2; ++i) {
          const double a = sign * (double)(first + t) / std::pow(base, 2.0 * (double)i / (double)hd);
          const int64_t at = (b * T + t) * W + h * hd + 2 * i;
          y[at] = x[at] * std::cos(a) - x[at + 1] * std::sin(a);
          y[at + 1] = x[at] * std::sin(a) + x[at + 1] * std::cos(a);
        }
  return y;
}

struct Rows {
  int64_t N, C;
  float mean, std;
};
const Rows kRows[] = {{3, 5, 0.0f, 1.0f}, {4, 128, 0.3f, 2.0f}, {2, 2, -1.0f, 1.0f}, {4, 64, 50.0f, 0.5f}};

}  // namespace

TEST_CASE("bhyt kernel, code form: forward matches kappa sqrt(mean(x^2) + eps), saving mean 0", "[norms][bhyt]") {
  Generator gen(1601);
  for (float kappa : {10.0f, 1.5f})
    for (const Rows& k : kRows) {
      INFO("(" << k.N << ", " << k.C << ") mean " << k.mean << ", kappa " << kappa);
      Tensor x = gen.normal({k.N, k.C}, k.mean, k.std), gamma = gen.normal({k.C}, 1.0f, 0.5f);
      auto out = bhyt_forward(x, gamma, Tensor::from_vector({1.3f}, {1}), kappa, 1e-5f, /*centred=*/false);
      const Vec xd = to_double(x);
      check_near("y", out.y, ref_bhyt_code(xd, to_double(gamma), 1.3, k.N, k.C, kappa, 1e-5), 1e-5);
      Vec sigma(k.N);
      for (int64_t n = 0; n < k.N; ++n) {
        double ms = 0;
        for (int64_t c = 0; c < k.C; ++c) ms += xd[n * k.C + c] * xd[n * k.C + c] / (double)k.C;
        sigma[n] = std::sqrt(ms + 1e-5);
      }
      check_near("sigma", out.sigma, sigma, 1e-6);
      CHECK(out.mean.to_vector() == std::vector<float>((size_t)k.N, 0.0f));
    }
}

TEST_CASE("bhyt kernel, code form: backward matches finite differences", "[norms][bhyt]") {
  Generator gen(1602);
  for (float kappa : {10.0f, 1.5f})
    for (const Rows& k : kRows) {
      INFO("(" << k.N << ", " << k.C << ") mean " << k.mean << ", kappa " << kappa);
      const int64_t N = k.N, C = k.C;
      Tensor x = gen.normal({N, C}, k.mean, k.std), gamma = gen.normal({C}, 1.0f, 0.5f), dy = gen.normal({N, C});
      Tensor lam = Tensor::from_vector({1.3f}, {1});
      auto fwd = bhyt_forward(x, gamma, lam, kappa, 1e-5f, false);
      auto grads = bhyt_backward(dy, x, gamma, lam, fwd.mean, fwd.sigma, kappa, false);
      const Vec xd = to_double(x), gd = to_double(gamma), r = to_double(dy);
      const double kd = kappa;
      check_near("dx", grads.dx,
                 fd_grad([&](const Vec& v) { return ref_bhyt_code(v, gd, 1.3, N, C, kd, 1e-5); }, xd, r), 1e-5);
      check_near("dgamma", grads.dgamma,
                 fd_grad([&](const Vec& v) { return ref_bhyt_code(xd, v, 1.3, N, C, kd, 1e-5); }, gd, r), 1e-5);
      check_near("dlambda", grads.dlambda,
                 fd_grad([&](const Vec& v) { return ref_bhyt_code(xd, gd, v[0], N, C, kd, 1e-5); }, Vec{1.3}, r),
                 1e-5);
    }
}

TEST_CASE("bhyt kernel, code form: the two forms agree on zero-mean rows and differ on others", "[norms][bhyt]") {
  // a zero-mean row has s^2 = mean(x^2) and |mu| = 0: both denominators are kappa sigma
  Tensor zero_mean = Tensor::from_vector({-2, -1, 1, 2, 0.5f, -0.5f}, {1, 6}), gamma = Tensor::ones({6});
  Tensor lam = Tensor::from_vector({2.0f}, {1});
  CHECK_CLOSE(bhyt_forward(zero_mean, gamma, lam, 10.0f, 1e-5f, false).y,
              bhyt_forward(zero_mean, gamma, lam, 10.0f, 1e-5f, true).y, 1e-6, 1e-7);
  Tensor offset = Tensor::from_vector({3, 4, 5, 6, 5.5f, 4.5f}, {1, 6});
  const auto code = bhyt_forward(offset, gamma, lam, 10.0f, 1e-5f, false).y.to_vector();
  const auto paper = bhyt_forward(offset, gamma, lam, 10.0f, 1e-5f, true).y.to_vector();
  CHECK(std::fabs(code[0] - paper[0]) > 1e-2);
}

TEST_CASE("bhyt kernel, code form: parameter gradients are the same bits for any thread count", "[norms][bhyt]") {
  Generator gen(1603);
  Tensor x = gen.normal({300, 256}, 0.5f, 1.0f), dy = gen.normal({300, 256});
  Tensor gamma = gen.normal({256}, 1.0f, 0.5f), lam = Tensor::from_vector({1.0f}, {1});
  auto fwd = bhyt_forward(x, gamma, lam, 10.0f, 1e-5f, false);
  const int before = num_threads();
  set_num_threads(1);
  BHyTGrads one = bhyt_backward(dy, x, gamma, lam, fwd.mean, fwd.sigma, 10.0f, false);
  set_num_threads(4);
  BHyTGrads many = bhyt_backward(dy, x, gamma, lam, fwd.mean, fwd.sigma, 10.0f, false);
  set_num_threads(before);
  CHECK(one.dgamma.to_vector() == many.dgamma.to_vector());
  CHECK(one.dlambda.to_vector() == many.dlambda.to_vector());
  CHECK(one.dx.to_vector() == many.dx.to_vector());
}

TEST_CASE("dyt kernel without beta: gamma tanh(alpha x), the same bits as with beta 0", "[norms]") {
  Generator gen(1604);
  Tensor x = gen.normal({7, 33}, 0.2f, 1.5f), gamma = gen.normal({33}, 1.0f, 0.5f);
  Tensor alpha = Tensor::from_vector({0.8f}, {1});
  Tensor y = dyt_forward(x, alpha, gamma, Tensor());
  const Vec xd = to_double(x), gd = to_double(gamma);
  Vec want(xd.size());
  for (size_t i = 0; i < xd.size(); ++i) want[i] = gd[i % 33] * std::tanh(0.8 * xd[i]);
  check_near("y", y, want, 1e-6);
  CHECK(y.to_vector() == dyt_forward(x, alpha, gamma, Tensor::zeros({33})).to_vector());
  CHECK_THROWS_WITH(dyt_forward(x, alpha, gamma, Tensor::zeros({32})), Contains("beta"));
}

TEST_CASE("rope kernel forward equals plain loops: pairs (2i, 2i+1), base 10000, positions from first", "[rope]") {
  Generator gen(1605);
  struct Case {
    int64_t B, T, W, hd, rotated, first;
  };
  for (const Case& k : {Case{2, 5, 24, 8, 24, 0}, Case{1, 7, 36, 4, 24, 3}, Case{3, 4, 96, 32, 64, 60}}) {
    INFO("B " << k.B << " T " << k.T << " W " << k.W << " hd " << k.hd << " rotated " << k.rotated << " first "
              << k.first);
    Tensor x = gen.normal({k.B, k.T, k.W});
    Tensor y = rope_forward(x, k.hd, k.rotated, k.first, 10000.0f);
    check_near("y", y, ref_rope(to_double(x), k.B, k.T, k.W, k.hd, k.rotated, k.first, 10000.0), 1e-6);
    // the channels past `rotated` (attention's v) are copied as they are
    CHECK(y.slice(2, k.rotated, k.W).contiguous().to_vector() == x.slice(2, k.rotated, k.W).contiguous().to_vector());
  }
}

TEST_CASE("rope kernel backward: finite differences, and the inverse rotation undoes the forward", "[rope]") {
  Generator gen(1606);
  const int64_t B = 2, T = 6, W = 24, hd = 8, rotated = 16, first = 5;
  Tensor x = gen.normal({B, T, W}), dy = gen.normal({B, T, W});
  Tensor dx = rope_backward(dy, hd, rotated, first, 10000.0f);
  check_near("dx", dx,
             fd_grad([&](const Vec& v) { return ref_rope(v, B, T, W, hd, rotated, first, 10000.0); }, to_double(x),
                     to_double(dy)),
             1e-5);
  CHECK_CLOSE(rope_backward(rope_forward(x, hd, rotated, first, 10000.0f), hd, rotated, first, 10000.0f), x, 1e-5,
              1e-6);
}

TEST_CASE("rope kernel: a rotated query and key meet by their positions' difference only", "[rope]") {
  // q at position p and k at position s: q(p) . k(s) depends on p - s alone (the point of RoPE)
  Generator gen(1607);
  const int64_t hd = 16;
  Tensor q = gen.normal({1, 1, hd}), k = gen.normal({1, 1, hd});
  auto dot_at = [&](int64_t p, int64_t s) {
    const auto a = rope_forward(q, hd, hd, p, 10000.0f).to_vector(),
               b = rope_forward(k, hd, hd, s, 10000.0f).to_vector();
    double d = 0;
    for (int64_t i = 0; i < hd; ++i) d += (double)a[i] * b[i];
    return d;
  };
  CHECK(dot_at(7, 3) == Approx(dot_at(4, 0)).margin(1e-5));
  CHECK(dot_at(40, 31) == Approx(dot_at(9, 0)).margin(1e-5));
  CHECK(std::fabs(dot_at(7, 3) - dot_at(7, 2)) > 1e-3);
}

TEST_CASE("rope kernel rejects odd heads, a rotated width off the heads, and a non-contiguous input", "[rope]") {
  Tensor x = Tensor::zeros({1, 2, 12});
  CHECK_THROWS_WITH(rope_forward(x, 3, 12, 0, 10000.0f), Contains("rope_forward") && Contains("even"));
  CHECK_THROWS_WITH(rope_forward(x, 4, 10, 0, 10000.0f), Contains("multiple of the head dimension"));
  CHECK_THROWS_WITH(rope_forward(x, 4, 16, 0, 10000.0f), Contains("within the row width"));
  CHECK_THROWS_WITH(rope_backward(x.transpose(1, 2), 2, 2, 0, 10000.0f),
                    Contains("rope_backward") && Contains("contiguous"));
  CHECK_THROWS_WITH(rope_forward(x, 4, 12, -1, 10000.0f), Contains("first position"));
  CHECK_THROWS_WITH(rope_forward(Tensor::zeros({2, 12}), 4, 12, 0, 10000.0f), Contains("(B, T, W)"));
}
