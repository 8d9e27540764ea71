// Plain-loop references in double for the layer tests (tests/nn/test_layers.cpp,
// test_vit.cpp): the linear, GELU, LayerNorm and multi-head attention written out
// element by element, for the library's fused and batched versions to be checked against.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace nl::test {

inline const std::vector<std::string> kNorms = {"ln", "rms", "cbwc", "dyt", "bhyt", "bhyt-exact"};

inline std::vector<double> to_d(const Tensor& t) {
  std::vector<double> out;
  for (float v : t.to_vector()) out.push_back(v);
  return out;
}

inline Tensor from_d(const std::vector<double>& v, const Shape& shape) {
  std::vector<float> f(v.begin(), v.end());
  return Tensor::from_vector(f, shape);
}

// y (N, out) = x (N, in) W^T (out, in) + b (out), in double
inline std::vector<double> linear_naive(const std::vector<double>& x, int64_t N, int64_t in, const std::vector<double>& W,
                                 const std::vector<double>& b, int64_t out) {
  std::vector<double> y(N * out);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < out; ++o) {
      double s = b.empty() ? 0.0 : b[o];
      for (int64_t i = 0; i < in; ++i) s += x[n * in + i] * W[o * in + i];
      y[n * out + o] = s;
    }
  return y;
}

inline double gelu_naive(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

// Multi-head attention of NORMS/DESIGN by plain loops, x (B, T, C) -> (B, T, C).
// rope: queries and keys of the token at position t turned pair by pair, (2i, 2i+1) by
// the angle t 10000^(-2i/hd), before the scores (the Llama block).
inline std::vector<double> attention_naive(const std::vector<double>& x, int64_t B, int64_t T, int64_t C, int64_t H,
                                    bool causal, const std::vector<double>& Wqkv, const std::vector<double>& bqkv,
                                    const std::vector<double>& Wo, const std::vector<double>& bo, bool rope = false) {
  const int64_t hd = C / H;
  std::vector<double> qkv = linear_naive(x, B * T, C, Wqkv, bqkv, 3 * C);  // (B*T, 3C)
  if (rope)
    for (int64_t r = 0; r < B * T; ++r)
      for (int64_t e = 0; e < 2 * C; e += 2) {  // every pair of q and of k
        const double a = (double)(r % T) / std::pow(10000.0, (double)(e % hd) / (double)hd);
        double* p = &qkv[r * 3 * C + e];
        const double u = p[0], w = p[1];
        p[0] = u * std::cos(a) - w * std::sin(a);
        p[1] = u * std::sin(a) + w * std::cos(a);
      }
  std::vector<double> cat(B * T * C, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        const double* q = &qkv[(b * T + i) * 3 * C + h * hd];
        std::vector<double> s(T, -INFINITY);
        double mx = -INFINITY;
        for (int64_t j = 0; j < T; ++j) {
          if (causal && j > i) continue;
          const double* k = &qkv[(b * T + j) * 3 * C + C + h * hd];
          double d = 0;
          for (int64_t e = 0; e < hd; ++e) d += q[e] * k[e];
          s[j] = d / std::sqrt((double)hd);
          mx = std::max(mx, s[j]);
        }
        double z = 0;
        for (int64_t j = 0; j < T; ++j) z += (s[j] == -INFINITY) ? 0.0 : std::exp(s[j] - mx);
        for (int64_t j = 0; j < T; ++j) {
          if (s[j] == -INFINITY) continue;
          const double p = std::exp(s[j] - mx) / z;
          const double* v = &qkv[(b * T + j) * 3 * C + 2 * C + h * hd];
          for (int64_t e = 0; e < hd; ++e) cat[(b * T + i) * C + h * hd + e] += p * v[e];
        }
      }
  return linear_naive(cat, B * T, C, Wo, bo, C);
}

// LayerNorm over rows of width C (biased variance, eps 1e-5)
inline std::vector<double> layernorm_naive(const std::vector<double>& x, int64_t C, const std::vector<double>& g,
                                  const std::vector<double>& b) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / C; ++r) {
    double mu = 0, var = 0;
    for (int64_t i = 0; i < C; ++i) mu += x[r * C + i];
    mu /= (double)C;
    for (int64_t i = 0; i < C; ++i) var += (x[r * C + i] - mu) * (x[r * C + i] - mu);
    var /= (double)C;
    for (int64_t i = 0; i < C; ++i) y[r * C + i] = g[i] * (x[r * C + i] - mu) / std::sqrt(var + 1e-5) + b[i];
  }
  return y;
}

}  // namespace nl::test
