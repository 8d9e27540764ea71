// Output noise stability and logit variance, as the Verma study's instruments (research.md
// section 2, "Output noise stability"; its script is not released, its method string is):
// the token embedding is perturbed by eps * N(0, I) and the metric is
// ||delta logits||_F / ||noise||_F, at eps 0.01 and 0.1: an absolute gain (change of the
// output per unit norm of input noise), not relative to the clean output. Verma used 3
// draws per checkpoint on 16 x 512 tokens.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "tensor/tensor.h"

namespace nl {

// Draws of the noise per eps: 16, where Verma took 3. Measured on two trained tiny GPTs
// (4 layers, width 128, 500 steps of the demo recipe, ln and DyT alpha0 2 with a
// LayerNorm final norm; one held-out batch of 32 x 64 bytes): one draw's ratio varies by
// up to 3.3 % (at the logits, eps 0.01; 0.4-0.9 % at eps 0.1), so 3 draws leave a standard
// error of up to 1.9 % (five 3-draw means of the LN logits at eps 0.01 spread from 22.1
// to 23.5), as large as the smaller LN-vs-DyT differences the study looks for (Verma: 4-25
// %); 16 draws bring it below 0.85 % on every layer. They cost 33 forwards, about 2.3 s
// of the 2.9 s CPU time that measure_gpt takes on such a model (studies/instruments/measurement.h).
// eps is absolute: the embedding sum of those models has an RMS of 0.053, so eps 0.1 is
// twice the signal and the gain is lower there (LN logits: 11.0 at eps 0.1, 22.3 at 0.01).
constexpr int kNoiseDraws = 16;

struct NoiseStability {
  double mean = 0;       // mean over the draws of ||f(e + d) - f(e)||_F / ||d||_F
  double std_error = 0;  // the sample standard deviation over the draws / sqrt(draws); 0 for one draw
};

// The noise stability of a map f at e, for each eps in `eps` and each tensor f returns:
// result[i][k] for eps[i] and output k. Draw t takes z_t ~ N(0, I) (one normal per
// element of e, from a generator seeded with `seed`) and uses d = eps z_t for every eps,
// so the eps values are compared on the same directions; ||d||_F is that of the
// perturbation e + d - e as rounded to float32, what f is actually given. For a linear map
// f(e) = e W the ratio is ||d W|| / ||d||: exactly c when W is c times an orthogonal matrix.
std::vector<std::vector<NoiseStability>> noise_stability(const std::function<std::vector<Tensor>(const Tensor&)>& f,
                                                         const Tensor& e, const std::vector<double>& eps, int draws,
                                                         uint64_t seed);

// The logit variance of logits (..., V): for each position the variance of its V logits
// over the vocabulary (the biased variance, divided by V), averaged over the positions.
// Verma stores a "logit_variance" beside the noise stability without defining it; this is
// our choice: the spread of the scores within each prediction, which is what the softmax
// sees (a per-position offset of all logits changes neither it nor the softmax).
double logit_variance(const Tensor& logits);

}  // namespace nl
