// Every instrument of the DyT regime study (issue 17) on one trained GPT, as one record
// that the study stores per run. The model runs in eval mode without a graph (its mode
// is restored); `batches` are fixed held-out token batches ids (B, T), the same for every
// run of a study. The record, a JSON object:
//
//   settings   what was measured on: batches (count), batch (B), tokens (T), eps (list),
//              noise_draws, noise_seed, min_evals, evals_threshold
//   layers     one object per layer l = 0..L (regime_metrics.h's numbering: l < L the stream
//              entering block l + 1, l >= 1 the output of block l, L the last block's):
//     layer            l
//     effective_rank   centred effective rank of the stream on the first batch: the
//                      (B T, C) matrix minus its mean over the B T tokens (spectra.h)
//     noise_stability  [{eps, mean, std_error}] per eps: ||delta stream_l||_F / ||noise||_F
//                      for noise eps * N(0, I) on the embedding sum, first batch
//                      (stability.h; layer 0 gives the embedding scale, 1 without one)
//     saturation       [{site, gt1, gt2, gt3}] for each bounded-nonlinearity site of that layer (ln1, ln2,
//                      ln_f at L, emb_norm in peri): fractions of its argument (the tanh's, the clip's)
//                      with |u| > 1, 2, 3, over all batches; [] for norms without one
//   logits     noise_stability  [{eps, mean, std_error}]: the same ratio for the logits
//                               (Verma's headline "Lipschitz" number)
//              logit_variance   per position the variance of the logits over the
//                               vocabulary, averaged over positions (stability.h), first batch
//   matrices   one object per 2-D parameter (power_law.h): name, rows, cols, fitted; when
//              fitted: alpha, xmin, tail, evals, ks_distance, sigma, lambda_max
//   summary    saturation        {gt1, gt2, gt3} averaged over the bounded sites, or null
//              tanh_sites        how many sites that average is over
//              effective_rank_mean  the centred effective rank averaged over the block
//                                outputs (layers 1..L, as Verma averages over blocks)
//              noise_stability   the logits' [{eps, mean, std_error}]
//              logit_variance
//              alpha_mean        the power-law alpha averaged over the fitted matrices
//                                (null when none); matrices_fitted, how many
//
// Cost, measured on the trained 4-layer width-128 GPT (0.83M parameters) with 4 held-out
// batches of 32 x 64 bytes, one thread: 2.7-2.8 s of CPU time (4.2 s wall on the shared
// 2-core machine under load): the noise stability's 33 forwards about 2.1 s (one forward
// of 32 x 64 tokens 0.065 s), the saturation over the 4 batches 0.3 s, the effective
// ranks (a forward and 5 SVDs of 2048 x 128) 0.13 s, the 18 weight spectra 0.05 s. With
// 3 draws, Verma's count, it would take 0.95 s.
//
// Verma's alpha mean is over 49 matrices of a 12-layer GPT-2. By WeightWatcher 0.7.7's
// rules (our reading; the study does not list them) these are the 48 block linears and
// the position embedding: its max_N of 50000 rows skips the 50304-row token embedding and
// the head tied to it. Our vocabularies are small, so the token embedding (= the head) is
// fitted and counted; the per-matrix rows let a study average over any subset.
#pragma once
#include <nlohmann/json.hpp>

#include <vector>

#include "nn/gpt.h"
#include "studies/instruments/power_law.h"
#include "studies/instruments/stability.h"

namespace nl {

struct MeasureSettings {
  std::vector<double> eps = {0.01, 0.1};  // Verma's two noise levels
  int noise_draws = kNoiseDraws;
  uint64_t noise_seed = 11;
  int64_t min_evals = kMinEvals;
};

// The record above. Throws (naming the problem) on no batches, batches of different
// shapes, or a non-finite model output.
nlohmann::json measure_gpt(GPT& model, const std::vector<Tensor>& batches, const MeasureSettings& settings = {});

}  // namespace nl
