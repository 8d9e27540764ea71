// What the depth study computes from its runs, as small functions the report's tables
// and verdicts are built from (tests/studies/test_depth_study.cpp checks them on
// hand-made inputs). A run's layers are numbered as act_stats.csv numbers them: layer 0
// is the stream entering block 1 (the embedding output; for peri after its embedding
// norm), layer l the stream leaving block l.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "studies/report/verdicts.h"

namespace nl {

// One logging point's site-2 variances at one layer of a BHyT run: the block-level
// approximation and the exact variance of h, each averaged over the fixed batch.
struct Site2Pair {
  int64_t layer = 0, step = 0;
  double approx = 0, exact = 0;
};

// What the study reads of one finished run (its act_stats.csv, result.json and
// checkpoint).
struct DepthRun {
  std::string variant;
  int64_t depth = 0;
  uint64_t seed = 0;
  int exit_code = -1;
  double train_loss = 0, val_loss = 0, tok_s = 0;
  bool diverged = false;
  std::vector<double> var_init, var_end;  // residual-stream variance at layers 0..L, first and last logging point
  std::vector<Site2Pair> site2;           // empty unless the run's norm reports its second site
  double lambda_min = 0, lambda_max = 0;  // the blocks' BHyT lambdas at the end (NaN: none)
  double kappa = 0;                       // BHyT's kappa (NaN: not a BHyT run)
};

// Reads one run's folder: act_stats.csv (residual variances, site-2 pairs), and for
// BHyT runs the blocks' lambdas from checkpoint.safetensors. Throws naming the file.
void read_depth_run(const std::string& dir, DepthRun& run);

// Growth of the stream's variance with depth: the variance leaving the last block over
// the variance at layer `from` (0: the embedding output; 1: block 1's output).
double growth(const std::vector<double>& var, int64_t from);

// The approx / exact ratios of the pairs at `layer`.
std::vector<double> site2_ratios(const std::vector<Site2Pair>& pairs, int64_t layer);

// Median, smallest and largest of a sample (NaN for an empty one).
struct Range {
  double median, min, max;
  size_t n;
};
Range range_of(std::vector<double> v);

// A claim that "a stays below b" over seeds: held when every value of a lies below
// every value of b, did not hold when every value of a is at least every value of b,
// and unclear when the seeds' ranges overlap.
enum class RangeVerdict { Held, NotHeld, Unclear };
RangeVerdict compare_ranges(const std::vector<double>& a, const std::vector<double>& b);
std::string verdict_text(RangeVerdict v);  // "**held**", "**did not hold**", "**unclear** (the seeds' ranges overlap)"

// A claim made at every layer: held when it held at each, did not hold when it failed
// at any, unclear otherwise.
RangeVerdict all_layers(const std::vector<RangeVerdict>& per_layer);

// LayerNorm Scaling's bound: lambda / kappa < 1 / sqrt(L).
bool lambda_condition(double lambda, double kappa, int64_t depth);

// A model learnt when its validation loss went below this (the unigram level is 3.3).
constexpr double kLearntLoss = 2.8;

}  // namespace nl
