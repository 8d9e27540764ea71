// Small helpers shared by the programs that run a study of many training runs and
// write a report (compare_norms, depth_study, regime_study).
#pragma once
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "train/loop/median.h"  // median

#include <nlohmann/json.hpp>

#include "train/flags/flag_parser.h"  // split_list

namespace nl {

using StudyClock = std::chrono::steady_clock;
double seconds_since(StudyClock::time_point t);

// The 1-minute load average (/proc/loadavg; NaN where unreadable), to say how busy the
// shared machine was while a run took its time.
double load_average();


// printf-style formatting of one number for a report.
std::string fmt(double v, const char* format = "%.4g");

// "mean (smallest-largest)" of the finite values of a sample over seeds, printf-style
// `format` for each; the mean alone for one value, "-" for none.
std::string range_text(const std::vector<double>& v, const char* format);

// Throws unless the report `doc` can be written: its folder exists and is writable
// (checked before hours of training go into it).
void check_doc_folder(const std::string& doc);

// Today's date as YYYY-MM-DD, for "generated on".
std::string today();

// The main of a study program (apps/depth_study.cpp, apps/regime_study.cpp): threads
// that spin only briefly, MPI when the build has it (under mpirun the ranks share the
// grid), the stop signals, and `study_main` on the arguments inside run_program's frame
// (one error line, exit 2).
int run_study_program(const char* name, int argc, char** argv,
                      int (*study_main)(const std::vector<std::string>& args));

// The flags of the runs a study trains (add_gpt_run_flags, add_vit_run_flags: the
// recipe every run shares), bound to `base`: one thread per run (the runs go side by
// side), --out defaulting to `out_dir`, and none of the flags in `set_by_study` (the
// study sets them per run) nor --resume, --stop-after, --quiet (a study's runs are whole
// runs, and it prints their progress itself).
template <class Config>
void add_study_recipe_flags(FlagParser& p, Config& base, void (*add)(FlagParser&, Config&), const std::string& out_dir,
                            std::vector<std::string> set_by_study) {
  set_by_study.insert(set_by_study.end(), {"--resume", "--stop-after", "--quiet"});
  p.omit(set_by_study);
  base.threads = 1;
  base.out_dir = out_dir;
  add(p, base);
}

// The keys of a study's own flags (its grid's axes, --jobs, --cells-from, ...), as values()
// names them: the keys of `study` that `runs` (a parser holding only the run flags the study
// passes on to its programs) lacks, and `set_per_run` (keys the study sets on each run itself, such as a
// width axis's "dim"). A study passes every other recipe value on, so a flag added to a
// study is never handed to train_gpt by mistake.
std::vector<std::string> study_own_keys(const FlagParser& study, const FlagParser& runs,
                                        const std::vector<std::string>& set_per_run);
// study_own_keys for a study whose runs are train_gpt's (regime_study, depth_study).
std::vector<std::string> gpt_study_own_keys(const FlagParser& study, const std::vector<std::string>& set_per_run);

// The flags given to a study itself (not its defaults), but those of the keys in `skip`,
// as command-line flags: every run takes them before its own, so a run's recipe keeps
// every setting the command line does not name.
std::vector<std::string> given_run_flags(const FlagParser& p, const std::vector<std::string>& skip);

// The train_gpt flags added after the first results files were committed (every norm
// kind's options, which grow with the registry, --norm-bias and --schedule) at their
// defaults, as values() records them: what a file that does not record one ran with
// (first_recipe_difference's `defaults`). Any other key a file lacks still differs.
nlohmann::ordered_json later_flag_defaults();

// The flags of the study family, each declared here once for every study program
// (compare_norms, compare_vit, depth_study, regime_study):
// --jobs N (runs at a time) and --reuse (render from OUT/results.json alone).
void add_study_run_flags(FlagParser& p, int& jobs, bool& reuse);
// --dry-run: print the runs and the estimated time, and stop (every study that trains
// more than one run).
void add_dry_run_flag(FlagParser& p, bool& dry_run);
// --step-ms: --dry-run's price of one training step of `what`, one thread, one run per
// core; `measured`: the page that says how the default was measured.
void add_step_ms_flag(FlagParser& p, double& step_ms, const std::string& what = "the demo GPT",
                      const std::string& measured = "docs/demo.md");
// --seeds N,M,...: every `what` (a cell, a depth and variant, ...) is trained once per seed.
void add_seeds_flag(FlagParser& p, std::vector<int64_t>& seeds, const std::string& what);
// --doc FILE (the report; its plots go next to it) and --plot-script FILE (gnuplot
// script for `plots`; empty: none).
void add_report_flags(FlagParser& p, std::string& doc, std::string& plot_script, const std::string& plots);

// OUT/results.json for --reuse (throws, naming the file, when it is missing or not JSON;
// the study's record, read by read_record, names a field it lacks).
nlohmann::json read_study_results(const std::string& out);
// A results file named by `flag` (--reuse, --cells-from): missing or not JSON is an error
// naming the flag and the file (missing_hint is appended to the first). Its fields are
// its study's record's to check (read_record, train/io/json_fields.h).
nlohmann::json read_results_file(const std::string& path, const std::string& flag,
                                 const std::string& missing_hint = "");

// The command line a study's report quotes: `program` and its arguments but --reuse.
std::string study_command(const std::string& program, const std::vector<std::string>& args);

// The header every study's results.json has: date, command, out, jobs (0: one per
// core), threads per run, cores, the load averages seen, the recipe (the flags' values).
// Its visit_fields (study.cpp, train/io/json_fields.h) is the one place its keys are
// spelled, for its to_json and its from_json; a study's own results record reads it from
// the same object.
struct StudyHeader {
  std::string date, command, out;
  int64_t jobs = 0, threads = 1, cores = 1;
  std::vector<double> loads;
  nlohmann::json recipe = nlohmann::json::object();  // by flag key, as FlagParser::values() names them
};
StudyHeader study_header(const std::string& command, const std::string& out, int jobs, int threads,
                         const std::vector<double>& loads, const nlohmann::ordered_json& recipe);
void to_json(nlohmann::json& j, const StudyHeader& h);
void from_json(const nlohmann::json& j, StudyHeader& h);
void put_study_header(nlohmann::json& results, const std::string& command, const std::string& out, int jobs,
                      int threads, const std::vector<double>& loads, const nlohmann::ordered_json& recipe);

}  // namespace nl
