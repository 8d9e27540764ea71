// bhyt_gap: why bhyt-released trails ln-released in make demo, by controls that each
// change one thing, and a long run that says whether BHyT learns more slowly and catches
// up or ends worse (docs/norms/bhyt.md, "The gap to LayerNorm").
//
// For a small argument BHyT's tanh is linear, so the released BHyT is an RMSNorm whose
// gain starts at lambda / kappa (0.2 before the attention, 0.1 before the MLP). The
// controls, each on the bhyt-released recipe at the common steps (make demo's 500), one
// run per seed:
//   ln-released, bhyt-released, rms-released   the recipe with LayerNorm, BHyT, RMSNorm
//   rms-gain        RMSNorm with its gains starting at 0.2 / 0.1 (learnt)
//   rms-gain-fixed  the same gains held fixed: BHyT's small-argument limit
//   bhyt-gamma-inverse  BHyT with gamma starting at kappa / lambda (an RMSNorm of gain 1)
//   bhyt-gelu, ln-gelu  the Llama block with a GELU MLP (SwiGLU's product is quadratic in
//                   a small input), for BHyT and for LayerNorm
//   bhyt-lambda5, bhyt-lambda10  lambda 5 or 10 at both sites
// and the long runs, ln-released, bhyt-released and rms-released for --long-steps, each at
// its best setting of a tuned comparison (compare_norms --tune, read from --tuned-results).
// Every run is an ordinary train_gpt run in OUT/<label>-s<seed>/, run by the grid. It
// writes OUT/results.json (--reuse renders from it), OUT/long_val_loss.csv (the long
// runs' validation curves), OUT/report.md and with --doc FILE the report in FILE and the
// results beside it as FILE's name with .json.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "studies/compare/seeded_arms.h"

namespace nl {

// The controls (SeededArm: label, flags, the arm its gap is measured against, what it tests).
const std::vector<SeededArm>& bhyt_gap_controls();
// The long runs' arms (their flags before tuning): ln-released first, the reference.
const std::vector<SeededArm>& bhyt_gap_long_arms();

// The run specs ("LABEL=FLAGS", studies/grid/run_spec.h) of every control and long run
// for each seed: a control is "<arm>-s<seed>", a long run "long-<arm>-s<seed>" with
// `tuned` (arm label -> its tuned flags) and --steps long_steps --eval-every long_eval.
// Throws naming the arm and `tuned_source` when an arm has no tuned flags.
std::vector<std::string> bhyt_gap_run_specs(const std::vector<int64_t>& seeds, int64_t long_steps,
                                            int64_t long_eval, const std::map<std::string, std::string>& tuned,
                                            const std::string& tuned_source);

// 100 (share of an arm's gap to its reference) / (BHyT's gap to ln): 100 means as far
// behind as bhyt-released, 0 at LayerNorm's level (NaN when BHyT's gap is not above 0).
double gap_share(double arm_gap, double bhyt_gap);

// The long run's answer for `arm` against `reference` from the paired gaps per seed
// (percent above the reference's validation loss) at step `early` and at the end, seeds
// whose arm did not train (stuck near the unigram loss, or diverged) counted apart:
//   "learns more slowly and catches up" (early gap above 1 % and every end gap within 1 %),
//   "learns more slowly and ends worse" (every end gap above 1 % and below its early one),
//   "ends worse and does not catch up" (every end gap above 1 %, not all narrowed),
//   "is not behind" (every early and end gap within 1 %), "ends level" (every end gap
//   within 1 %, some early ones above), or the seeds disagree.
// An arm that did not train in any seed has no answer but that.
std::string catch_up_verdict(const std::string& arm, const std::string& reference, int64_t early, int64_t end,
                             const std::vector<double>& early_gaps, const std::vector<double>& end_gaps,
                             int did_not_train);

// The report for a results.json (exposed for the tests).
std::string render_bhyt_gap_report(const BhytGapResults& results);

int bhyt_gap_main(const std::vector<std::string>& args);

}  // namespace nl
