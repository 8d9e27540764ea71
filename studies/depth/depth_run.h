// Running the depth study's grid: every planned cell (depth_plan.h) trained or kept, each
// summarised where its files are, then the speed section, into one DepthResults.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/depth/depth_flags.h"
#include "studies/depth/depth_records.h"
#include "studies/grid/grid.h"

namespace nl {

// The speed section's norms: the paper's baseline RMSNorm, BHyT* and BHyT.
const std::vector<std::string>& depth_speed_norms();

// --speed: the speed section alone, printed as results.json would hold it.
void print_depth_speed(const DepthFlags& flags);

// A finished (or failed) cell's summary from its outcome, its config.json and its folder
// (read_depth_run reads the folder of a run that exited 0); `arm` labels it.
DepthCellSummary summarize_depth_cell(const std::string& arm, const CellOutcome& outcome,
                                      const nlohmann::ordered_json& config, const std::string& out_dir);

// Trains the cells that are not finished (kept ones are read as they are), times the
// speed section when --speed-steps > 0, and returns every number the report needs. Under
// mpirun only the lead rank gets results (the others: none). Writes nothing but the runs.
std::optional<DepthResults> run_depth(const DepthFlags& flags, const std::vector<GridCell>& cells);

}  // namespace nl
