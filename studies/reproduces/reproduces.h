// The "what reproduces" table: every claim of the three papers that a study judges, one
// row each, with the paper's number, ours, the status, the recipe and the page, built from
// the results files committed beside the pages (PAGE.json) by the same verdict code that
// wrote the pages: regime grids (regime_report.h: regime_claims, Verma's DyT claims), the
// depth study (depth_report.h: depth_claims, BHyT's), a comparison holding ln and cbwc
// runs and fold_ln's check (fold/cbwc_claims.h, CBWC's). It sits above the studies it
// reads. `what_reproduces` writes it to docs/results/reproduces.md; the README links it.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nl {

// One page's claims: its results (PAGE.json's contents) and where the page is, as the
// table should link it (relative to the table's own folder).
struct ClaimsPage {
  nlohmann::json results;
  std::string link;
};

// Which study wrote a results file: its "study" field, or for files written before that
// field, what their fields show (a regime grid's "arms", the depth study's "depths", a
// comparison's "runs"). Throws for anything else.
std::string study_kind(const nlohmann::json& results);

// A results file's claims as rows (claims.h), each with its paper ("paper_name") and recipe.
nlohmann::json claims_of(const nlohmann::json& results);

// The table's rows, page by page: claim, paper, here, status, recipe, page (the link).
nlohmann::json reproduces_rows(const std::vector<ClaimsPage>& pages);

// The counts per recipe and status, e.g. {"study's own": {"reproduced": 5, ...}}.
nlohmann::json status_counts(const nlohmann::json& rows);

// The page (studies/reproduces/reproduces.md.in filled in); `command` regenerates it.
std::string render_reproduces(const std::vector<ClaimsPage>& pages, const std::string& command,
                              const std::string& date);

// what_reproduces --pages docs/results/regime_full.md,... --out docs/results/reproduces.md
int what_reproduces_main(const std::vector<std::string>& args);

}  // namespace nl
