// What the comparison studies (compare_norms, compare_vit) share: runs of one training
// program side by side, each an ordinary run in its own folder named by its label, run
// by the grid; then the runs' figures, their validation curves in one CSV, and a
// results.json the report is rendered from.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/compare/comparison_records.h"
#include "studies/grid/grid.h"
#include "studies/grid/run_spec.h"
#include "train/flags/flag_parser.h"
#include "train/io/files.h"  // write_text_file

namespace nl {

// Trains `program` once per run with the flags `common`, then the run's own (which
// override them), in OUT/<label>, `jobs` at a time with `threads` threads each; each run
// with its config, result and the curve column (no training curve).
std::vector<ComparedRun> run_comparison(const std::string& program, const std::vector<std::string>& common,
                                        const std::vector<RunSpec>& runs, const std::string& out, int jobs,
                                        int threads, const std::string& curve_column);

// --dry-run of a comparison (print_grid_plan, studies/grid/grid.h): `program` run once per
// run spec, in OUT/<label>.
void print_comparison_plan(const std::string& study, const std::string& program, const std::vector<std::string>& common,
                           const std::vector<RunSpec>& runs, const std::string& out, int jobs, double step_ms,
                           const std::string& detail = "");

// The curves side by side: step, then one column per run (empty where a run has no value).
void write_curves(const std::string& path, const std::vector<ComparedRun>& runs);

// results.json's common header: date, jobs, threads, cores, load, seconds, recipe.
ComparisonHeader comparison_header(const nlohmann::ordered_json& recipe, int jobs, int threads, double load,
                                   double seconds);

// What every comparison report shows of results.json: the recipe's values, date, jobs,
// threads, cores, the load (one decimal) and the minutes it took; the report adds its rows.
nlohmann::json comparison_view(const ComparisonHeader& header);

// The flags a comparison adds to its program's: --jobs, --reuse.
struct ComparisonFlags {
  int jobs = 0;  // 0: the study's default (one per core, or every run at once)
  bool reuse = false;
};
void add_comparison_flags(FlagParser& p, ComparisonFlags& f);

// A comparison of `runs`: `program` trained once per run as run_comparison does (jobs 0:
// one per core, or all at once), the header with p's values as the recipe, and the runs
// with their training-loss curves. The study adds its own fields and writes the record
// (write_comparison_results).
ComparisonResults train_comparison(const FlagParser& p, const ComparisonFlags& f, const std::string& program,
                                   const std::vector<std::string>& common, const std::vector<RunSpec>& runs,
                                   const std::string& out, int threads, const std::string& curve_column,
                                   bool all_at_once);

// --reuse: the study's record read from OUT/results.json (a bad file is one error naming
// --reuse, the file and the field).
template <class T>
T reuse_comparison_results(const std::string& out) {
  return read_record<T>(read_study_results(out), "--reuse", out + "/results.json");
}

// Writes OUT/results.json from the study's record (its to_json) and returns the record
// as its from_json reads that file back: the report of a new study is rendered from what
// --reuse would read.
template <class T>
T write_comparison_results(const std::string& out, const T& results) {
  const nlohmann::json written = results;
  write_text_file(out + "/results.json", results_text(written));
  return comparison_results_of<T>(written, "", out + "/results.json");
}

// --doc FILE: the report also in FILE, and the results beside it as FILE's name with .json
// (docs/results/demo_tuned.md and .json); nothing for an empty `doc`.
void write_doc_copy(const std::string& doc, const std::string& report, const nlohmann::json& results);

}  // namespace nl
