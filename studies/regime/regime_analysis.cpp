#include "studies/regime/regime_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "studies/instruments/act_stats.h"  // pearson
#include "studies/report/study.h"         // fmt

namespace nl {

double passes(int64_t steps, int64_t batch, int64_t seq, int64_t train_bytes) {
  return train_bytes > 0 ? (double)steps * (double)batch * (double)seq / (double)train_bytes : NAN;
}

DataRegime data_regime(double passes) {
  if (passes >= kScarcePasses) return DataRegime::Scarce;
  if (passes <= kRichPasses) return DataRegime::Rich;
  if (passes >= kMidPasses / kMidMatch && passes <= kMidPasses * kMidMatch) return DataRegime::Mid;
  return DataRegime::Between;  // also NaN: no subset
}

const char* regime_name(DataRegime r) {
  switch (r) {
    case DataRegime::Scarce: return "data-scarce";
    case DataRegime::Mid: return "10M-token cell";
    case DataRegime::Rich: return "data-rich";
    default: return "between";
  }
}

Overfit overfit_of(const Curve& curve, double margin) {
  Overfit o;
  o.min_value = o.end_value = NAN;
  for (const CurvePoint& p : curve) {
    if (!std::isfinite(p.value)) continue;
    if (o.min_step < 0 || p.value < o.min_value) o.min_value = p.value, o.min_step = p.step;
    o.end_value = p.value, o.end_step = p.step;
  }
  o.overfits = o.min_step >= 0 && o.end_value - o.min_value > margin;
  return o;
}

double value_at(const Curve& curve, int64_t step) {
  double v = NAN;
  for (const CurvePoint& p : curve)
    if (p.step <= step) v = p.value;
  return v;
}

double sign_test_p(int64_t wins, int64_t losses) {
  const int64_t n = wins + losses, k = std::min(wins, losses);
  if (n == 0) return 1.0;
  // sum_{i <= k} C(n, i) / 2^n, each term from the last by C(n, i) = C(n, i - 1) (n - i + 1) / i,
  // in logs so that large n cannot overflow
  double tail = 0, log_term = -(double)n * std::log(2.0);
  for (int64_t i = 0; i <= k; ++i) {
    if (i > 0) log_term += std::log((double)(n - i + 1)) - std::log((double)i);
    tail += std::exp(log_term);
  }
  return std::min(1.0, 2.0 * tail);
}

PairedComparison compare_paired(const std::vector<int64_t>& seeds_a, const std::vector<double>& values_a,
                                const std::vector<int64_t>& seeds_ref, const std::vector<double>& values_ref) {
  std::map<int64_t, double> ref;
  for (size_t i = 0; i < seeds_ref.size(); ++i)
    if (std::isfinite(values_ref[i])) ref[seeds_ref[i]] = values_ref[i];
  PairedComparison c;
  double sum = 0, ref_sum = 0;
  c.min_diff = INFINITY, c.max_diff = -INFINITY;
  for (size_t i = 0; i < seeds_a.size(); ++i) {
    const auto it = ref.find(seeds_a[i]);
    if (it == ref.end() || !std::isfinite(values_a[i])) continue;
    const double d = values_a[i] - it->second;
    ++c.n;
    c.wins += d < 0, c.losses += d > 0, c.ties += d == 0;
    sum += d, ref_sum += it->second;
    c.min_diff = std::min(c.min_diff, d), c.max_diff = std::max(c.max_diff, d);
  }
  if (c.n == 0) {
    c.mean_diff = c.min_diff = c.max_diff = c.percent = NAN;
    return c;
  }
  c.mean_diff = sum / (double)c.n;
  c.percent = 100.0 * sum / ref_sum;
  c.p_sign = sign_test_p(c.wins, c.losses);
  c.verdict = c.wins == c.n ? Paired::Helps : c.losses == c.n ? Paired::Hurts : Paired::Mixed;
  return c;
}

std::string paired_text(Paired v) {
  return v == Paired::Helps ? "**helps**" : v == Paired::Hurts ? "**hurts**" : "mixed";
}

std::string pct(double percent) { return std::isfinite(percent) ? fmt(percent, "%+.1f") + " %" : "-"; }

Interval wilson_interval(int64_t k, int64_t n, double z) {
  if (n <= 0) return {0.0, 1.0};
  // the p whose normal-approximation interval p +- z sqrt(p (1 - p) / n) reaches k / n:
  // centre (p^ + z^2 / 2n) / (1 + z^2 / n), half-width z sqrt(p^ (1 - p^) / n + z^2 / 4n^2) / (1 + z^2 / n)
  const double nn = (double)n, p = (double)k / nn, z2 = z * z;
  const double denom = 1.0 + z2 / nn;
  const double centre = (p + z2 / (2.0 * nn)) / denom;
  const double half = z * std::sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = 0.5 * (double)(i + j) + 1.0;  // the mean of ranks i + 1 .. j + 1
    for (size_t m = i; m <= j; ++m) ranks[order[m]] = rank;
    i = j + 1;
  }
  return ranks;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return NAN;
  return pearson(average_ranks(x), average_ranks(y));
}

ScreenJudgement judge_screen(const std::vector<ScreenCell>& cells, double threshold) {
  ScreenJudgement j;
  std::vector<double> sat, pct;
  for (const ScreenCell& c : cells) {
    if (!std::isfinite(c.saturation) || !std::isfinite(c.percent)) continue;
    const bool predicts = c.saturation > threshold;
    ++j.cells;
    j.predicted_help += predicts;
    j.helped += c.helped;
    j.correct += predicts == c.helped;
    sat.push_back(c.saturation), pct.push_back(c.percent);
  }
  j.accuracy_ci = wilson_interval(j.correct, j.cells);
  j.spearman = spearman(sat, pct);
  return j;
}

double tail_mean(const std::vector<double>& values, size_t n) {
  const size_t k = std::min(n, values.size());
  if (k == 0) return NAN;
  double sum = 0;
  for (size_t i = values.size() - k; i < values.size(); ++i) sum += values[i];
  return sum / (double)k;
}

bool did_not_train(bool failed, const Curve& val_curve, double unigram, double ln_best) {
  if (failed) return true;
  const double best = overfit_of(val_curve).min_value;
  if (!std::isfinite(best)) return true;
  return unigram - best < kTrainedShare * (unigram - ln_best);
}

}  // namespace nl
