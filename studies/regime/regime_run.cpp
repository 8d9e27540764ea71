#include "studies/regime/regime_run.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "nn/norms/registry.h"
#include "studies/regime/regime_analysis.h"
#include "studies/regime/regime_report.h"
#include "studies/report/study.h"
#include "studies/report/verdicts.h"
#include "train/data/text_data.h"
#include "train/io/files.h"
#include "train/io/run_log.h"
#include "train/loop/result_record.h"
#include "train/safety/distributed.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------- a cell's files

// a cell's log.csv; none for a run refused before its first write (its curves are empty)
std::optional<LogTable> cell_log(const std::string& dir) {
  const std::string path = dir + "/log.csv";
  if (!fs::exists(path)) return std::nullopt;
  return read_log(path);
}

Curve points(const std::optional<LogTable>& log, const std::string& column) {
  Curve out;
  if (log)
    for (const auto& [step, value] : log->column(column)) out.push_back({step, value});
  return out;
}

// a figure of measurements.json (null, or absent: NaN)
double figure_of(const json& v) { return v.is_number() ? v.get<double>() : NAN; }

// What the report needs of a finished GPT cell: the validation curve and the
// instruments' summaries at step 500 and at the end (measurements.json).
void summarize_gpt(const std::string& dir, int64_t steps, int64_t screen_step, RegimeRun& run) {
  const std::optional<LogTable> log = cell_log(dir);
  run.curve = points(log, kValLoss);
  // the training loss at the end, for the Llama collapse criterion (regime_rows.h: collapsed)
  std::vector<double> train;
  for (const CurvePoint& p : points(log, kTrainLoss)) train.push_back(p.value);
  run.train_end = tail_mean(train, kTrainEndSteps);
  const std::string path = dir + "/measurements.json";
  json m = fs::exists(path) ? json::parse(read_text_file(path, "measurements"), nullptr, false) : json();
  auto summary_at = [&](int64_t step) -> json {
    const std::string key = std::to_string(step);
    return m.is_object() && m.contains(key) ? m[key]["summary"] : json();
  };
  const json s500 = summary_at(screen_step), end = summary_at(steps);
  auto sat = [](const json& s) {
    return s.is_object() && s.contains("saturation") && s["saturation"].is_object()
               ? figure_of(s["saturation"].value("gt2", json()))
               : NAN;
  };
  run.sat_screen = sat(s500);
  run.sat_end = sat(end);
  // every instrument of the end, NaN where it was not measured (RegimeRun: a finished
  // GPT cell's record has them all)
  const json& e = end.is_object() ? end : json::object();
  run.erank_end = figure_of(e.value("effective_rank_mean", json()));
  run.logit_variance_end = figure_of(e.value("logit_variance", json()));
  run.alpha_end = figure_of(e.value("alpha_mean", json()));
  run.noise_end.emplace();
  for (const auto& n : e.value("noise_stability", json::array()))
    (*run.noise_end)[fmt(n.value("eps", NAN), "%g")] = figure_of(n.value("mean", json()));
}

}  // namespace

std::optional<RegimeResults> run_regime(const RegimeFlags& f, const RegimeGrid& g) {
  const auto start = StudyClock::now();
  std::vector<double> loads = {load_average()};
  std::vector<size_t> plan_of;  // a grid cell's index in g.cells
  const std::vector<GridCell> cells = regime_grid_cells(f, g, plan_of);
  double estimate = 0;
  for (const GridCell& cell : cells) estimate += cell.cost;
  const auto summarize = [&](size_t i, const CellOutcome& outcome, const nlohmann::ordered_json& config) {
    const RegimeCell& c = g.cells[plan_of[i]];
    const json& res = outcome.result;
    RegimeRun run;
    run.model = c.model, run.arm = c.arm.label, run.size = c.size, run.width = c.width, run.seed = c.seed;
    run.exit_code = outcome.exit_code, run.kept = outcome.kept, run.llama = c.llama;
    run.norm = config["norm"].get<std::string>();
    run.bounded = norm_kind(run.norm).bounded.name;
    const bool done = outcome.exit_code == 0 && res.is_object();
    if (done) {
      const ResultRecord result = result_record_of(res, cells[i].out_dir + "/result.json");
      run.val_end = result.figure(kValLoss);
      run.seconds = result.seconds;
    }
    if (c.model == "gpt") {
      summarize_gpt(cells[i].out_dir, f.base.steps, f.measure_first(), run);
    } else {
      const std::optional<LogTable> log = cell_log(cells[i].out_dir);
      run.curve = points(log, kValLoss);
      run.acc_curve = points(log, kValAcc);
    }
    return json(run);
  };
  std::string note = " (estimate " + fmt(estimate / 60.0, "%.0f") + " CPU minutes)";
  if (!f.cells_from.empty()) note += "; " + std::to_string(g.kept_count()) + " more kept from " + f.cells_from;
  const std::vector<CellOutcome> trained =
      run_study_grid("regime study", cells, f.jobs, f.base.threads, summarize, note);
  if (!dist::is_lead()) return std::nullopt;  // the lead rank has every cell's summary and writes the report
  std::vector<CellOutcome> outcomes(g.cells.size());
  for (size_t i = 0; i < trained.size(); ++i) outcomes[plan_of[i]] = trained[i];
  for (size_t i = 0; i < g.cells.size(); ++i)
    if (g.kept[i]) {
      outcomes[i].kept = true;
      outcomes[i].exit_code = 0;
      RegimeRun run = *g.kept[i];
      run.kept = true;
      outcomes[i].summary = run;
    }
  if (f.kept_only)  // the cells not run are not outcomes: the report lists them instead
    outcomes.erase(std::remove_if(outcomes.begin(), outcomes.end(), [](const CellOutcome& o) { return !o.kept; }),
                   outcomes.end());
  loads.push_back(load_average());
  RegimeResults r;
  for (const CellOutcome& o : outcomes) r.runs.push_back(o.summary.get<RegimeRun>()), r.cells_kept += o.kept;
  r.cells_run = (int64_t)outcomes.size() - r.cells_kept;
  r.header = study_header(f.command, f.base.out_dir, f.jobs, f.base.threads, loads, f.recipe);
  r.seconds = seconds_since(start);
  r.estimate_minutes = fmt(estimate / 60.0, "%.0f");
  r.grid_replaced = f.grid_replaced;
  const TextData text = load_fortunes(f.base.data_dir);
  r.grid = f.grid, r.seeds = f.plan.seeds, r.reference = f.reference;
  r.screen_step = f.measure_first(), r.vit_steps = f.plan.vit_steps, r.llama_note = f.llama_note, r.not_run = g.not_run;
  r.train_bytes_all = (int64_t)text.train.size(), r.unigram_loss = unigram_loss(text.val);
  r.arms = run_specs_json(f.plan.arms).get<std::vector<RegimeArm>>();
  r.vit_arms = run_specs_json(f.plan.vit_arms).get<std::vector<RegimeArm>>();
  r.llama_arms = run_specs_json(f.plan.llama_arms).get<std::vector<RegimeArm>>();
  r.plot_script = f.plot_script;
  fs::create_directories(f.base.out_dir);  // --kept-only trained nothing into it
  const json written = r;
  write_text_file(f.base.out_dir + "/results.json", written.dump(1) + "\n");
  // read back as --reuse will read it (the recipe's steps, batch, seq and dim come from
  // the header's recipe there); written first, so that a file this refuses is there to see
  return regime_results_of(written, "", f.base.out_dir + "/results.json");
}

RegimeResults reuse_regime(const RegimeFlags& f) {
  const std::string out = f.base.out_dir;
  RegimeResults results = regime_results_of(read_study_results(out), "--reuse", out + "/results.json");
  // results written before the unigram loss was recorded: the same validation split's
  if (!results.unigram_loss) results.unigram_loss = unigram_loss(load_fortunes(f.base.data_dir).val);
  return results;
}

void report_regime(const RegimeFlags& f, const RegimeResults& results) {
  write_plot_csvs(f.base.out_dir, results);
  const fs::path doc_dir = fs::path(f.doc).has_parent_path() ? fs::path(f.doc).parent_path() : fs::path(".");
  const std::string plot_stem = fs::path(f.doc).stem().string();  // regime.md: regime_loss.png, regime_screen.png
  bool plotted = !f.plot_script.empty();
  if (plotted) {
    const std::string cmd = "bash '" + f.plot_script + "' '" + (doc_dir / (plot_stem + "_loss.png")).string() + "' '" +
                            f.base.out_dir + "/regime_loss.csv' '" + (doc_dir / (plot_stem + "_screen.png")).string() +
                            "' '" + f.base.out_dir + "/regime_screen.csv' '" +
                            (doc_dir / (plot_stem + "_vit.png")).string() + "' '" + f.base.out_dir +
                            "/regime_vit.csv' > /dev/null 2>&1";
    plotted = std::system(cmd.c_str()) == 0;
  }
  write_text_file(f.doc, render_regime_report(results, plotted, plot_stem));
  // the results beside the report, kept with it: a later --cells-from continues from them
  write_text_file((doc_dir / (plot_stem + ".json")).string(), json(results).dump(1) + "\n");
  std::printf("wrote %s\n", f.doc.c_str());
}

}  // namespace nl
