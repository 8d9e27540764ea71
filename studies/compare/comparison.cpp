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
    compared.push_back({cells[i].label, spec.substr(spec.find('=') + 1), nlohmann::json::parse(configs[i].dump()),
                        outcomes[i].exit_code, outcomes[i].result,
                        curve_text(cells[i].out_dir, curve_column)});
  }
  return compared;
}

void print_comparison_plan(const std::string& study, const std::string& program, const std::vector<std::string>& common,
                           const std::vector<RunSpec>& runs, const std::string& out, int jobs, double step_ms,
                           const std::string& detail) {
  print_grid_plan(study, comparison_cells(program, common, runs, out), jobs, step_ms, detail + " in " + out);
}

void write_curves(const std::string& path, const nlohmann::json& runs) {
  std::map<int64_t, std::map<std::string, std::string>> curves;
  std::vector<std::string> labels;
  for (const auto& r : runs) {
    labels.push_back(r["label"]);
    for (const auto& [step, v] : r["curve"].get<std::vector<std::pair<int64_t, std::string>>>())
      curves[step][labels.back()] = v;
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

double result_number(const nlohmann::json& result, const std::string& key) {
  if (!result.is_object() || !result.contains(key) || !result[key].is_number()) return NAN;
  return result[key].get<double>();
}

nlohmann::json comparison_header(const nlohmann::ordered_json& recipe, int jobs, int threads, double load,
                                 double seconds) {
  return {{"date", today()},
          {"jobs", effective_jobs(jobs)},
          {"threads", threads},
          {"cores", effective_jobs(0)},
          {"load", load},
          {"seconds", seconds},
          {"recipe", nlohmann::json::parse(recipe.dump())}};
}

nlohmann::json comparison_view(const nlohmann::json& results) {
  nlohmann::json view = nlohmann::json::object();
  for (const auto& [key, value] : results["recipe"].items()) view[key] = value;
  for (const char* key : {"date", "jobs", "threads", "cores"}) view[key] = results[key];
  view["load"] = fmt(results["load"].is_number() ? results["load"].get<double>() : NAN, "%.1f");  // NaN is null
  view["minutes"] = fmt(results["seconds"].get<double>() / 60.0, "%.1f");
  return view;
}

void write_doc_copy(const std::string& doc, const std::string& report, const nlohmann::json& results) {
  if (doc.empty()) return;
  write_text_file(doc, report);
  const fs::path path(doc);
  write_text_file((path.parent_path() / (path.stem().string() + ".json")).string(), results.dump(1) + "\n");
  std::printf("wrote %s\n", doc.c_str());
}

ResultSchema comparison_schema(const ResultSchema& own_fields) {
  ResultSchema schema = {{"recipe", kObject},       {"date", kString},          {"jobs", kInteger},
                         {"threads", kInteger},     {"cores", kInteger},        {"load", kNumber | kNull},
                         {"seconds", kNumber},      {"runs", kArray},           {"runs[]", kObject},
                         {"runs[].label", kString}, {"runs[].flags", kString},  {"runs[].config", kObject},
                         {"runs[].exit_code", kInteger}, {"runs[].result", kObject | kNull}};
  for (const char* curve : {"curve", "train_curve"}) {
    const std::string c = std::string("runs[].") + curve;
    schema.insert(schema.end(), {{c, kArray}, {c + "[]", kArray}, {c + "[][0]", kInteger}, {c + "[][1]", kString}});
  }
  schema.insert(schema.end(), own_fields.begin(), own_fields.end());
  return schema;
}

nlohmann::json runs_json(const std::vector<ComparedRun>& runs) {
  nlohmann::json out = nlohmann::json::array();
  for (const ComparedRun& r : runs)
    out.push_back({{"label", r.label},
                   {"flags", r.flags},
                   {"config", r.config},
                   {"exit_code", r.exit_code},
                   {"result", r.result},
                   {"curve", r.curve}});
  return out;
}

void add_comparison_flags(FlagParser& p, ComparisonFlags& f) {
  add_study_run_flags(p, f.jobs, f.reuse);
}

nlohmann::json compare_runs(const FlagParser& p, const ComparisonFlags& f, const std::string& program,
                            const std::vector<std::string>& common, const std::vector<RunSpec>& runs,
                            const std::string& out, int threads, const std::string& curve_column, bool all_at_once,
                            const ResultSchema& own_fields, const nlohmann::json& extra) {
  if (f.reuse) return read_study_results(out, comparison_schema(own_fields));
  const auto start = StudyClock::now();
  const double load = load_average();
  const int jobs = f.jobs > 0 ? f.jobs : all_at_once ? (int)runs.size() : 0;
  const auto recipe = p.values();
  const std::vector<ComparedRun> compared = run_comparison(program, common, runs, out, jobs, threads, curve_column);
  nlohmann::json results = comparison_header(recipe, jobs, threads, load, seconds_since(start));
  for (const auto& [key, value] : extra.items()) results[key] = value;
  results["runs"] = runs_json(compared);
  for (auto& run : results["runs"])
    run["train_curve"] = curve_text(out + "/" + run["label"].get<std::string>(), kTrainLoss);
  write_text_file(out + "/results.json", results.dump(1) + "\n");
  return results;
}

}  // namespace nl
