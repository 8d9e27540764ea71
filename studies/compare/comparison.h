// What the comparison studies (compare_norms, compare_vit) share: one recipe trained
// once per variant, each variant an ordinary run of a training program in its own
// folder, run side by side by the grid; then the runs' figures, their validation
// curves in one CSV, and a results.json the report is rendered from.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/grid/grid.h"
#include "train/flags/flag_parser.h"

namespace nl {

struct Variant {
  std::string label;              // a folder name too: OUT/<label>
  std::vector<std::string> args;  // the flags that make it this variant ("--norm", "dyt")
};

struct ComparedRun {
  std::string label;
  int exit_code = -1;
  nlohmann::json result;  // its result.json (null when it did not finish)
  std::vector<std::pair<int64_t, std::string>> curve;  // (step, value) of the curve column
};

// Trains `program` with the recipe's flags (the keys in `skip` left out) and each
// variant's, in OUT/<label>, `jobs` at a time with `threads` threads each.
std::vector<ComparedRun> run_comparison(const std::string& program, const nlohmann::ordered_json& recipe,
                                        const std::vector<std::string>& skip, const std::vector<Variant>& variants,
                                        const std::string& out, int jobs, int threads, int curve_column);

// The curves side by side: step, then one column per run (empty where a run has no value).
void write_curves(const std::string& path, const nlohmann::json& runs);

// A number of a result.json (NaN when absent or null).
double result_number(const nlohmann::json& result, const std::string& key);

// results.json's common header: date, jobs, threads, cores, load, seconds, recipe.
nlohmann::json comparison_header(const nlohmann::ordered_json& recipe, int jobs, int threads, double load,
                                 double seconds);

// The runs as results.json keeps them: label, exit_code, result, curve.
nlohmann::json runs_json(const std::vector<ComparedRun>& runs);

// OUT/results.json for --reuse (throws when there is none).
nlohmann::json read_results(const std::string& out);

// jobs, or the number of cores when jobs is 0
int effective_jobs(int jobs);

// The flags a comparison adds to its program's: --norms, --jobs, --reuse.
struct ComparisonFlags {
  std::vector<std::string> norms = {"ln", "rms", "cbwc", "dyt", "bhyt"};
  int jobs = 0;  // 0: the study's default (one per core, or every run at once)
  bool reuse = false;
};
void add_comparison_flags(FlagParser& p, ComparisonFlags& f);

// A comparison of the norms of f.norms: with f.reuse the saved OUT/results.json,
// otherwise `program` trained once per norm with the recipe p recorded (jobs 0: one
// per core, or all at once) and the new results.json.
nlohmann::json compare_norm_runs(const FlagParser& p, const ComparisonFlags& f, const std::string& program,
                                 const std::string& out, int threads, int curve_column, bool all_at_once);

}  // namespace nl
