#include "studies/compare/comparison.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "studies/report/study.h"
#include "tensor/error.h"
#include "train/flags/flag_parser.h"
#include "train/io/files.h"
#include "train/io/run_log.h"
#include "train/loop/log_row.h"  // the log's column names

namespace nl {
namespace fs = std::filesystem;


namespace {

// A comparison's grid: `program` once per run, the common flags then the run's own, in OUT/<label>.
std::vector<GridCell> comparison_cells(const std::string& program, const std::vector<std::string>& common,
                                       const std::vector<RunSpec>& runs, const std::string& out) {
  std::vector<GridCell> cells;
  for (const RunSpec& r : runs) {
    GridCell cell{r.label, program, common, out + "/" + r.label};
    cell.args.insert(cell.args.end(), r.args.begin(), r.args.end());
    cells.push_back(cell);
  }
  return cells;
}

// (step, text) of a run's log.csv column as the log writes it; none for a run refused
// before its first write
std::vector<std::pair<int64_t, std::string>> curve_text(const std::string& dir, const std::string& column) {
  const std::string log = dir + "/log.csv";
  if (!std::filesystem::exists(log)) return {};
  return read_log(log).column_text(column);
}

}  // namespace

std::vector<ComparedRun> run_comparison(const std::string& program, const std::vector<std::string>& common,
                                        const std::vector<RunSpec>& runs, const std::string& out, int jobs,
                                        int threads, const std::string& curve_column) {
  const std::vector<GridCell> cells = comparison_cells(program, common, runs, out);
  const std::vector<nlohmann::ordered_json> configs = check_grid(cells);  // every run's flags, before any starts
  GridOptions options;
  options.jobs = jobs;
  options.threads = threads;
  std::printf("training %zu runs, %d at a time, %d thread(s) each\n", runs.size(), effective_jobs(jobs), threads);
  std::fflush(stdout);
  const std::vector<CellOutcome> outcomes = run_grid(cells, options);
  std::vector<ComparedRun> compared;
  for (size_t i = 0; i < cells.size(); ++i) {
    const std::string spec = spec_text(runs[i]);
    ComparedRun run;
    run.label = cells[i].label;
    run.flags = spec.substr(spec.find('=') + 1);
    run.config = nlohmann::json::parse(configs[i].dump());
    run.exit_code = outcomes[i].exit_code;
    if (!outcomes[i].result.is_null())
      run.result = result_record_of(outcomes[i].result, cells[i].out_dir + "/result.json");
    run.curve = curve_text(cells[i].out_dir, curve_column);
    compared.push_back(run);
  }
  return compared;
}

void print_comparison_plan(const std::string& study, const std::string& program, const std::vector<std::string>& common,
                           const std::vector<RunSpec>& runs, const std::string& out, int jobs, double step_ms,
                           const std::string& detail) {
  print_grid_plan(study, comparison_cells(program, common, runs, out), jobs, step_ms, detail + " in " + out);
}

void write_curves(const std::string& path, const std::vector<ComparedRun>& runs) {
  std::map<int64_t, std::map<std::string, std::string>> curves;
  std::vector<std::string> labels;
  for (const ComparedRun& r : runs) {
    labels.push_back(r.label);
    for (const auto& [step, v] : r.curve) curves[step][labels.back()] = v;
  }
  std::string text = "step";
  for (const auto& l : labels) text += "," + l;
  text += "\n";
  for (const auto& [step, row] : curves) {
    text += std::to_string(step);
    for (const auto& l : labels) text += "," + (row.count(l) ? row.at(l) : std::string());
    text += "\n";
  }
  write_text_file(path, text);
}

ComparisonHeader comparison_header(const nlohmann::ordered_json& recipe, int jobs, int threads, double load,
                                   double seconds) {
  return {today(), effective_jobs(jobs), threads, effective_jobs(0), load, seconds,
          nlohmann::json::parse(recipe.dump())};
}

nlohmann::json comparison_view(const ComparisonHeader& header) {
  nlohmann::json view = nlohmann::json::object();
  for (const auto& [key, value] : header.recipe.items()) view[key] = value;
  view["date"] = header.date;
  view["jobs"] = header.jobs;
  view["threads"] = header.threads;
  view["cores"] = header.cores;
  view["load"] = fmt(header.load, "%.1f");
  view["minutes"] = fmt(header.seconds / 60.0, "%.1f");
  return view;
}

void write_doc_copy(const std::string& doc, const std::string& report, const nlohmann::json& results) {
  if (doc.empty()) return;
  write_text_file(doc, report);
  const fs::path path(doc);
  write_text_file((path.parent_path() / (path.stem().string() + ".json")).string(), results_text(results));
  std::printf("wrote %s\n", doc.c_str());
}

void add_comparison_flags(FlagParser& p, ComparisonFlags& f) {
  add_study_run_flags(p, f.jobs, f.reuse);
}

ComparisonResults train_comparison(const FlagParser& p, const ComparisonFlags& f, const std::string& program,
                                   const std::vector<std::string>& common, const std::vector<RunSpec>& runs,
                                   const std::string& out, int threads, const std::string& curve_column,
                                   bool all_at_once) {
  const auto start = StudyClock::now();
  const double load = load_average();
  const int jobs = f.jobs > 0 ? f.jobs : all_at_once ? (int)runs.size() : 0;
  const auto recipe = p.values();
  ComparisonResults results;
  results.runs = run_comparison(program, common, runs, out, jobs, threads, curve_column);
  results.header = comparison_header(recipe, jobs, threads, load, seconds_since(start));
  for (ComparedRun& run : results.runs) run.train_curve = curve_text(out + "/" + run.label, kTrainLoss);
  return results;
}

}  // namespace nl
