// dyt_trains: which DyT settings leave the unigram plateau on the demo GPT within the
// demo's steps, seed after seed (docs/results/dyt_start.md). Each arm (dyt_trains_arms)
// is trained once per seed as an ordinary train_gpt run in OUT/<arm>-s<seed>/; an arm
// "trains" in a seed when its run is not stuck near the unigram loss against the LayerNorm
// run of its recipe and seed (status_against_ln, studies/report/verdicts.h). Beside the
// losses the report gives what explains a stuck run: the residual stream's RMS leaving
// the last block and the final DyT's saturation |alpha x| > 2 at the end (act_stats.csv).
// It writes OUT/results.json (--reuse renders from it), OUT/report.md, and with --doc FILE
// the report in FILE and the results beside it as FILE's name with .json.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "studies/compare/seeded_arms.h"

namespace nl {

// The settings: LayerNorm (the reference), plain DyT, alpha0 2, the embedding scale
// sqrt(d), a LayerNorm final norm, their combinations, the tuned comparison's best plain
// setting, a 500-step warmup; and DyT's LLaMA recipe at its tuned setting beside its ln.
const std::vector<SeededArm>& dyt_trains_arms();

// One arm as the verdict reads it.
struct TrainsRow {
  std::string label;
  bool reference = false;  // an ln arm: not judged
  size_t seeds = 0;        // seeds run
  int did_not_train = 0;   // of them, stuck or diverged
  double val_mean = 0;     // over the seeds that trained (NaN: none)
};

// "In all N seeds DyT leaves the unigram plateau with: `a` (2.71), ...; in some seeds only:
// ...; in none: ..." (the lists sorted by loss; a list left out when empty), or, when no
// arm trains in every seed, a sentence that says so first.
std::string dyt_trains_verdict(const std::vector<TrainsRow>& rows);

// The final norm's saturation |u| > 2 at the last step of a run's act_stats.csv (the
// columns by their header's names); NaN when the file, the ln_f rows or the column is
// missing or empty (a LayerNorm final norm has no bounded argument).
double final_norm_saturation(const std::string& act_stats_csv);

std::string render_dyt_trains_report(const DytTrainsResults& results);

int dyt_trains_main(const std::vector<std::string>& args);

}  // namespace nl
