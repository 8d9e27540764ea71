#include "studies/regime/reproduces.h"

#include <filesystem>
#include <map>

#include "studies/regime/regime_report.h"
#include "studies/report/study.h"     // today
#include "studies/report/template.h"
#include "train/flags/flag_parser.h"
#include "train/io/files.h"
#include "tensor/error.h"

namespace nl {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const char kTemplate[] =
#include "studies/regime/reproduces.md.in.h"
    ;

// The recipe a grid ran, in the table's words: the paper's schedule, or the study's own.
std::string recipe_label(const json& results) {
  const json& r = results.value("recipe", json::object());
  const std::string name = r.contains("recipe") && r["recipe"].is_string() ? r["recipe"].get<std::string>() : "";
  return name == "verma" ? "Verma's (`--recipe verma`)" : name.empty() ? "study's own" : "`--recipe " + name + "`";
}

}  // namespace

json reproduces_rows(const std::vector<ClaimsPage>& pages) {
  json rows = json::array();
  for (const ClaimsPage& page : pages) {
    const std::string recipe = recipe_label(page.results);
    for (json row : regime_claims(page.results)) {
      row["recipe"] = recipe;
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
    for (const char* s : {"reproduced", "not reproduced", "artefact", "untestable here"})
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
  json counts = json::array();
  const json by_recipe = status_counts(rows);
  for (const auto& [recipe, c] : by_recipe.items())
    counts.push_back({{"recipe", recipe},
                      {"reproduced", c["reproduced"]},
                      {"not_reproduced", c["not reproduced"]},
                      {"artefact", c["artefact"]},
                      {"untestable", c["untestable here"]}});
  const json view = {{"rows", rows}, {"counts", counts}, {"command", command}, {"date", date}};
  return render_template(kTemplate, view, "studies/regime/reproduces.md.in");
}

int what_reproduces_main(const std::vector<std::string>& args) {
  FlagParser p(
      "what_reproduces",
      "Write the table of the paper's claims as the regime pages judge them, from the results file beside each "
      "page (PAGE.json), one row per claim with the paper's number, ours, the status, the recipe and the page.");
  std::vector<std::string> pages = {"docs/results/regime_full.md", "docs/results/regime_verma.md"};
  std::string out = "docs/results/reproduces.md";
  p.list("--pages", pages, "the regime pages whose claims the table lists (each needs PAGE.json beside it)");
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
    const fs::path rel = fs::proximate(md, fs::path(out).parent_path().empty() ? "." : fs::path(out).parent_path());
    loaded.push_back({results, rel.string()});
    command += (i ? "," : "") + pages[i];
  }
  command += " --out " + out;
  write_text_file(out, render_reproduces(loaded, command, today()));
  return 0;
}

}  // namespace nl
