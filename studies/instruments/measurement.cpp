#include "studies/instruments/measurement.h"

#include <cmath>

#include "studies/instruments/regime_metrics.h"
#include "studies/instruments/spectra.h"

namespace nl {

namespace {

using nlohmann::json;

// [{eps, mean, std_error}] of one output (index k) of noise_stability's result.
json noise_json(const std::vector<std::vector<NoiseStability>>& noise, const std::vector<double>& eps, size_t k) {
  json out = json::array();
  for (size_t i = 0; i < eps.size(); ++i)
    out.push_back({{"eps", eps[i]}, {"mean", noise[i][k].mean}, {"std_error", noise[i][k].std_error}});
  return out;
}

json fractions_json(const std::array<double, 3>& f) { return {{"gt1", f[0]}, {"gt2", f[1]}, {"gt3", f[2]}}; }

json matrix_json(const MatrixAlpha& m) {
  json j = {{"name", m.name}, {"rows", m.rows}, {"cols", m.cols}, {"fitted", m.fitted}};
  if (m.fitted) {
    j["alpha"] = m.fit.alpha;
    j["xmin"] = m.fit.xmin;
    j["tail"] = m.fit.tail;
    j["evals"] = m.fit.evals;
    j["ks_distance"] = m.fit.ks_distance;
    j["sigma"] = m.fit.sigma;
    j["lambda_max"] = m.fit.lambda_max;
  }
  return j;
}

}  // namespace

json measure_gpt(GPT& model, const std::vector<Tensor>& batches, const MeasureSettings& s) {
  NL_CHECK(!batches.empty(), "measure_gpt: no held-out batches");
  for (const Tensor& b : batches)
    NL_CHECK(b.shape() == batches.front().shape(), "measure_gpt: held-out batches of different shapes, ",
             describe(batches.front()), " and ", describe(b));
  const Tensor& first = batches.front();
  const int64_t L = model.config.layers;

  const SaturationReport saturation = held_out_saturation(model, batches);
  const Tensor e = embedding_sum(model, first);
  const std::vector<Tensor> clean = streams_and_logits(model, e);  // layers 0..L, then the logits
  const auto noise = noise_stability([&](const Tensor& x) { return streams_and_logits(model, x); }, e, s.eps,
                                     s.noise_draws, s.noise_seed);
  const HtsrReport htsr = htsr_alphas(model, s.min_evals);

  json record;
  record["settings"] = {{"batches", batches.size()}, {"batch", first.size(0)},         {"tokens", first.size(1)},
                        {"eps", s.eps},              {"noise_draws", s.noise_draws},    {"noise_seed", s.noise_seed},
                        {"min_evals", s.min_evals},  {"evals_threshold", kEvalsThreshold}};
  json layers = json::array();
  double rank_sum = 0;
  for (int64_t l = 0; l <= L; ++l) {
    const double rank = centred_effective_rank(clean[l]);
    if (l >= 1) rank_sum += rank;
    json sites = json::array();
    for (const ActStat& site : saturation.sites)
      if (site.layer == l) {
        json j = fractions_json(site.saturation);
        j["site"] = site.site;
        sites.push_back(j);
      }
    layers.push_back({{"layer", l},
                      {"effective_rank", rank},
                      {"noise_stability", noise_json(noise, s.eps, (size_t)l)},
                      {"saturation", sites}});
  }
  record["layers"] = layers;
  const double logit_var = logit_variance(clean.back());
  record["logits"] = {{"noise_stability", noise_json(noise, s.eps, (size_t)L + 1)}, {"logit_variance", logit_var}};
  json matrices = json::array();
  for (const MatrixAlpha& m : htsr.matrices) matrices.push_back(matrix_json(m));
  record["matrices"] = matrices;
  record["summary"] = {
      {"saturation", saturation.empty() ? json(nullptr) : fractions_json(saturation.mean)},
      {"tanh_sites", saturation.sites.size()},
      {"effective_rank_mean", rank_sum / (double)L},
      {"noise_stability", noise_json(noise, s.eps, (size_t)L + 1)},
      {"logit_variance", logit_var},
      {"alpha_mean", htsr.fitted > 0 ? json(htsr.alpha_mean) : json(nullptr)},
      {"matrices_fitted", htsr.fitted},
  };
  return record;
}

}  // namespace nl
