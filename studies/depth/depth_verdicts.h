// The depth study's judgements of the BHyT paper's claims, from its results: the
// residual stream flat with depth against Pre-LN, the per-layer variance below LayerNorm
// Scaling's, the approximated site-2 variance tracking the exact one, the approximation
// cheaper than BHyT*. Each gives summary lines, its section's verdict lines, and rows of
// the "what reproduces" table (studies/report/claims.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/depth/depth_records.h"

namespace nl {

// What a run is to the claims, from the block and norm its config.json records: a
// Pre-LN baseline, LayerNorm Scaling, a BHyT run, or none of these.
enum class DepthRole { PreLN, LNS, BHyT, Other };
DepthRole depth_role(const std::string& block, const std::string& norm);

struct DepthCell {  // the runs of one (depth, arm), over the seeds
  int64_t depth;
  std::string variant;
  DepthRole role;
  std::vector<DepthRun> runs;
};

// The runs grouped by (depth, arm), in the order each pair first appears.
std::vector<DepthCell> depth_cells(const std::vector<DepthCellSummary>& runs);

// f of each seed's run.
template <class F>
std::vector<double> over_seeds(const DepthCell& c, F f) {
  std::vector<double> v;
  for (const DepthRun& r : c.runs) v.push_back(f(r));
  return v;
}

// The template's values of the verdict sections (growth_verdicts, lns_verdicts,
// ratio_rows, ratio_verdicts, speed, speed_seconds), the summary's lines and the claims.
struct DepthVerdicts {
  nlohmann::json summary = nlohmann::json::array(), claims = nlohmann::json::array();
  nlohmann::json view = nlohmann::json::object();
};
DepthVerdicts depth_verdicts(const std::vector<DepthCell>& cells, const DepthResults& results);

}  // namespace nl
