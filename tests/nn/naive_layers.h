// Plain-loop references in double for the layer tests (tests/nn/test_layers.cpp,
// test_vit.cpp, test_bhyt_block.cpp, ...): the linear, GELU, LayerNorm, row statistics,
// multi-head attention and the ||W_V W_O||_F^2 of BHyT's c_attn written out element by
// element, for the library's fused and batched versions to be checked against.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/attention.h"
#include "nn/norms/registry.h"
#include "tensor/tensor.h"

namespace nl::test {

// Every registered norm (nn/norms/kinds.def), in registration order: the "for every
// norm" tests run on each, so a norm added in one file is tested like the first five.
inline std::vector<std::string> registered_norms() {
  std::vector<std::string> names;
  for (const NormKind& k : norm_kinds()) names.push_back(k.name);
  return names;
}
inline const std::vector<std::string> kNorms = registered_norms();

// The norms whose initial parameter values the GPT-2 initialisation test spells out
// (its expected alpha and lambda are set through these kinds' own options).
inline const std::vector<std::string> kInitNorms = {"ln", "rms", "cbwc", "dyt", "bhyt", "bhyt-exact"};

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
inline std::vector<double> linear_naive(const std::vector<double>& x, int64_t N, int64_t in,
                                        const std::vector<double>& W, const std::vector<double>& b, int64_t out) {
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

struct RowMoments {
  double mean = 0, var = 0;
};

// The mean and biased variance of each row of width C: sum, divide, then the squared
// deviations from that mean
inline std::vector<RowMoments> row_moments(const std::vector<double>& x, int64_t C) {
  std::vector<RowMoments> out(x.size() / C);
  for (size_t r = 0; r < out.size(); ++r) {
    double mu = 0, var = 0;
    for (int64_t i = 0; i < C; ++i) mu += x[r * C + i];
    mu /= (double)C;
    for (int64_t i = 0; i < C; ++i) var += (x[r * C + i] - mu) * (x[r * C + i] - mu);
    out[r] = {mu, var / (double)C};
  }
  return out;
}

// LayerNorm over rows of width C (biased variance, eps 1e-5)
inline std::vector<double> layernorm_naive(const std::vector<double>& x, int64_t C, const std::vector<double>& g,
                                  const std::vector<double>& b) {
  std::vector<double> y(x.size());
  const std::vector<RowMoments> m = row_moments(x, C);
  for (size_t r = 0; r < m.size(); ++r)
    for (int64_t i = 0; i < C; ++i)
      y[r * C + i] = g[i] * (x[r * C + i] - m[r].mean) / std::sqrt(m[r].var + 1e-5) + b[i];
  return y;
}

// BHyT* by hand with the statistics of the rows of `stats` applied to the rows of `h`:
// gamma tanh(lambda h / (kappa sqrt(s^2 + added_var + eps) + |mu|)), mu and s^2 of
// stats. h = stats and added_var = 0 is the exact BHyT* of h; stats the block input and
// added_var = c_attn lambda1^2 / kappa^2 the block-level approximation of site 2.
inline std::vector<double> bhyt_by_hand(const std::vector<double>& stats, const std::vector<double>& h, int64_t C,
                                        const std::vector<double>& gamma, double lambda, double kappa, double eps,
                                        double added_var = 0) {
  std::vector<double> y(h.size());
  const std::vector<RowMoments> m = row_moments(stats, C);
  for (size_t r = 0; r < m.size(); ++r) {
    const double denom = kappa * std::sqrt(m[r].var + added_var + eps) + std::fabs(m[r].mean);
    for (int64_t e = 0; e < C; ++e) y[r * C + e] = gamma[e] * std::tanh(lambda * h[r * C + e] / denom);
  }
  return y;
}

// The exact BHyT* of the rows of x
inline std::vector<double> bhyt_by_hand(const std::vector<double>& x, int64_t C, const std::vector<double>& gamma,
                                        double lambda, double kappa, double eps) {
  return bhyt_by_hand(x, x, C, gamma, lambda, kappa, eps);
}

// ||W_V W_O||_F^2 of an attention layer in the x W convention, by loops over its Linear
// weights (out, in): W_V = rows [2C, 3C) of the qkv weight, and entry (i, j) of
// Wv^T Wo^T is sum_k Wv[k][i] Wo[j][k]
inline double frobenius2_by_hand(const SelfAttention& attn) {
  const int64_t C = attn.dim;
  auto wqkv = to_d(attn.qkv->weight.value()), wo = to_d(attn.proj->weight.value());
  double f = 0;
  for (int64_t i = 0; i < C; ++i)
    for (int64_t j = 0; j < C; ++j) {
      double s = 0;
      for (int64_t k = 0; k < C; ++k) s += wqkv[(2 * C + k) * C + i] * wo[j * C + k];
      f += s * s;
    }
  return f;
}

}  // namespace nl::test
