// The depth study's grid as a value: one train_gpt run per depth, seed and arm, in that
// order, and what the grid would cost (depth_study --dry-run).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "studies/depth/depth_flags.h"
#include "studies/grid/grid.h"

namespace nl {

// The flags a cell of `depth` layers and `seed` sets itself, after the recipe's and its
// arm's: --layers and --seed.
std::vector<std::string> depth_cell_flags(int64_t depth, int64_t seed);

// The arms the study runs unless --arms says otherwise: BHyT's released recipe in both
// forms, its baselines, and this project's earlier recipe, labelled as such
// ("LABEL=FLAGS").
const std::vector<std::string>& default_depth_arms();

// Every cell, depth by depth, then seed, then arm: labelled "L<depth> <arm> s<seed>", in
// OUT/L<depth>/<arm>/s<seed>, costing depth / 4 of a step of the demo GPT (4 layers).
std::vector<GridCell> plan_depth(const DepthFlags& flags);

// What --dry-run prints of `cells` (studies/grid/grid.h: estimate_grid at --jobs and
// --step-ms).
GridEstimate estimate_depth(const std::vector<GridCell>& cells, const DepthFlags& flags);

}  // namespace nl
