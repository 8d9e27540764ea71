// The depth study's report: docs/results/depth.md (studies/depth/depth.md.in filled in
// from a DepthResults), the per-layer variance CSVs and plots beside it, and the results
// again beside the page for what_reproduces.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "studies/depth/depth_flags.h"
#include "studies/depth/depth_records.h"

namespace nl {

// The page for `results`. plotted: the plots exist.
std::string render_depth_report(const DepthResults& results, bool plotted);

// The BHyT paper's claims as the report judges them, one row each ({claim, paper, here,
// status, why, detail}: studies/report/claims.h), for the "what reproduces" table; a
// results file lacking a field the report reads throws naming it.
nlohmann::json depth_claims(const nlohmann::json& results);

// Writes OUT/depth_L<d>_{init,end}.csv, the plots (--plot-script; the page says when it
// failed), the page (--doc) and the results beside it (the page's name with .json).
void report_depth(const DepthResults& results, const DepthFlags& flags);

}  // namespace nl
