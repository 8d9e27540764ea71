#include "studies/depth/depth_plan.h"

namespace nl {

std::vector<std::string> depth_cell_flags(int64_t depth, int64_t seed) {
  return {"--layers", std::to_string(depth), "--seed", std::to_string(seed)};
}

const std::vector<std::string>& default_depth_arms() {
  // BHyT's released recipe: lambda 2 / 1, a final RMSNorm, c_attn refreshed about 50
  // times a run (the kinds' defaults, written out)
  static const std::vector<std::string> arms = {
      "pre+ln=--block pre --norm ln",
      "pre+rms=--block pre --norm rms",
      "peri+rms=--block peri --norm rms",
      "lns+rms=--block lns --norm rms",
      "pre+bhyt-exact=--block pre --norm bhyt-exact --final-norm rms --bhyt-lambda-attn 2 --bhyt-lambda-mlp 1",
      "pre+bhyt=--block pre --norm bhyt --final-norm rms --bhyt-lambda-attn 2 --bhyt-lambda-mlp 1",
      "pre+bhyt-old=--block pre --norm bhyt --final-norm bhyt --bhyt-lambda 1 --bhyt-lambda-attn 1 "
      "--bhyt-lambda-mlp 1 --bhyt-refresh 1",
  };
  return arms;
}

std::vector<GridCell> plan_depth(const DepthFlags& f) {
  std::vector<GridCell> cells;
  for (int64_t d : f.depths)
    for (int64_t seed : f.seeds)
      for (const RunSpec& arm : f.arms) {
        GridCell cell;
        cell.label = "L" + std::to_string(d) + " " + arm.label + " s" + std::to_string(seed);
        cell.program = "train_gpt";
        cell.args = f.run_flags;
        cell.args.insert(cell.args.end(), arm.args.begin(), arm.args.end());
        for (const std::string& a : depth_cell_flags(d, seed)) cell.args.push_back(a);
        cell.out_dir = f.base.out_dir + "/L" + std::to_string(d) + "/" + arm.label + "/s" + std::to_string(seed);
        cell.cost = (double)d / 4.0;  // against the demo GPT's 4 layers (the ETA reads only ratios)
        cells.push_back(cell);
      }
  return cells;
}

GridEstimate estimate_depth(const std::vector<GridCell>& cells, const DepthFlags& flags) {
  return estimate_grid(cells, flags.jobs, flags.step_ms);
}

}  // namespace nl
