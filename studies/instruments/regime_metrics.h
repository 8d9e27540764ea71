// Measurements of a trained GPT for the DyT regime study (issue 7, issue 17; ../shared/NORMS.md,
// DyT). Each runs the model in eval mode without recording gradients (restoring its
// mode), on held-out tokens:
//   held_out_saturation        saturation |u| > 1, 2, 3 of the bounded nonlinearity (tanh,
//                              clip...) per site and averaged over the sites, pooled over
//                              several batches
//   residual_effective_rank    effective rank of the centred residual stream at each layer
//   residual_noise_stability   how far each layer's stream, and the logits, move per unit
//                              of Gaussian noise added to the input embedding
// Layers are numbered as in act_stats: layer l < L is the stream entering block l + 1
// (after the embedding scale, if any), layer L the stream leaving the last block; so
// layer l >= 1 is the output of block l (the stream Verma's hooks on the block outputs see).
// studies/instruments/measurement.h gathers all of them into one record.
#pragma once
#include <array>
#include <vector>

#include "nn/gpt.h"
#include "studies/instruments/act_stats.h"
#include "studies/instruments/stability.h"

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

// The embedding sum e = embed(ids) (B, T, C) of ids (B, T), without a graph: the input
// that the noise is added to (before the embedding scale, if any: the token embedding
// plus the position embedding, as nanoGPT's tok_emb + pos_emb).
Tensor embedding_sum(GPT& model, const Tensor& ids);

// One forward from the embedding sum e (B, T, C): the stream at layers 0..L, each as a
// (B T, C) matrix, then the logits (B, T, V); L + 2 tensors.
std::vector<Tensor> streams_and_logits(GPT& model, const Tensor& e);

// centred_effective_rank (studies/instruments/spectra.h) of the stream at layers 0..L, each
// as a (B T, C) matrix of the tokens of ids (B, T) centred by subtracting its mean over
// the B T tokens (per channel): a common offset of every token is not a direction.
std::vector<double> residual_effective_rank(GPT& model, const Tensor& ids);

// noise_stability (studies/instruments/stability.h) of the map from the embedding sum
// e = embed(ids) to the stream at layers 0..L and to the logits: result[i][k] for eps[i]
// and k = 0..L the layers, k = L + 1 the logits; `draws` Gaussian draws eps * N(0, I).
std::vector<std::vector<NoiseStability>> residual_noise_stability(GPT& model, const Tensor& ids,
                                                                  const std::vector<double>& eps, int draws,
                                                                  uint64_t seed);

}  // namespace nl
