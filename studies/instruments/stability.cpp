#include "studies/instruments/stability.h"

#include <cmath>

#include "tensor/ops.h"
#include "tensor/random.h"

namespace nl {

namespace {

// ||b - a||_F in double; the shapes must agree.
double distance(const Tensor& a, const Tensor& b) {
  NL_CHECK(a.shape() == b.shape(), "noise_stability: f returned ", describe(b), " for the perturbed input but ",
           describe(a), " for e");
  const std::vector<float> va = a.to_vector(), vb = b.to_vector();
  double s = 0;
  for (size_t i = 0; i < va.size(); ++i) s += ((double)vb[i] - va[i]) * ((double)vb[i] - va[i]);
  return std::sqrt(s);
}

}  // namespace

std::vector<std::vector<NoiseStability>> noise_stability(const std::function<std::vector<Tensor>(const Tensor&)>& f,
                                                         const Tensor& e, const std::vector<double>& eps, int draws,
                                                         uint64_t seed) {
  NL_CHECK(draws > 0 && !eps.empty(), "noise_stability: needs at least one draw and one eps");
  for (double s : eps) NL_CHECK(s > 0 && std::isfinite(s), "noise_stability: every eps must be > 0, got ", s);
  const std::vector<Tensor> clean = f(e);
  // ratios[i][k][t]: eps i, output k, draw t
  std::vector<std::vector<std::vector<double>>> ratios(eps.size(), std::vector<std::vector<double>>(clean.size()));
  Generator gen(seed);
  for (int t = 0; t < draws; ++t) {
    const Tensor z = gen.normal(e.shape()).to(e.device());
    for (size_t i = 0; i < eps.size(); ++i) {
      const Tensor noisy_in = add(e, mul_scalar(z, (float)eps[i]));
      const double d_norm = distance(e, noisy_in);
      NL_CHECK(d_norm > 0, "noise_stability: eps ", eps[i], " is lost in float32 rounding of the input");
      const std::vector<Tensor> noisy = f(noisy_in);
      NL_CHECK(noisy.size() == clean.size(), "noise_stability: f returned ", noisy.size(), " tensors, then ",
               clean.size());
      for (size_t k = 0; k < clean.size(); ++k) ratios[i][k].push_back(distance(clean[k], noisy[k]) / d_norm);
    }
  }
  std::vector<std::vector<NoiseStability>> out(eps.size(), std::vector<NoiseStability>(clean.size()));
  for (size_t i = 0; i < eps.size(); ++i)
    for (size_t k = 0; k < clean.size(); ++k) {
      const std::vector<double>& r = ratios[i][k];
      double mean = 0;
      for (double v : r) mean += v / (double)draws;
      double ss = 0;
      for (double v : r) ss += (v - mean) * (v - mean);
      out[i][k].mean = mean;
      out[i][k].std_error = draws > 1 ? std::sqrt(ss / (draws - 1) / draws) : 0.0;
    }
  return out;
}

double logit_variance(const Tensor& logits) {
  NL_CHECK(logits.defined() && logits.dim() >= 1 && logits.dtype() == DType::F32 && logits.numel() > 0,
           "logit_variance: needs float32 logits (..., V), got ", describe(logits));
  const int64_t V = logits.shape().back(), rows = logits.numel() / V;
  const std::vector<float> v = logits.to_vector();
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = v.data() + r * V;
    double mean = 0;
    for (int64_t j = 0; j < V; ++j) mean += x[j];
    mean /= (double)V;
    double ss = 0;
    for (int64_t j = 0; j < V; ++j) ss += (x[j] - mean) * (x[j] - mean);
    total += ss / (double)V;
  }
  return total / (double)rows;
}

}  // namespace nl
