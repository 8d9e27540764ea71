// The 500-step screening probe for DyT (Verma 2026, ../shared/NORMS.md): train the DyT
// model with the full run's recipe and budget (its schedule, learning rate, data) for
// the first 500 steps, measure the tanh saturation |alpha x| > 2 averaged over the DyT
// sites on held-out batches, and predict that DyT helps (ends with a lower validation
// loss than LayerNorm would) iff that saturation exceeds 0.43. The paper's rule is a
// heuristic fitted on its own runs: weak evidence, not a test.
#pragma once
#include <string>

#include "train/flags/probe_flags.h"
#include "train/gpt/gpt_run.h"
#include "studies/instruments/regime_metrics.h"

namespace nl {

constexpr double kScreenThreshold = 0.43;  // saturation |alpha x| > 2 above which DyT is predicted to help

struct ScreenResult {
  int64_t steps = 0;            // training steps done before the measurement
  SaturationReport saturation;  // on the held-out batches, at that step
  float val_loss = 0;           // validation loss at that step
  double wall_s = 0;
  double saturation_gt2() const { return saturation.mean[1]; }
  bool predicts_help() const { return saturation_gt2() > kScreenThreshold; }
};

// Trains `run` (its norm must be dyt; steps <= run.steps) for `steps` steps, writing its
// files, and a checkpoint at that step, to run.out_dir (so `--resume` can go on with the
// full run), then measures the saturation on `batches` fixed held-out batches of 32
// sequences (drawn from the validation split with seed run.seed + 6).
ScreenResult screen_dyt(GPTRunConfig run, int64_t steps = kScreenSteps, int64_t batches = 4);
// The verdict: the measured saturation, the rule, the prediction, and the caution.
std::string screen_message(const ScreenResult& result);

}  // namespace nl
