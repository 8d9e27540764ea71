#include "studies/instruments/regime_metrics.h"

#include <cmath>
#include <map>

#include "studies/instruments/spectra.h"

namespace nl {

namespace {

// The residual stream of every layer, from one probed forward.
class ResidualProbe : public ActivationProbe {
 public:
  void record(int64_t layer, const std::string& site, const Tensor& value) override {
    if (site == "resid") streams[layer] = value;
  }
  bool wants_detail() const override { return false; }  // the stream only: no pre-tanh arguments computed
  std::map<int64_t, Tensor> streams;
};

// Eval mode, no graph, `probe` attached, for one scope; everything restored after it.
class ProbedEval {
 public:
  ProbedEval(GPT& model, ActivationProbe* probe) : model_(model), was_training_(model.training()) {
    model_.eval();
    previous_ = model_.set_probe(probe);
  }
  ~ProbedEval() {
    model_.set_probe(previous_);
    model_.train(was_training_);
  }

 private:
  GPT& model_;
  bool was_training_;
  ActivationProbe* previous_ = nullptr;
  NoGradGuard no_grad_;
};

}  // namespace

Tensor embedding_sum(GPT& model, const Tensor& ids) {
  NoGradGuard no_grad;
  return model.embed(ids).value();
}

std::vector<Tensor> streams_and_logits(GPT& model, const Tensor& e) {
  ResidualProbe probe;
  ProbedEval scope(model, &probe);
  const Tensor logits = model.forward_embedded(Var(e)).value();
  const int64_t C = model.config.dim;
  std::vector<Tensor> out;
  for (int64_t l = 0; l <= model.config.layers; ++l) {
    auto it = probe.streams.find(l);
    NL_CHECK(it != probe.streams.end(), "regime metrics: the forward reported no residual stream at layer ", l);
    out.push_back(it->second.contiguous().reshape({-1, C}));
  }
  out.push_back(logits);
  return out;
}

SaturationReport held_out_saturation(GPT& model, const std::vector<Tensor>& batches) {
  NL_CHECK(!batches.empty(), "held_out_saturation: no batches");
  SaturationReport report;
  for (const Tensor& ids : batches) {
    const std::vector<ActStat> rows = activation_stats(model, ids);
    for (const ActStat& r : rows) {
      if (!r.has_saturation || r.layer < 0) continue;
      ActStat* site = nullptr;
      for (ActStat& s : report.sites)
        if (s.layer == r.layer && s.site == r.site) site = &s;
      if (!site) {
        ActStat fresh;
        fresh.layer = r.layer;
        fresh.site = r.site;
        fresh.has_saturation = true;
        fresh.mean = fresh.var = fresh.rms = fresh.max_abs = NAN;
        report.sites.push_back(fresh);
        site = &report.sites.back();
      }
      for (int k = 0; k < 3; ++k) site->saturation[k] += r.saturation[k] / (double)batches.size();
    }
  }
  for (const ActStat& s : report.sites)
    for (int k = 0; k < 3; ++k) report.mean[k] += s.saturation[k] / (double)report.sites.size();
  return report;
}

std::vector<double> residual_effective_rank(GPT& model, const Tensor& ids) {
  std::vector<Tensor> streams = streams_and_logits(model, embedding_sum(model, ids));
  streams.pop_back();  // the logits
  std::vector<double> ranks;
  for (const Tensor& s : streams) ranks.push_back(centred_effective_rank(s));
  return ranks;
}

std::vector<std::vector<NoiseStability>> residual_noise_stability(GPT& model, const Tensor& ids,
                                                                  const std::vector<double>& eps, int draws,
                                                                  uint64_t seed) {
  return noise_stability([&](const Tensor& x) { return streams_and_logits(model, x); }, embedding_sum(model, ids), eps,
                         draws, seed);
}

}  // namespace nl
