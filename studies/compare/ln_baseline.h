// Which LayerNorm run a run of the GPT comparisons is read against (compare_norms' table
// and its tuned comparison): the ln run with the same block and recipe, else the first ln
// run on the same block. A recipe changes more than the norm (the optimizer, biases, the
// head), so only LayerNorm under that same recipe isolates the norm.
#pragma once
#include <string>
#include <vector>

namespace nl {

struct RunKind {
  std::string norm, block, recipe;
};

// For each run, the index of its ln run in `runs` (itself for an ln run), or -1 without one.
std::vector<int> ln_baselines(const std::vector<RunKind>& runs);

// A run's loss against its ln run's, as the tables print it: "+1.2 %", "-0.3 %", "0.0 %";
// "-" for NaN (no ln run to compare with).
std::string relative_text(double percent);

}  // namespace nl
