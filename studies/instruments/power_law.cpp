#include "studies/instruments/power_law.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "studies/instruments/spectra.h"

namespace nl {

PowerLawFit fit_power_law(const std::vector<double>& eigenvalues) {
  std::vector<double> x;
  for (double v : eigenvalues) {
    NL_CHECK(std::isfinite(v), "fit_power_law: a non-finite eigenvalue (", v, ")");
    if (v > kEvalsThreshold) x.push_back(v);
  }
  NL_CHECK(x.size() >= 2, "fit_power_law: needs at least 2 eigenvalues above ", kEvalsThreshold, ", got ", x.size());
  std::sort(x.begin(), x.end());
  const int64_t N = (int64_t)x.size();
  std::vector<double> log_x(N), tail_log_sum(N + 1, 0.0);  // tail_log_sum[i] = sum_{j >= i} ln x_j
  for (int64_t i = 0; i < N; ++i) log_x[i] = std::log(x[i]);
  for (int64_t i = N - 1; i >= 0; --i) tail_log_sum[i] = tail_log_sum[i + 1] + log_x[i];

  PowerLawFit best;
  double best_d = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i + 1 < N; ++i) {
    const double n = (double)(N - i);
    const double log_excess = tail_log_sum[i] - n * log_x[i];  // sum ln(x_j / xmin) over the tail
    // a tail of equal values has no exponent (WWFit would divide by zero): not a candidate
    if (!(log_excess > 0)) continue;
    const double alpha = 1.0 + n / log_excess;
    double d = 0.0;
    for (int64_t k = 0; k < N - i; ++k) {
      const double model_cdf = 1.0 - std::exp((1.0 - alpha) * (log_x[i + k] - log_x[i]));  // 1 - (x / xmin)^(1 - alpha)
      d = std::max(d, std::fabs(model_cdf - (double)k / n));
    }
    if (d < best_d) {
      best_d = d;
      best.alpha = alpha;
      best.xmin = x[i];
      best.ks_distance = d;
      best.tail = N - i;
      best.sigma = (alpha - 1.0) / std::sqrt(n);
    }
  }
  NL_CHECK(std::isfinite(best_d), "fit_power_law: all ", N, " eigenvalues above ", kEvalsThreshold,
           " are equal: no tail to fit");
  best.evals = N;
  best.lambda_max = x.back();
  return best;
}

std::vector<double> weight_eigenvalues(const Tensor& w) {
  std::vector<double> s = singular_values(w);
  for (double& v : s) v *= v;
  std::reverse(s.begin(), s.end());
  return s;
}

HtsrReport htsr_alphas(const Module& model, int64_t min_evals) {
  NL_CHECK(min_evals >= 2, "htsr_alphas: min_evals must be at least 2, got ", min_evals);
  HtsrReport report;
  double sum = 0;
  for (const auto& [name, p] : model.named_parameters()) {
    const Tensor& w = p.value();
    if (w.dim() != 2) continue;
    MatrixAlpha m;
    m.name = name;
    m.rows = w.size(0);
    m.cols = w.size(1);
    const std::vector<double> evals = weight_eigenvalues(w.to(Device::CPU));
    const int64_t kept = std::count_if(evals.begin(), evals.end(), [](double v) { return v > kEvalsThreshold; });
    if (kept >= min_evals) {
      m.fit = fit_power_law(evals);
      m.fitted = true;
      sum += m.fit.alpha;
      ++report.fitted;
    }
    report.matrices.push_back(m);
  }
  report.alpha_mean = report.fitted > 0 ? sum / (double)report.fitted : std::nan("");
  return report;
}

}  // namespace nl
