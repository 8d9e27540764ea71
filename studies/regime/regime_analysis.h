// The statistics of the DyT regime study (issue 17): passes and the paper's regimes,
// curves and over-fitting, paired comparisons and the sign test, the Wilson interval, rank
// correlation, the screen's judgement and the did-not-train criterion; small functions
// that the report's verdict rules (regime_rows.h) are built from.
// tests/studies/test_regime_study.cpp checks each on inputs with known answers (exact
// binomial sums, hand-ranked samples, the Wilson interval's textbook values).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nl {

// Passes over a training subset: how many times the run's tokens could cover it,
// steps * batch * seq / train bytes (Verma's 1M-token cells: 5000 * 64 * 512 / 1M = 164).
double passes(int64_t steps, int64_t batch, int64_t seq, int64_t train_bytes);

// The paper's cells a subset is set beside, told by passes over the subset: data-scarce
// at 150 or more (its 1M-token cells: 164; issue 17 asks 150+ of the smallest subset),
// data-rich at 3 or fewer (its 118M-token cells: 1.4, with its 50M-token cells, 3.3, beside
// them; all of fortunes here: 2.2), and its 10M-token cell (16.4 passes) for a subset
// within a factor kMidMatch of it (300 KB here: 17). Any other subset (100 KB: 51 passes,
// 1 MB: 5.1) is Between: the paper has no number for it.
enum class DataRegime { Scarce, Mid, Rich, Between };
constexpr double kScarcePasses = 150, kRichPasses = 3, kMidPasses = 16.4, kMidMatch = 1.25;
DataRegime data_regime(double passes);
const char* regime_name(DataRegime r);  // "data-scarce", "10M-token cell", "data-rich", "between" 

// One run's validation curve: the loss (or accuracy) at each evaluation step, in order.
struct CurvePoint {
  int64_t step = 0;
  double value = 0;
};
using Curve = std::vector<CurvePoint>;

// Over-fitting on a validation-loss curve: its minimum, where it was reached, the value
// at the end, and whether the curve rose after its minimum by more than `margin`
// (nats). NaN values (a diverged run) count as no point; an empty curve gives NaNs.
struct Overfit {
  double min_value = 0, end_value = 0;
  int64_t min_step = -1, end_step = -1;
  bool overfits = false;
  double rise() const { return end_value - min_value; }
};
constexpr double kOverfitMargin = 0.02;
Overfit overfit_of(const Curve& curve, double margin = kOverfitMargin);

// The mean of the last `n` values (all of them when fewer); NaN for none. A run's
// training loss at the end is this over its last logged steps: one batch's loss is noisy.
double tail_mean(const std::vector<double>& values, size_t n);
constexpr size_t kTrainEndSteps = 50;

// The curve's value at `step`: the point at that step, else the last one before it;
// NaN when the curve has none at or before it.
double value_at(const Curve& curve, int64_t step);

// The exact two-sided sign test of `wins` against `losses` (ties dropped): the
// probability under fair coin flips of a split at least as uneven,
// min(1, 2 * sum_{i <= min(wins, losses)} C(n, i) / 2^n), n = wins + losses; 1 when n = 0.
// With 3 seeds the smallest value it can take is 0.25: no 3-seed verdict is significant.
double sign_test_p(int64_t wins, int64_t losses);

// An arm against its reference over the seeds both ran, paired by seed: differences
// arm - reference (negative: the arm's loss is lower). Helps when it is lower at every
// seed, hurts when higher at every seed, mixed otherwise (also with no common seed).
enum class Paired { Helps, Hurts, Mixed };
struct PairedComparison {
  int64_t n = 0, wins = 0, losses = 0, ties = 0;  // wins: seeds where the arm is lower
  double mean_diff = 0, min_diff = 0, max_diff = 0;
  double percent = 0;  // 100 * mean difference / the reference's mean over the same seeds
  double p_sign = 1;   // sign_test_p(wins, losses)
  Paired verdict = Paired::Mixed;
};
// seeds_a[i] goes with values_a[i]; values that are NaN are left out (a diverged run).
PairedComparison compare_paired(const std::vector<int64_t>& seeds_a, const std::vector<double>& values_a,
                                const std::vector<int64_t>& seeds_ref, const std::vector<double>& values_ref);
std::string paired_text(Paired v);  // "**helps**", "**hurts**", "mixed"
std::string pct(double percent);     // "+5.9 %", "-" for NaN: every change the report prints

// The Wilson score interval for k successes in n trials at z (1.96: 95 %); [0, 1] for
// n = 0.
struct Interval {
  double lo, hi;
};
Interval wilson_interval(int64_t k, int64_t n, double z = 1.96);

// Ranks 1..n of a sample, ties given the mean of the ranks they span.
std::vector<double> average_ranks(const std::vector<double>& v);

// Spearman's rank correlation: Pearson's r of the average ranks; NaN when fewer than
// two pairs or a sample is constant.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

// The screening rule of Verma 2026 judged on the study's DyT cells: each cell's
// 500-step saturation |alpha x| > 2 (mean over its seeds) and its outcome (whether DyT
// ended below LayerNorm: the paired mean difference is negative).
struct ScreenCell {
  double saturation = 0;
  double percent = 0;  // DyT against LN at the end, in percent
  bool helped = false;
};
struct ScreenJudgement {
  int64_t cells = 0, correct = 0, predicted_help = 0, helped = 0;
  Interval accuracy_ci{0, 1};  // Wilson 95 % of correct / cells
  double spearman = 0;         // saturation against percent (the rule expects a negative value)
  double accuracy() const { return cells ? (double)correct / (double)cells : 0.0; }
};
ScreenJudgement judge_screen(const std::vector<ScreenCell>& cells, double threshold);

// A seed that did not train (issue 30): it failed, or its best validation loss closed
// less than a tenth of the gap from the validation split's unigram loss (a model that
// only knows byte frequencies) down to LayerNorm's best in the same cell. Such a seed is
// evidence for no claim: it is reported as "did not train", never compared.
constexpr double kTrainedShare = 0.1;
bool did_not_train(bool failed, const Curve& val_curve, double unigram, double ln_best);

}  // namespace nl
