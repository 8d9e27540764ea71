// The DyT regime study's report (studies/regime/regime_report.h): the page's setup from
// results.json, its sections from regime_rows.h (the rows and their verdicts) joined in
// page order, the template regime.md.in filled in; and the CSVs its plots draw.
#include "studies/regime/regime_report.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "studies/instruments/screening.h"
#include "studies/regime/regime_rows.h"
#include "studies/regime/regime_study.h"
#include "studies/report/study.h"
#include "studies/report/template.h"
#include "studies/report/verdicts.h"
#include "tensor/error.h"
#include "train/io/files.h"

namespace nl {

namespace {

using json = nlohmann::json;

const char kTemplate[] =
#include "studies/regime/regime.md.in.h"
    ;

}  // namespace

// The Setup paragraph's words for the recipe the grid ran (results.json's "recipe": the
// flags' values), so that the page says which schedule and biases its numbers come from;
// a results file from before --schedule and --norm-bias existed had their defaults.
json setup_view(const json& recipe) {
  auto text = [&](const char* key, const char* missing) {
    return recipe.contains(key) && recipe[key].is_string() ? recipe[key].get<std::string>() : std::string(missing);
  };
  const std::string name = text("recipe", "");
  json v = json::object();
  v["recipe_text"] = name.empty() ? std::string("the study's own (the demo's optimizer and schedule), not the paper's")
                     : name == "verma" ? std::string("`--recipe verma`, Verma's released schedule and bias-free model")
                                       : "`--recipe " + name + "`";
  const bool linear_bias = text("bias", "on") == "on", norm_bias = text("norm_bias", "on") == "on";
  v["bias_text"] = linear_bias && norm_bias     ? "linears and norms with biases"
                   : !linear_bias && !norm_bias ? "no bias in any linear or norm (`--bias off --norm-bias off`)"
                   : linear_bias                ? "linears with biases, norms without a beta"
                                                : "linears without biases, norms with a beta";
  v["head_text"] = text("tied_head", "on") == "on" ? "tied embedding and head" : "a head of its own";
  v["schedule_flat"] = text("schedule", "cosine") == "flat";
  v["bias_free"] = !linear_bias && !norm_bias;
  return v;
}

namespace {

// --kept-only: the grid's cells no results file had, one line per kind with its seeds
json not_run_lines(const RegimeResults& results) {
  std::vector<std::pair<std::string, std::string>> missing;  // kind, its seeds
  for (const NotRunCell& cell : results.not_run.value_or(std::vector<NotRunCell>{})) {
    const std::string seed = std::to_string(cell.seed);
    auto it = std::find_if(missing.begin(), missing.end(), [&](const auto& m) { return m.first == cell.cell; });
    if (it == missing.end())
      missing.push_back({cell.cell, seed});
    else
      it->second += ", " + seed;
  }
  json lines = json::array();
  for (const auto& [kind, seeds] : missing) lines.push_back(kind + " (seeds " + seeds + ")");
  return lines;
}

json regime_view(const RegimeResults& results, bool plotted, const std::string& plot_stem) {
  json view = json::object();
  for (const auto& [key, value] : results.header.recipe.items()) view[key] = value;
  const StudyHeader& h = results.header;
  json header = h;  // date, command, out, jobs, threads, cores over the recipe's values of the same names
  header.erase("loads"), header.erase("recipe");
  view.update(header);
  view.update(json{{"cells_run", results.cells_run},
                   {"cells_kept", results.cells_kept},
                   {"grid", results.grid},
                   {"screen_step", results.screen_step},
                   {"vit_steps", results.vit_steps},
                   {"estimate_minutes", results.estimate_minutes}});
  view["grid_replaced"] = results.grid_replaced;
  view["minutes"] = fmt(results.seconds / 60.0, "%.1f");
  double kept_seconds = 0;  // the kept runs' own wall times, when they were trained
  for (const RegimeRun& run : results.runs)
    if (run.kept) kept_seconds += run.seconds;
  view["kept_run_minutes"] = fmt(kept_seconds / 60.0, "%.1f");
  view["runs"] = results.runs.size();
  view["load_min"] = fmt(spread_of(h.loads).min, "%.1f");
  view["load_max"] = fmt(spread_of(h.loads).max, "%.1f");
  view["threshold"] = fmt(kScreenThreshold, "%.2f");
  view["margin"] = fmt(kOverfitMargin, "%.2f");
  view["scarce_passes"] = fmt(kScarcePasses, "%g");
  view["rich_passes"] = fmt(kRichPasses, "%g");
  view["mid_match"] = fmt(kMidMatch, "%g");
  view["plotted"] = plotted;
  view["loss_png"] = plot_stem + "_loss.png";
  view["screen_png"] = plot_stem + "_screen.png";
  view["vit_png"] = plot_stem + "_vit.png";
  view["results_file"] = plot_stem + ".json";
  view["plot_script"] = results.plot_script;
  view["arms"] = results.arms;
  view["vit_arms"] = results.vit_arms;
  view["llama_arms"] = results.llama_arms;
  view["reference"] = results.reference;
  view.update(setup_view(h.recipe));
  // the loss of a model that knows only byte frequencies (regime_study computes it from
  // the validation split): a seed that did not close a tenth of the gap below it to LN's
  // best did not train (regime_analysis.h: did_not_train)
  view["unigram"] = fmt(results.unigram_loss.value_or(NAN), "%.4f");
  view["trained_share"] = fmt(kTrainedShare, "%g");
  std::string seeds;
  for (int64_t s : results.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  view["seeds"] = seeds;
  view["seed_count"] = results.seeds.size();
  view["stuck"] = fmt(kStuckLoss, "%.1f");
  view["train_end_steps"] = std::to_string(kTrainEndSteps);
  view["total_bytes"] = results.train_bytes_all;

  // the sections (regime_rows.h), in the order their lines join the page's lists
  const ReportGrid grid(results);
  ReportFindings findings;
  phase_tables(grid, view, findings);
  alpha0_sweep(grid, view, findings);
  instrument_rows(grid, view);
  screen_judgement(grid, view, findings);
  for (const json& row : view["paper_rows"])
    findings.summary.push_back(row["arm"].get<std::string>() + " against " + results.reference + ", " +
                               row["regime"].get<std::string>() + " (" + row["size"].get<std::string>() + "): paper " +
                               row["paper"].get<std::string>() + ", here " + row["here"].get<std::string>() +
                               row["caveat"].get<std::string>());
  llama_rows(grid, view, findings);
  vit_rows(grid, view, findings);
  view["llama_note"] = results.llama_note;
  view["not_run"] = not_run_lines(results);
  view["not_run_count"] = results.not_run ? results.not_run->size() : 0;
  // the arms of --grid full this grid has no run of, named (none on the full grid)
  std::string absent_arms;
  for (const std::string& label : full_grid_gpt_labels()) {
    const bool present = std::any_of(grid.groups.begin(), grid.groups.end(),
                                     [&](const RunGroup& g) { return g.model == "gpt" && g.arm == label; });
    if (!present) absent_arms += (absent_arms.empty() ? "" : ", ") + ("`" + label + "`");
  }
  view["absent_arms"] = absent_arms;
  view["summary"] = findings.summary;
  view["reproduced"] = findings.reproduced;
  view["not_reproduced"] = findings.not_reproduced;
  view["untestable"] = findings.untestable;
  view["claims"] = findings.claims;
  return view;
}

}  // namespace

std::string render_regime_report(const RegimeResults& results, bool plotted, const std::string& plot_stem) {
  return render_template(kTemplate, regime_view(results, plotted, plot_stem), "studies/regime/regime.md.in");
}

json regime_claims(const RegimeResults& results) { return regime_view(results, false, "regime")["claims"]; }

// The plots' data: the end validation loss (mean over seeds) per size of every GPT arm of
// the page, each width and the Llama arms included (a page's plot draws its own cells:
// the width pages' curves are their widths'), each DyT cell's screen saturation against
// its outcome, and the ViT arms' best validation accuracy per training-set size.
std::string plot_label(const RunGroup& g, int64_t base_width) {
  return g.width == base_width ? g.arm : g.arm + " w" + std::to_string(g.width);
}

void write_plot_csvs(const std::string& out, const RegimeResults& results) {
  const ReportGrid grid(results);
  const std::vector<RunGroup>& groups = grid.groups;
  const int64_t base = results.dim, total = results.train_bytes_all;
  std::vector<const RunGroup*> curves;  // first appearance order: the grid's arm order
  std::set<int64_t> sizes;
  for (const RunGroup& g : groups)
    if (g.model == "gpt") {
      if (std::none_of(curves.begin(), curves.end(),
                       [&](const RunGroup* c) { return plot_label(*c, base) == plot_label(g, base); }))
        curves.push_back(&g);
      sizes.insert(g.size < 0 ? total : g.size);
    }
  std::string text = "bytes";
  for (const RunGroup* c : curves) text += "," + plot_label(*c, base);
  text += "\n";
  for (int64_t s : sizes) {
    text += std::to_string(s);
    for (const RunGroup* c : curves) {
      const RunGroup* g = grid.find("gpt", c->arm, s == total ? -1 : s, c->width);
      if (!g) g = grid.find("gpt", c->arm, s, c->width);
      text +=
          "," + (g ? fmt(mean_of(g->each([](const ReportRun& r) { return r.val_end; })), "%.6g") : std::string("NaN"));
    }
    text += "\n";
  }
  write_text_file(out + "/regime_loss.csv", text);
  // the ViT arms: best validation accuracy per training-set size ("all": Fashion-MNIST's
  // 60 000 training images less the 5 000 train_vit holds out)
  constexpr int64_t kVitAllImages = 55000;
  std::vector<std::string> vit_arms;
  std::set<int64_t> images;
  for (const RunGroup& g : groups)
    if (g.model == "vit") {
      if (!std::count(vit_arms.begin(), vit_arms.end(), g.arm)) vit_arms.push_back(g.arm);
      images.insert(g.size < 0 ? kVitAllImages : g.size);
    }
  std::string vit = "images";
  for (const std::string& a : vit_arms) vit += "," + a;
  vit += "\n";
  for (int64_t n : images) {
    vit += std::to_string(n);
    for (const std::string& a : vit_arms) {
      const RunGroup* g = grid.find("vit", a, n == kVitAllImages ? -1 : n, 0);
      if (!g) g = grid.find("vit", a, n, 0);
      const double best = g ? mean_of(g->each(best_accuracy)) : NAN;
      vit += "," + fmt(100.0 * best, "%.6g");
    }
    vit += "\n";
  }
  write_text_file(out + "/regime_vit.csv", vit);
  std::string sat = "saturation,percent\n";
  const std::string reference = results.reference;
  for (const RunGroup& g : groups) {
    if (g.model != "gpt" || g.llama || g.arm == reference) continue;
    const RunGroup* ln = grid.find("gpt", reference, g.size, g.width);
    const double s = mean_of(g.each([](const ReportRun& r) { return r.rec.sat_screen.value_or(NAN); }));
    if (!ln || !std::isfinite(s) || !screened(g)) continue;
    const PairedComparison c = compare_paired(g.seeds(), g.each([](const ReportRun& r) { return r.val_end; }),
                                              ln->seeds(), ln->each([](const ReportRun& r) { return r.val_end; }));
    if (std::isfinite(c.percent)) sat += fmt(s, "%.6g") + "," + fmt(c.percent, "%.6g") + "\n";
  }
  write_text_file(out + "/regime_screen.csv", sat);
}

}  // namespace nl
