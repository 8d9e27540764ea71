#include "studies/depth/depth_report.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "studies/depth/depth_verdicts.h"
#include "studies/report/study.h"
#include "studies/report/template.h"
#include "train/io/files.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;

const char kTemplate[] =
#include "studies/depth/depth.md.in.h"
    ;

// Which reference point the paper's depth plot uses, as read in the released
// repository's figure (the paper's text was not at hand).
const char* kPaperReference =
    "The BHyT paper's depth figure (Figure 3 of Byun et al. 2026, shipped in MLAI-Yonsei/BHyT: Llama-1B after 20B "
    "tokens of C4) plots the absolute variance per layer with its index 0 at the first block's output, not at the "
    "embedding: its reference point is block 1's output, the L/1 columns here.";

json depth_view(const DepthResults& results, bool plotted) {
  json view = json::object();
  for (const auto& [key, value] : results.recipe.items()) view[key] = value;
  view["date"] = results.date, view["command"] = results.command, view["out"] = results.out;
  view["jobs"] = results.jobs, view["threads"] = results.threads, view["cores"] = results.cores;
  view["cells_run"] = results.cells_run, view["cells_kept"] = results.cells_kept;
  view["load_min"] = fmt(spread_of(results.loads).min, "%.1f");
  view["load_max"] = fmt(spread_of(results.loads).max, "%.1f");
  view["minutes"] = fmt(results.seconds / 60.0, "%.1f");
  view["runs"] = results.runs.size();
  std::string depth_list, seed_list;
  for (int64_t d : results.depths) depth_list += (depth_list.empty() ? "" : ", ") + std::to_string(d);
  for (int64_t s : results.seeds) seed_list += (seed_list.empty() ? "" : ", ") + std::to_string(s);
  view["depths"] = depth_list;
  view["seeds"] = seed_list;
  view["seed_count"] = results.seeds.size();
  view["variants"] = json::array();
  for (const DepthArm& a : results.arms) view["variants"].push_back({{"label", a.label}, {"flags", a.flags}});
  view["learnt"] = fmt(kLearntLoss, "%.1f");
  view["paper_reference"] = kPaperReference;
  const double p = results.recipe.value("bhyt_p", 0.99);
  view["bhyt_p"] = fmt(p, "%.3g");
  view["kappa"] = fmt(1.0 / std::sqrt(1.0 - p), "%.3g");
  view["plot_script"] = results.plot_script;
  view["plotted"] = plotted;

  const std::vector<DepthCell> cells = depth_cells(results.runs);
  json loss_rows = json::array(), growth_rows = json::array(), lambda_rows = json::array();
  json not_learnt = json::array();
  for (const DepthCell& c : cells) {
    auto val = over_seeds(c, [](const DepthRun& r) { return r.val_loss; });
    int learnt = 0;
    for (double v : val) learnt += v < kLearntLoss;
    loss_rows.push_back({{"depth", c.depth},
                         {"variant", c.variant},
                         {"train", range_text(over_seeds(c, [](const DepthRun& r) { return r.train_loss; }), "%.4f")},
                         {"val", range_text(val, "%.4f")},
                         {"learnt", std::to_string(learnt) + " of " + std::to_string(c.runs.size())}});
    if (learnt < (int)c.runs.size())
      not_learnt.push_back(std::to_string(c.depth) + " layers " + c.variant + " (" +
                           std::to_string(c.runs.size() - learnt) + " of " + std::to_string(c.runs.size()) +
                           " seeds)");
    auto g = [](int64_t from, bool end) {
      return [from, end](const DepthRun& r) { return growth(end ? r.var_end : r.var_init, from); };
    };
    growth_rows.push_back(
        {{"depth", c.depth},
         {"variant", c.variant},
         {"g0_init", range_text(over_seeds(c, g(0, false)), "%.3g")},
         {"g0_end", range_text(over_seeds(c, g(0, true)), "%.3g")},
         {"g1_init", range_text(over_seeds(c, g(1, false)), "%.3g")},
         {"g1_end", range_text(over_seeds(c, g(1, true)), "%.3g")},
         {"v_end",
          range_text(over_seeds(c, [](const DepthRun& r) { return r.var_end.empty() ? NAN : r.var_end.back(); }),
                     "%.3g")}});
    if (c.role == DepthRole::BHyT)
      for (const DepthRun& r : c.runs) {
        const double bound = 1.0 / std::sqrt((double)c.depth);
        const double ratio = std::max(std::fabs(r.lambda_min), std::fabs(r.lambda_max)) / r.kappa;
        lambda_rows.push_back({{"depth", c.depth},
                               {"variant", c.variant},
                               {"seed", r.seed},
                               {"min", fmt(r.lambda_min, "%.3f")},
                               {"max", fmt(r.lambda_max, "%.3f")},
                               {"ratio", fmt(ratio, "%.3f")},
                               {"bound", fmt(bound, "%.3f")},
                               {"holds", lambda_condition(std::max(std::fabs(r.lambda_min), std::fabs(r.lambda_max)),
                                                          r.kappa, c.depth)
                                             ? "holds"
                                             : "violated"}});
      }
  }
  view["loss_rows"] = loss_rows;
  view["growth_rows"] = growth_rows;
  view["lambda_rows"] = lambda_rows;
  view["not_learnt"] = not_learnt.empty() ? json(false) : json(not_learnt);
  const DepthVerdicts verdicts = depth_verdicts(cells, results);
  for (const auto& [key, value] : verdicts.view.items()) view[key] = value;
  view["claims"] = verdicts.claims;
  view["summary"] = verdicts.summary;
  json plots = json::array();
  if (plotted)
    for (int64_t d : results.depths) plots.push_back({{"depth", d}, {"file", "depth_L" + std::to_string(d) + ".png"}});
  view["plots"] = plots;
  return view;
}

// The per-layer variances (means over the seeds) the plots draw: one CSV per depth and
// time, "layer,<variant>,...".
void write_variance_csvs(const std::string& out, const std::vector<DepthCell>& cells,
                         const std::vector<int64_t>& depths) {
  for (int64_t d : depths)
    for (bool end : {false, true}) {
      std::string text = "layer";
      for (const DepthCell& c : cells)
        if (c.depth == d) text += "," + c.variant;
      text += "\n";
      for (int64_t l = 0; l <= d; ++l) {
        text += std::to_string(l);
        for (const DepthCell& c : cells)
          if (c.depth == d)
            text += "," + fmt(spread_of(over_seeds(c, [&](const DepthRun& r) {
                                const std::vector<double>& v = end ? r.var_end : r.var_init;
                                return (size_t)l < v.size() ? v[(size_t)l] : NAN;
                              })).mean, "%.6g");
        text += "\n";
      }
      write_text_file(out + "/depth_L" + std::to_string(d) + (end ? "_end.csv" : "_init.csv"), text);
    }
}

// One gnuplot figure per depth beside the page; false when the script is empty or failed.
bool plot_depths(const DepthResults& results, const std::string& out, const fs::path& doc_dir,
                 const std::string& plot_script) {
  bool plotted = !plot_script.empty();
  for (int64_t d : results.depths) {
    const std::string stem = out + "/depth_L" + std::to_string(d);
    const std::string png = (doc_dir / ("depth_L" + std::to_string(d) + ".png")).string();
    const std::string cmd = "bash '" + plot_script + "' '" + png + "' 'Residual-stream variance per layer, " +
                            std::to_string(d) + " layers (means over seeds)' '" + stem + "_init.csv' '" + stem +
                            "_end.csv' > /dev/null 2>&1";
    plotted = plotted && std::system(cmd.c_str()) == 0;
  }
  return plotted;
}

}  // namespace

std::string render_depth_report(const DepthResults& results, bool plotted) {
  return render_template(kTemplate, depth_view(results, plotted), "studies/depth/depth.md.in");
}

json depth_claims(const json& results) {
  const DepthResults typed = read_record<DepthResults>(results, "depth_claims", "the depth study's results");
  return depth_view(typed, false)["claims"];
}

void report_depth(const DepthResults& results, const DepthFlags& f) {
  const std::string& out = f.base.out_dir;
  const fs::path doc_dir = fs::path(f.doc).has_parent_path() ? fs::path(f.doc).parent_path() : fs::path(".");
  write_variance_csvs(out, depth_cells(results.runs), results.depths);
  const bool plotted = plot_depths(results, out, doc_dir, f.plot_script);
  write_text_file(f.doc, render_depth_report(results, plotted));
  // the results beside the page, for what_reproduces (studies/reproduces/reproduces.h)
  write_text_file((doc_dir / (fs::path(f.doc).stem().string() + ".json")).string(), results.to_json().dump(1) + "\n");
  std::printf("wrote %s\n", f.doc.c_str());
}

}  // namespace nl
