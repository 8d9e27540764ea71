// What the comparison studies (compare_norms, compare_vit) share: runs of one training
// program side by side, each an ordinary run in its own folder named by its label, run
// by the grid; then the runs' figures, their validation curves in one CSV, and a
// results.json the report is rendered from.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/grid/grid.h"
#include "studies/grid/run_spec.h"
#include "studies/report/results_schema.h"
#include "train/flags/flag_parser.h"

namespace nl {

struct ComparedRun {
  std::string label;
  std::string flags;        // the run's own flags, as its spec gives them
  nlohmann::json config;    // the config.json the program records for it (checked before any run)
  int exit_code = -1;
  nlohmann::json result;  // its result.json (null when it did not finish)
  std::vector<std::pair<int64_t, std::string>> curve;  // (step, value) of the curve column
};

// Trains `program` once per run with the flags `common`, then the run's own (which
// override them), in OUT/<label>, `jobs` at a time with `threads` threads each.
std::vector<ComparedRun> run_comparison(const std::string& program, const std::vector<std::string>& common,
                                        const std::vector<RunSpec>& runs, const std::string& out, int jobs,
                                        int threads, const std::string& curve_column);

// --dry-run of a comparison (print_grid_plan, studies/grid/grid.h): `program` run once per
// run spec, in OUT/<label>.
void print_comparison_plan(const std::string& study, const std::string& program, const std::vector<std::string>& common,
                           const std::vector<RunSpec>& runs, const std::string& out, int jobs, double step_ms,
                           const std::string& detail = "");

// The curves side by side: step, then one column per run (empty where a run has no value).
void write_curves(const std::string& path, const nlohmann::json& runs);

// A number of a result.json (NaN when absent or null).
double result_number(const nlohmann::json& result, const std::string& key);

// results.json's common header: date, jobs, threads, cores, load, seconds, recipe.
nlohmann::json comparison_header(const nlohmann::ordered_json& recipe, int jobs, int threads, double load,
                                 double seconds);

// What every comparison report shows of results.json: the recipe's values, date, jobs,
// threads, cores, the load (one decimal) and the minutes it took; the report adds its rows.
nlohmann::json comparison_view(const nlohmann::json& results);

// The runs as results.json keeps them: label, flags, config, exit_code, result, curve.
nlohmann::json runs_json(const std::vector<ComparedRun>& runs);

// The flags a comparison adds to its program's: --jobs, --reuse.
struct ComparisonFlags {
  int jobs = 0;  // 0: the study's default (one per core, or every run at once)
  bool reuse = false;
};
void add_comparison_flags(FlagParser& p, ComparisonFlags& f);

// A comparison of `runs`: with f.reuse the saved OUT/results.json, otherwise `program`
// trained once per run as run_comparison does (jobs 0: one per core, or all at once)
// and the new results.json: the header with p's values as the recipe, the fields of
// `extra`, and the runs with their training-loss curves.
nlohmann::json compare_runs(const FlagParser& p, const ComparisonFlags& f, const std::string& program,
                            const std::vector<std::string>& common, const std::vector<RunSpec>& runs,
                            const std::string& out, int threads, const std::string& curve_column, bool all_at_once,
                            const ResultSchema& own_fields, const nlohmann::json& extra = nlohmann::json::object());

// --doc FILE: the report also in FILE, and the results beside it as FILE's name with .json
// (docs/results/demo_tuned.md and .json); nothing for an empty `doc`.
void write_doc_copy(const std::string& doc, const std::string& report, const nlohmann::json& results);

// The fields of a comparison's results.json that --reuse reads back: the header and the
// runs compare_runs writes, and then `own_fields`, those the program's report reads.
ResultSchema comparison_schema(const ResultSchema& own_fields);

}  // namespace nl
