// depth_study: the BHyT depth study (../shared/NORMS.md, BHyT; issue 16) at a scale two
// CPU cores can train. A deep-narrow GPT with each variant (Pre-LN with LayerNorm and
// RMSNorm, Peri-LN, LayerNorm Scaling, BHyT approximated and exact at the released
// recipe, and BHyT at this project's earlier recipe as a labelled extra) at each depth
// and seed, every run an ordinary train_gpt run of the grid (studies/grid/grid.h) with
// its activation statistics; then a speed section in this process; then
//   OUT/results.json          every number (--reuse renders the report from it alone)
//   OUT/depth_L<d>_{init,end}.csv   the per-layer variances the plots show
//   DOC (docs/results/depth.md)     studies/depth/depth.md.in filled in, plots beside it
//   DOC's name with .json            results.json again, beside the page (what_reproduces reads it)
// The claims checked: the residual stream's variance stays flat with depth under BHyT
// while Pre-LN lets it grow; with lambda/kappa < 1/sqrt(L) BHyT's per-layer output
// variance stays below LayerNorm Scaling's; the block-level approximation tracks the
// exact site-2 variance and is cheaper than BHyT*.
//
// The stages, each a value in and a value out (docs/architecture.md):
//   parse_depth_flags (depth_flags.h) -> plan_depth -> estimate_depth (depth_plan.h)
//   -> run_depth (depth_run.h) -> DepthResults (depth_records.h) -> report_depth (depth_report.h)
#pragma once
#include <string>
#include <vector>

namespace nl {

int depth_study_main(const std::vector<std::string>& args);

}  // namespace nl
