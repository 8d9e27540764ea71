#include "studies/report/study.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "studies/grid/grid.h"  // effective_jobs
#include "train/io/json_fields.h"
#include "nn/norms/registry.h"
#include "studies/report/verdicts.h"
#include "train/flags/gpt_flags.h"  // add_gpt_run_flags
#include "tensor/error.h"
#include "tensor/threads.h"
#include "train/flags/program.h"
#include "train/io/files.h"
#include "train/safety/distributed.h"
#include "train/safety/stop_signals.h"

namespace nl {

double seconds_since(StudyClock::time_point t) {
  return std::chrono::duration<double>(StudyClock::now() - t).count();
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double v = NAN;
  in >> v;
  return v;
}


std::string fmt(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string range_text(const std::vector<double>& v, const char* format) {
  std::vector<double> f;
  for (double x : v)
    if (std::isfinite(x)) f.push_back(x);
  if (f.empty()) return "-";
  const Spread s = spread_of(f);
  if (f.size() == 1) return fmt(s.mean, format);
  return fmt(s.mean, format) + " (" + fmt(s.min, format) + "-" + fmt(s.max, format) + ")";
}

void check_doc_folder(const std::string& doc) {
  const std::filesystem::path p(doc);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  NL_CHECK(std::filesystem::is_directory(dir) && access(dir.c_str(), W_OK) == 0, "--doc ", doc,
           ": the folder is missing or not writable");
}

std::string today() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
  return date;
}

int run_study_program(const char* name, int argc, char** argv,
                      int (*study_main)(const std::vector<std::string>& args)) {
  configure_runtime(argv);
  dist::init(&argc, &argv);
  const int code = run_program(name, [&] {
    install_stop_signals(name);
    return study_main(std::vector<std::string>(argv + 1, argv + argc));
  });
  dist::finalize();
  return code;
}

void add_study_run_flags(FlagParser& p, int& jobs, bool& reuse) {
  p.group("Study");
  p.integer("--jobs", jobs, 0, 1024,
            "runs at a time (0: the program's default, one per core unless its --help says otherwise)",
            FlagRole::Setting);
  p.toggle("--reuse", reuse, "render the report from OUT/results.json alone, training nothing", FlagRole::Control);
}

std::vector<std::string> given_run_flags(const FlagParser& p, const std::vector<std::string>& skip) {
  const nlohmann::ordered_json values = p.values();
  nlohmann::ordered_json given = nlohmann::ordered_json::object();
  for (const auto& [key, value] : values.items())
    if (key != "program" && p.given(flag_of_key(key))) given[key] = value;
  return flags_from_values(given, skip);
}

void add_dry_run_flag(FlagParser& p, bool& dry_run) {
  p.group("Study");
  p.toggle("--dry-run", dry_run, "print the runs and the estimated time, and stop", FlagRole::Control);
}

void add_step_ms_flag(FlagParser& p, double& step_ms, const std::string& what, const std::string& measured) {
  p.group("Study");
  p.real("--step-ms", step_ms, 0.001, 1e7,
         "--dry-run's ms per training step of " + what + ", one thread, one run per core (" + measured +
             " says how the default was measured)",
         FlagRole::Control);
}

void add_seeds_flag(FlagParser& p, std::vector<int64_t>& seeds, const std::string& what) {
  p.group("Study");
  p.integer_list("--seeds", seeds, 0, INT64_MAX, "seeds: every " + what + " is trained once per seed");
}

void add_report_flags(FlagParser& p, std::string& doc, std::string& plot_script, const std::string& plots) {
  p.group("Study");
  p.text("--doc", doc, "the report to write (its plots go next to it)", FlagRole::Control);
  p.text("--plot-script", plot_script, "gnuplot script for " + plots + " (empty: none)", FlagRole::Control);
}

nlohmann::json read_results_file(const std::string& path, const std::string& flag, const std::string& missing_hint) {
  NL_CHECK(std::filesystem::exists(path), flag, ": no file ", path, missing_hint);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(read_text_file(path, flag));
  } catch (const nlohmann::json::exception& e) {
    fail(flag, ": ", path, " is not valid JSON (", e.what(), ")");
  }
  return doc;
}

nlohmann::json read_study_results(const std::string& out) {
  return read_results_file(out + "/results.json", "--reuse", " (run the study first, without --reuse)");
}

std::string study_command(const std::string& program, const std::vector<std::string>& args) {
  std::string command = program;
  for (const auto& a : args) {
    if (a == "--reuse") continue;
    // an argument holding a space, a quote or another shell character (--tune's ';') is quoted, so that the line
    // a report prints can be pasted back (--arms 'ln=--norm ln,...'); so is an empty one (--plot-script '')
    if (!a.empty() && a.find_first_of(" '\"$`\\;&|<>()*?#~!") == std::string::npos) {
      command += " " + a;
    } else {
      std::string quoted = "'";
      for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      command += " " + quoted + "'";
    }
  }
  return command;
}

void put_study_header(nlohmann::json& results, const std::string& command, const std::string& out, int jobs,
                      int threads, const std::vector<double>& loads, const nlohmann::ordered_json& recipe) {
  results.update(nlohmann::json(study_header(command, out, jobs, threads, loads, recipe)));
}

StudyHeader study_header(const std::string& command, const std::string& out, int jobs, int threads,
                         const std::vector<double>& loads, const nlohmann::ordered_json& recipe) {
  return {today(), command, out, effective_jobs(jobs), threads, effective_jobs(0), loads,
          nlohmann::json::parse(recipe.dump())};
}

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, StudyHeader> h) {
  io("date", h.date)("command", h.command)("out", h.out);
  io("jobs", h.jobs)("threads", h.threads)("cores", h.cores)("loads", h.loads).object("recipe", h.recipe);
}
NL_JSON_RECORD(StudyHeader)

std::vector<std::string> study_own_keys(const FlagParser& study, const FlagParser& runs,
                                        const std::vector<std::string>& set_per_run) {
  // every value the study records (values(): what a run's command line is built from), not
  // only the recipe's: --jobs and --cells-from are recorded too
  const nlohmann::ordered_json passed = runs.values();
  std::vector<std::string> own = set_per_run;
  const nlohmann::ordered_json values = study.values();  // items() of a temporary would dangle
  for (const auto& [k, v] : values.items())
    if (!passed.contains(k) && std::find(own.begin(), own.end(), k) == own.end()) own.push_back(k);
  return own;
}

nlohmann::ordered_json later_flag_defaults() {
  GPTRunConfig defaults;
  FlagParser train_gpt("train_gpt", "");
  add_gpt_run_flags(train_gpt, defaults);
  std::vector<std::string> later = {"norm_bias", "schedule"};
  for (const NormOption& o : norm_options()) later.push_back(flag_key("--" + o.name));
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  const nlohmann::ordered_json values = train_gpt.values();  // items() of a temporary would dangle
  for (const auto& [key, value] : values.items())
    if (std::find(later.begin(), later.end(), key) != later.end()) out[key] = value;
  return out;
}

std::vector<std::string> gpt_study_own_keys(const FlagParser& study, const std::vector<std::string>& set_per_run) {
  GPTRunConfig unused;
  FlagParser train_gpt("train_gpt", "");
  add_gpt_run_flags(train_gpt, unused);
  return study_own_keys(study, train_gpt, set_per_run);
}

}  // namespace nl
