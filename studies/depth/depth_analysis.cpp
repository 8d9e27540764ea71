#include "studies/depth/depth_analysis.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "studies/instruments/act_stats.h"
#include "tensor/error.h"
#include "train/io/safetensors.h"

namespace nl {
namespace fs = std::filesystem;

void read_depth_run(const std::string& dir, DepthRun& run) {
  const auto rows = read_act_stats(dir + "/act_stats.csv");
  NL_CHECK(!rows.empty(), "depth study: no activation statistics in ", dir, "/act_stats.csv");
  const int64_t first = rows.front().first, last = rows.back().first;
  run.var_init.assign(run.depth + 1, NAN);
  run.var_end.assign(run.depth + 1, NAN);
  std::map<std::pair<int64_t, int64_t>, double> approx;  // (step, layer) -> mean approximated variance
  for (const auto& [step, r] : rows) {
    if (r.site == "resid" && r.layer >= 0 && r.layer <= run.depth) {
      if (step == first) run.var_init[r.layer] = r.var;
      if (step == last) run.var_end[r.layer] = r.var;
    }
    if (r.site == "site2_var_approx") approx[{step, r.layer}] = r.mean;
    if (r.site == "site2_var_exact" && approx.count({step, r.layer}))
      run.site2.push_back({r.layer, step, approx[{step, r.layer}], r.mean});
  }
  run.lambda_min = run.lambda_max = NAN;
  const std::string checkpoint = dir + "/checkpoint.safetensors";
  if (!fs::exists(checkpoint) || std::isnan(run.kappa)) return;
  for (const auto& [name, t] : load_safetensors(checkpoint).tensors) {
    const std::string suffix = ".lambda";
    if (name.rfind("blocks.", 0) != 0 || name.size() < suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const double v = t.item();
    run.lambda_min = std::isnan(run.lambda_min) ? v : std::min(run.lambda_min, v);
    run.lambda_max = std::isnan(run.lambda_max) ? v : std::max(run.lambda_max, v);
  }
}

double growth(const std::vector<double>& var, int64_t from) {
  if ((int64_t)var.size() <= from + 1) return NAN;
  return var.back() / var[(size_t)from];
}

std::vector<double> site2_ratios(const std::vector<Site2Pair>& pairs, int64_t layer) {
  std::vector<double> out;
  for (const Site2Pair& p : pairs)
    if (p.layer == layer) out.push_back(p.approx / p.exact);
  return out;
}

Range range_of(std::vector<double> v) {
  Range r{NAN, NAN, NAN, v.size()};
  if (v.empty()) return r;
  std::sort(v.begin(), v.end());
  r.min = v.front();
  r.max = v.back();
  const size_t n = v.size();
  r.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return r;
}

RangeVerdict compare_ranges(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return RangeVerdict::Unclear;
  const double a_max = *std::max_element(a.begin(), a.end()), a_min = *std::min_element(a.begin(), a.end());
  const double b_max = *std::max_element(b.begin(), b.end()), b_min = *std::min_element(b.begin(), b.end());
  if (a_max < b_min) return RangeVerdict::Held;
  if (a_min >= b_max) return RangeVerdict::NotHeld;
  return RangeVerdict::Unclear;
}

std::string verdict_text(RangeVerdict v) {
  switch (v) {
    case RangeVerdict::Held: return "**held**";
    case RangeVerdict::NotHeld: return "**did not hold**";
    default: return "**unclear** (the seeds' ranges overlap)";
  }
}

RangeVerdict all_layers(const std::vector<RangeVerdict>& per_layer) {
  if (per_layer.empty()) return RangeVerdict::Unclear;
  if (std::count(per_layer.begin(), per_layer.end(), RangeVerdict::NotHeld) > 0) return RangeVerdict::NotHeld;
  if (std::count(per_layer.begin(), per_layer.end(), RangeVerdict::Held) == (long)per_layer.size())
    return RangeVerdict::Held;
  return RangeVerdict::Unclear;
}

bool lambda_condition(double lambda, double kappa, int64_t depth) {
  return std::fabs(lambda) / kappa < 1.0 / std::sqrt((double)depth);
}

}  // namespace nl
