// The heavy-tailed spectral exponent of Heavy-Tailed Self-Regularisation (HTSR; Martin
// and Mahoney) as WeightWatcher measures it (its default fitter, 'ww' = the class WWFit
// of WW_powerlaw.py, version 0.7.7, which the Verma study used; research.md section 5):
//   - the empirical spectral density of a weight matrix W (N x M) is the eigenvalues of
//     W^T W, i.e. its squared singular values (studies/instruments/spectra.h); those
//     <= 1e-5 are dropped (WeightWatcher's EVALS_THRESH);
//   - for every candidate xmin = lambda_i (each kept eigenvalue but the largest, sorted
//     ascending) the tail lambda >= xmin (n values) gets the continuous maximum-likelihood
//     exponent alpha = 1 + n / sum ln(lambda_j / xmin), and the Kolmogorov-Smirnov
//     distance D = max over the tail of |(1 - (lambda / xmin)^(1 - alpha)) - k / n|,
//     k = 0 .. n-1 (the empirical CDF as WWFit writes it: the lower step only);
//   - the fit is the candidate with the smallest D (the first on ties), reported with its
//     alpha, xmin, n, D and sigma = (alpha - 1) / sqrt(n).
// WWFit switches to a bias-corrected small-sample fitter below 20 eigenvalues; htsr_alphas
// fits only matrices with at least kMinEvals = 50 of them (below), so that path never
// applies there. The fit equals WeightWatcher 0.7.7's (tests/studies/test_power_law.cpp,
// reference values from scripts/ww_reference.py).
// Reading it: alpha near 2 is a heavy tail (well trained, in HTSR's terms), alpha > 6 a
// poor power law, as for an untrained Gaussian matrix, whose Marchenko-Pastur bulk has
// no tail; WeightWatcher warns below 2 (over-trained) and above 6 (under-trained).
// The KS-minimising xmin makes alpha noisier than sigma says: for 512 eigenvalues drawn
// from a Pareto law the fitted alpha's spread is about 1.3 sigma (0.068 (a - 1), measured
// over 300 seeds with WeightWatcher's own fitter).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/module.h"

namespace nl {

constexpr double kEvalsThreshold = 1e-5;  // WeightWatcher's EVALS_THRESH
// The fewest eigenvalues (above the threshold) a matrix must have to be fitted. Verma ran
// WeightWatcher with min_evals 50 (its default is 8 in 0.7.7, 10 earlier); we keep 50, so
// that the same matrices qualify, and it costs nothing: every matrix of a GPT at the
// study's widths (64-512) and contexts (>= 64) has min(N, M) >= 64 eigenvalues. Below it a
// single fit is loose: the fitted alpha's spread grows as 1 / sqrt(n), 0.068 (a - 1)
// measured at 512 eigenvalues, so about 0.22 (a - 1) at 50 and 0.5 (a - 1) at 10, as large as the
// LN-vs-DyT differences of the alpha mean Verma reports (5.37 vs 3.14, 4.18 vs 2.76 at 64M
// parameters). WeightWatcher counts min(N, M) before the threshold; we count after it,
// which differs only for a matrix with >= 50 rows and columns but fewer non-negligible
// eigenvalues (WeightWatcher would fit it with its small-sample fitter below 20).
constexpr int64_t kMinEvals = 50;

struct PowerLawFit {
  double alpha = 0;        // the exponent of the tail density p(lambda) ~ lambda^-alpha
  double xmin = 0;         // where the tail starts (an eigenvalue)
  double ks_distance = 0;  // D of the chosen xmin: 0 is a perfect power law
  double sigma = 0;        // (alpha - 1) / sqrt(tail)
  int64_t tail = 0;        // eigenvalues >= xmin
  int64_t evals = 0;       // eigenvalues fitted (those above kEvalsThreshold)
  double lambda_max = 0;   // the largest eigenvalue
};

// WeightWatcher's fit of the eigenvalues (any order; those <= kEvalsThreshold dropped).
// Throws when fewer than 2 remain (a tail needs an xmin below its largest value).
PowerLawFit fit_power_law(const std::vector<double>& eigenvalues);

// The eigenvalues of W^T W for a float32 matrix W (N, M): its squared singular values,
// ascending.
std::vector<double> weight_eigenvalues(const Tensor& w);

// One weight matrix of a model, by its parameter name.
struct MatrixAlpha {
  std::string name;        // e.g. "blocks.0.attn.qkv.weight"
  int64_t rows = 0, cols = 0;
  bool fitted = false;     // false: fewer than min_evals eigenvalues above the threshold
  PowerLawFit fit;         // when fitted
};

struct HtsrReport {
  std::vector<MatrixAlpha> matrices;  // every 2-D parameter, in the model's parameter order
  int64_t fitted = 0;                 // how many were fitted
  double alpha_mean = 0;              // alpha averaged over the fitted ones (NaN when none)
};

// The power-law fit of every 2-D parameter of `model` (for a GPT: the token and position
// embeddings, the tied head being the token embedding, and every block's linear
// weights; 1-D parameters such as norm gains are not matrices). The stored weight is
// what is fitted (for cbwc's centred linears the parameter, not its centred form).
HtsrReport htsr_alphas(const Module& model, int64_t min_evals = kMinEvals);

}  // namespace nl
