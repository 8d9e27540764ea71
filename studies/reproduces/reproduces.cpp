#include "studies/reproduces/reproduces.h"

#include <filesystem>
#include <map>

#include "studies/depth/depth_report.h"
#include "studies/fold/cbwc_claims.h"
#include "studies/regime/regime_report.h"
#include "studies/regime/regime_records.h"
#include "studies/report/claims.h"
#include "studies/report/study.h"     // today
#include "studies/report/template.h"
#include "train/flags/flag_parser.h"
#include "train/io/files.h"
#include "train/loop/log_row.h"  // kValLoss
#include "tensor/error.h"

namespace nl {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const char kTemplate[] =
#include "studies/reproduces/reproduces.md.in.h"
    ;

// The recipe a regime grid ran, in the table's words: the paper's schedule, or the study's own.
std::string regime_recipe(const json& results) {
  const json& r = results.value("recipe", json::object());
  const std::string name = r.contains("recipe") && r["recipe"].is_string() ? r["recipe"].get<std::string>() : "";
  return name == "verma" ? "Verma's (`--recipe verma`)" : name.empty() ? "study's own" : "`--recipe " + name + "`";
}

// The papers, in the order the table lists them, and the results file a paper's rows come from.
const std::vector<std::string> kPapers = {"DyT regimes (Verma 2026)", "BHyT (Byun et al. 2026)",
                                          "CBWC + RMSNorm (Enjoy your layer normalization...)"};
const std::vector<std::string> kSources = {
    "a regime grid's results beside its page (docs/results/regime_verma.json)",
    "the depth study's results beside its page (docs/results/depth.json, which `depth_study` writes)",
    "a comparison holding ln and cbwc runs (docs/results/demo.json) and fold_ln's check (docs/results/folding.json)"};

}  // namespace

std::string study_kind(const json& results) {
  if (results.contains("study") && results["study"].is_string()) return results["study"];
  // files written before "study" existed: a regime grid has arms, the depth study depths
  if (results.contains("arms")) return "regime";
  if (results.contains("depths")) return "depth";
  if (results.contains("runs") && results["runs"].is_array()) return "comparison";
  fail("not a results file of a study what_reproduces knows (regime, depth, comparison, fold)");
}

json claims_of(const json& results) {
  const std::string kind = study_kind(results);
  json rows;
  std::string paper, recipe;
  if (kind == "regime") {
    rows = regime_claims(results.get<RegimeResults>()), paper = kPapers[0], recipe = regime_recipe(results);
  } else if (kind == "depth") {
    rows = depth_claims(results), paper = kPapers[1], recipe = "the depth study's (GPT-2 block)";
  } else if (kind == "comparison") {
    // each row names its pair's recipe
    rows = cbwc_training_claims(results.get<ComparisonResults>()), paper = kPapers[2];
  } else if (kind == "fold") {
    rows = fold_claims(results), paper = kPapers[2], recipe = "a trained demo checkpoint";
  } else {
    fail("a results file of the study '", kind, "', which makes no claim what_reproduces knows");
  }
  for (json& row : rows) {
    row["paper_name"] = paper;
    if (!row.contains("recipe")) row["recipe"] = recipe;
  }
  return rows;
}

namespace {

// A table cell's text: a "|" would end the cell, so it is escaped.
std::string cell_text(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

json reproduces_rows(const std::vector<ClaimsPage>& pages) {
  json rows = json::array();
  for (const ClaimsPage& page : pages) {
    for (json row : claims_of(page.results)) {
      for (const char* key : {"claim", "paper", "here", "why"}) row[key] = cell_text(row.value(key, ""));
      row["page"] = page.link;
      row["page_name"] = fs::path(page.link).stem().string();
      const std::string why = row.value("why", "");
      row["status_text"] = row["status"].get<std::string>() + (why.empty() ? "" : " (" + why + ")");
      rows.push_back(row);
    }
  }
  return rows;
}

json status_counts(const json& rows) {
  json counts = json::object();
  for (const json& row : rows) {
    json& c = counts[row["recipe"].get<std::string>()];
    for (const char* s : kClaimStatuses)
      if (!c.contains(s)) c[s] = 0;
    const std::string status = row["status"];
    NL_CHECK(c.contains(status), "what_reproduces: unknown status '", status, "'");
    c[status] = c[status].get<int>() + 1;
  }
  return counts;
}

std::string render_reproduces(const std::vector<ClaimsPage>& pages, const std::string& command,
                              const std::string& date) {
  const json rows = reproduces_rows(pages);
  json sections = json::array(), missing = json::array();
  for (size_t p = 0; p < kPapers.size(); ++p) {
    const std::string& paper = kPapers[p];
    json own = json::array();
    for (const json& row : rows)
      if (row["paper_name"] == paper) own.push_back(row);
    if (own.empty()) {  // said, not left out silently
      missing.push_back({{"paper", paper}, {"source", kSources[p]}});
      continue;
    }
    json counts = json::array();
    const json by_recipe = status_counts(own);
    for (const auto& [recipe, c] : by_recipe.items())
      counts.push_back({{"recipe", recipe},
                        {"reproduced", c["reproduced"]},
                        {"not_reproduced", c["not reproduced"]},
                        {"artefact", c["artefact"]},
                        {"untestable", c["untestable here"]}});
    sections.push_back({{"paper", paper}, {"rows", own}, {"counts", counts}});
  }
  const json view = {{"sections", sections}, {"missing", missing}, {"command", command}, {"date", date}};
  return render_template(kTemplate, view, "studies/reproduces/reproduces.md.in");
}

namespace {

// check() on the results file `file`: what it finds wrong (an nl::Error, a missing field's
// FieldError among them, or nlohmann's json::exception) fails as one line naming the file.
template <class Check>
auto named_on_failure(const std::string& file, Check&& check) {
  try {
    return check();
  } catch (const json::exception& e) {
    fail("--pages: ", file, ": ", e.what());
  } catch (const Error& e) {
    fail("--pages: ", file, ": ", e.what());
  }
}

}  // namespace

int what_reproduces_main(const std::vector<std::string>& args) {
  FlagParser p(
      "what_reproduces",
      "Write the table of the three papers' claims as the studies judge them (DyT's regime grids, BHyT's depth "
      "study, CBWC's comparison and fold), from the results file beside each page (PAGE.json), one row per claim "
      "with the paper's number, ours, the status, the recipe and the page.");
  std::vector<std::string> pages = {"docs/results/regime_full.md", "docs/results/regime_verma.md",
                                    "docs/results/demo.md", "docs/results/folding.md"};
  std::string out = "docs/results/reproduces.md";
  p.list("--pages", pages,
         "the pages whose claims the table lists (each needs PAGE.json beside it: the results of a regime grid, the "
         "depth study, a comparison or fold_ln's fold_check.json)");
  p.text("--out", out, "the table to write", FlagRole::Setting);
  if (!p.parse(args)) return 0;
  std::vector<ClaimsPage> loaded;
  std::string command = "build/release/what_reproduces --pages ";
  for (size_t i = 0; i < pages.size(); ++i) {
    const fs::path md(pages[i]);
    NL_CHECK(md.extension() == ".md", "--pages: ", pages[i], " is not a .md page");
    const fs::path js = fs::path(md).replace_extension(".json");
    NL_CHECK(fs::exists(js), "--pages: ", pages[i], " has no results file ", js.string(), " beside it");
    json results;
    try {
      results = json::parse(read_text_file(js.string(), "results", 256 << 20));
    } catch (const json::exception& e) {
      fail("--pages: ", js.string(), " is not valid JSON (", e.what(), ")");
    }
    const std::string kind = named_on_failure(js.string(), [&] { return study_kind(results); });
    // its fields, named on failure (the regime and comparison readers name the file themselves)
    if (kind == "regime") regime_results_of(results, "--pages", js.string());
    if (kind == "comparison") {
      const auto comparison = comparison_results_of<ComparisonResults>(results, "--pages", js.string());
      // what CBWC's claims read of each run
      named_on_failure(js.string(), [&] { require_run_figures(comparison, {kValLoss}); });
    }
    // depth_claims and fold_claims check their own fields as they read them
    named_on_failure(js.string(), [&] {
      NL_CHECK(!claims_of(results).empty(), "it holds no claim what_reproduces knows (a ", kind,
               " results file without the runs a claim needs)");
    });
    const fs::path rel = fs::proximate(md, fs::path(out).parent_path().empty() ? "." : fs::path(out).parent_path());
    loaded.push_back({results, rel.string()});
    command += (i ? "," : "") + pages[i];
  }
  command += " --out " + out;
  write_text_file(out, render_reproduces(loaded, command, today()));
  return 0;
}

}  // namespace nl
