#include "studies/regime/regime_study.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "studies/regime/regime_flags.h"
#include "studies/regime/regime_plan.h"
#include "studies/regime/regime_run.h"
#include "studies/report/study.h"
#include "studies/report/template.h"

namespace nl {

std::string size_label(int64_t size) {
  if (size < 0) return "all";
  if (size >= 1000000 && size % 100000 == 0) return fmt((double)size / 1e6, "%g") + "M";
  if (size >= 1000 && size % 1000 == 0 && size < 1000000) return std::to_string(size / 1000) + "K";
  return std::to_string(size);
}

std::string cell_kind(const RegimeCell& c) {
  if (c.model == "vit") return "vit " + c.arm.label + " " + size_label(c.size) + " images";
  return "gpt w" + std::to_string(c.width) + " " + size_label(c.size) + " " + c.arm.label;
}

std::string RegimeCell::folder() const {
  if (model == "vit")
    return "vit/" + (size < 0 ? std::string("all") : std::to_string(size)) + "/" + arm.label + "/s" +
           std::to_string(seed);
  return "gpt/w" + std::to_string(width) + "/" + size_label(size) + "/" + arm.label + "/s" + std::to_string(seed);
}

std::vector<RegimeCell> regime_cells(const RegimePlan& plan) {
  std::vector<RegimeCell> cells;
  for (int64_t seed : plan.seeds)
    for (int64_t size : plan.sizes)
      for (const RunSpec& arm : plan.arms) cells.push_back({"gpt", arm, size, plan.width, seed});
  // the width axis and the Llama arms on the smallest and the largest subset (-1, all, is the largest)
  std::vector<int64_t> ends;
  if (!plan.sizes.empty()) {
    const bool has_all = std::count(plan.sizes.begin(), plan.sizes.end(), -1) > 0;
    std::vector<int64_t> finite;
    for (int64_t s : plan.sizes)
      if (s > 0) finite.push_back(s);
    if (!finite.empty()) ends.push_back(*std::min_element(finite.begin(), finite.end()));
    const int64_t largest = has_all ? -1 : *std::max_element(finite.begin(), finite.end());
    if (ends.empty() || ends[0] != largest) ends.push_back(largest);
    for (int64_t seed : plan.seeds)
      for (int64_t w : plan.widths) {
        if (w == plan.width) continue;
        for (int64_t size : ends)
          for (const RunSpec& arm : plan.arms)
            if (std::count(plan.width_arms.begin(), plan.width_arms.end(), arm.label))
              cells.push_back({"gpt", arm, size, w, seed});
      }
  }
  for (int64_t seed : plan.llama_seeds)
    for (int64_t size : ends)
      for (const RunSpec& arm : plan.llama_arms) cells.push_back({"gpt", arm, size, plan.width, seed, true});
  for (int64_t seed : plan.seeds)
    for (int64_t images : plan.vit_images)
      for (const RunSpec& arm : plan.vit_arms) cells.push_back({"vit", arm, images, 0, seed});
  return cells;
}

double cell_seconds(const RegimeCell& cell, int64_t steps, double gpt_step_ms, double vit_step_ms) {
  if (cell.model == "vit") {
    // an evaluation of the 5000 held-out images every 250 steps: about 13 steps' worth
    const double evals = (double)steps / 250.0 * 13.0;
    return ((double)steps + evals) * vit_step_ms / 1000.0;
  }
  // per token, the matrix products of L blocks of width d (12 d^2 weights each), the
  // attention maps (2 T d per block) and the head (256 d): relative to width 128; the
  // rest of a step grows as d (kMatmulShare)
  auto flops = [](double d) { return 4.0 * (12.0 * d * d + 2.0 * 64.0 * d) + 256.0 * d; };
  const double d = (double)cell.width;
  double scale = kMatmulShare * flops(d) / flops(128.0) + (1.0 - kMatmulShare) * d / 128.0;
  // Differential Attention's two softmax maps per head: its cells of the default grid on
  // 2026-12-02 took 609 s (median of 6) against 397-413 s for ln and dyt-a2
  for (size_t i = 0; i + 1 < cell.arm.args.size(); ++i)
    if (cell.arm.args[i] == "--attn" && cell.arm.args[i + 1] == "diff") scale *= kDiffAttentionCost;
  // evaluations of 10 batches of 32 every 250 steps (a forward is a third of a step),
  // and two measurements of about 4 s (studies/instruments/measurement.h)
  const double evals = (double)steps / 250.0 * 10.0 * 2.0 / 3.0;
  return ((double)steps + evals) * gpt_step_ms * scale / 1000.0 + 8.0 * scale;
}

int regime_study_main(const std::vector<std::string>& args) {
  RegimeFlags flags;
  if (!parse_regime_flags(args, flags)) return 0;
  const RegimeGrid grid = plan_regime(flags);
  if (flags.dry_run) {
    std::printf("%s", estimate_regime(flags, grid).c_str());
    return 0;
  }
  check_doc_folder(flags.doc);
  std::optional<RegimeResults> results = flags.reuse ? reuse_regime(flags) : run_regime(flags, grid);
  if (!results) return 0;  // an MPI rank other than the lead: the lead writes the report
  report_regime(flags, *results);
  return 0;
}

}  // namespace nl
