// Measurements of a trained GPT for the DyT regime study (issue 7; ../shared/NORMS.md,
// DyT). Each runs the model in eval mode without recording gradients (restoring its
// mode), on held-out tokens:
//   held_out_saturation         saturation |u| > 1, 2, 3 of the bounded nonlinearity (tanh,
//                               clip...) per site and averaged over the sites, pooled over
//                               several batches
//   residual_effective_rank     effective rank of the residual stream at each layer
//   residual_noise_sensitivity  how far each layer's stream, and the logits, move per unit
//                               of uniform noise added to the input embedding
// Layers are numbered as in act_stats: layer l < L is the stream entering block l + 1
// (after the embedding scale, if any), layer L the stream leaving the last block.
#pragma once
#include <array>
#include <vector>

#include "nn/gpt.h"
#include "studies/instruments/act_stats.h"

namespace nl {

struct SaturationReport {
  std::vector<ActStat> sites;        // one row per bounded site (layer, site); only saturation is filled
  std::array<double, 3> mean{};      // the sites' fractions averaged over sites, as act_stats' bounded_all
  bool empty() const { return sites.empty(); }
};

// The saturation of every site of a bounded nonlinearity (dyt's and bhyt's tanh, ...) over
// `batches` of ids (B, T), each fraction averaged over the batches (equal sizes: the
// pooled fraction). Empty for a model without such sites.
SaturationReport held_out_saturation(GPT& model, const std::vector<Tensor>& batches);

// Effective rank (studies/instruments/metrics.h) of the stream at layers 0..L, each as a (B T, C)
// matrix of the tokens of ids (B, T). Not centred: a common offset counts as a direction.
std::vector<double> residual_effective_rank(GPT& model, const Tensor& ids);

// noise_sensitivity (studies/instruments/metrics.h) of the map from the embedding sum e = embed(ids)
// to the stream at layers 0..L and to the logits (L + 2 values): the mean over `trials`
// of ||f(e + d) - f(e)|| / ||d||, d uniform in [-size, size] per element.
std::vector<double> residual_noise_sensitivity(GPT& model, const Tensor& ids, float size = 0.01f, int trials = 3,
                                               uint64_t seed = 11);

}  // namespace nl
