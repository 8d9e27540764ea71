#include "studies/compare/ln_baseline.h"

#include <cmath>
#include <map>

#include "nn/norms/registry.h"
#include "studies/report/study.h"  // fmt

namespace nl {

std::vector<int> ln_baselines(const std::vector<RunKind>& runs) {
  std::map<std::string, int> of_recipe, of_block;  // the first ln run of each
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].norm != kReferenceNorm) continue;
    of_recipe.emplace(runs[i].block + "/" + runs[i].recipe, (int)i);
    of_block.emplace(runs[i].block, (int)i);
  }
  std::vector<int> out;
  for (const RunKind& r : runs) {
    if (const auto same = of_recipe.find(r.block + "/" + r.recipe); same != of_recipe.end())
      out.push_back(same->second);
    else if (const auto block = of_block.find(r.block); block != of_block.end())
      out.push_back(block->second);
    else
      out.push_back(-1);
  }
  return out;
}

std::string relative_text(double percent) {
  if (std::isnan(percent)) return "-";
  return std::fabs(percent) < 0.05 ? "0.0 %" : fmt(percent, "%+.1f %%");
}

}  // namespace nl
