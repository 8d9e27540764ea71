#include "studies/compare/seeded_arms.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "studies/compare/comparison.h"
#include "studies/report/study.h"
#include "studies/report/verdicts.h"
#include "tensor/error.h"
#include "train/data/text_data.h"
#include "train/io/files.h"
#include "train/loop/log_row.h"  // the log's column names

namespace nl {

using json = nlohmann::json;

std::string seeded_label(const std::string& prefix, const std::string& arm, int64_t seed) {
  return prefix + arm + "-s" + std::to_string(seed);
}

const ComparedRun* find_seeded_run(const ComparisonResults& results, const std::string& label) {
  for (const ComparedRun& run : results.runs)
    if (run.label == label) return &run;
  return nullptr;
}

namespace {

// A run's validation loss at `step` from its curve (NaN when it has none there).
double val_at(const ComparedRun& run, int64_t step) {
  for (const auto& [s, v] : run.curve)
    if (s == step) return std::strtod(v.c_str(), nullptr);
  return NAN;
}

bool run_finished(const ComparedRun* run) { return run && run->finished(); }

}  // namespace

ArmSeeds arm_seeds(const SeededResults& results, const std::string& prefix, const std::string& arm,
                   const std::string& reference, int64_t step) {
  ArmSeeds out;
  for (const int64_t seed : results.seeds) {
    const ComparedRun* run = find_seeded_run(results, seeded_label(prefix, arm, seed));
    const ComparedRun* ref =
        reference.empty() ? nullptr : find_seeded_run(results, seeded_label(prefix, reference, seed));
    auto loss = [&](const ComparedRun* r) {
      return !run_finished(r) ? NAN : step > 0 ? val_at(*r, step) : r->figure(kValLoss);
    };
    const double v = loss(run), rv = loss(ref);
    if (run_finished(run) && std::isnan(v)) continue;  // no validation at that step: no evidence either way
    const std::string status = status_against_ln(!run_finished(run), v, ref ? rv : NAN, results.unigram_loss);
    if (status.rfind("stuck", 0) == 0 || status.rfind("DIVERGED", 0) == 0) {
      ++out.did_not_train;
      continue;
    }
    out.val.push_back(v);
    out.trained_seeds.push_back(seed);
    if (ref && !std::isnan(rv)) out.gap.push_back(percent_above(v, rv));
  }
  return out;
}

std::string seeds_text(const std::vector<double>& v, const char* format) {
  return v.empty() ? "-" : range_text(v, format);
}

void add_seeded_study_flags(FlagParser& p, SeededStudyFlags& f, const std::string& what) {
  add_comparison_flags(p, f.comparison);
  add_seeds_flag(p, f.seeds, what);
  add_dry_run_flag(p, f.dry_run);
  add_step_ms_flag(p, f.step_ms);
  p.text("--doc", f.doc, "also write the report to this file, and results.json beside it as its name with .json",
         FlagRole::Control);
}

void check_seeded_study_flags(const SeededStudyFlags& f) {
  NL_CHECK(!f.seeds.empty(), "--seeds: give at least one seed");
  NL_CHECK(!f.dry_run || !f.comparison.reuse, "--dry-run prices runs to train; --reuse trains none: give one of them");
  if (!f.doc.empty()) check_doc_folder(f.doc);
}

void print_seeded_plan(const std::string& study, const std::vector<std::string>& common,
                       const std::vector<RunSpec>& runs, const std::string& out, const SeededStudyFlags& f) {
  print_comparison_plan(study, "train_gpt", common, runs, out, f.comparison.jobs, f.step_ms,
                        " (" + std::to_string(f.seeds.size()) + " seeds)");
}

void put_seeded_study_fields(SeededResults& results, const std::string& program, const std::vector<std::string>& args,
                             const std::vector<int64_t>& seeds, const std::string& data_dir, int64_t train_bytes) {
  results.command = study_command("build/release/" + program, args);
  results.seeds = seeds;
  results.unigram_loss = unigram_loss(load_fortunes(data_dir, train_bytes).train);
}

void drop_train_curves(ComparisonResults& results) {
  for (ComparedRun& run : results.runs) run.train_curve.clear();
}

int finish_seeded_study(const std::string& out, const std::string& doc, const std::string& report,
                        const ComparisonResults& results, const json& written) {
  write_text_file(out + "/report.md", report);
  write_doc_copy(doc, report, written);
  std::printf("%s", report.c_str());
  for (const ComparedRun& run : results.runs)
    if (run.exit_code != 0 && run.exit_code != 1) return 1;  // a run that failed is not a result
  return 0;
}

}  // namespace nl
