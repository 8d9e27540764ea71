#include "studies/compare/bhyt_gap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "studies/compare/comparison.h"
#include "studies/compare/seeded_arms.h"
#include "studies/compare/tuned_comparison.h"
#include "studies/report/study.h"
#include "studies/report/template.h"
#include "studies/report/verdicts.h"
#include "tensor/error.h"
#include "train/data/text_data.h"
#include "train/flags/gpt_flags.h"
#include "train/io/files.h"
#include "train/io/run_dir.h"
#include "train/loop/log_row.h"  // the log's column names

namespace nl {

namespace {

using json = nlohmann::json;

const char kBhytGapTemplate[] =
#include "studies/compare/bhyt_gap.md.in.h"
    ;

constexpr const char* kRecipe = "--recipe bhyt-released";
// An arm's train_gpt flags: the recipe, then its own.
std::string recipe_flags(const SeededArm& a) { return std::string(kRecipe) + (a.flags.empty() ? "" : " " + a.flags); }
// A gap within this many percent is a tie (status_against_ln's "behind" starts above it).
constexpr double kTiePercent = 1.0;

std::string long_label(const std::string& arm, int64_t seed) { return seeded_label("long-", arm, seed); }
std::string control_label(const std::string& arm, int64_t seed) { return seeded_label("", arm, seed); }

}  // namespace

const std::vector<SeededArm>& bhyt_gap_controls() {
  static const std::vector<SeededArm> arms = {
      {"ln-released", "--norm ln", "", "the recipe with LayerNorm: the reference"},
      {"bhyt-released", "", "ln-released", "the recipe as released"},
      {"rms-released", "--norm rms", "ln-released", "the recipe with RMSNorm (gain starting at 1)"},
      {"rms-gain", "--norm rms --rms-gain0-attn 0.2 --rms-gain0-mlp 0.1", "ln-released",
       "RMSNorm with BHyT's small-argument gains lambda / kappa (0.2, 0.1) to start, learnt"},
      {"rms-gain-fixed", "--norm rms --rms-gain0-attn 0.2 --rms-gain0-mlp 0.1 --rms-gain fixed", "ln-released",
       "the same gains held fixed: BHyT with its tanh and its gamma's learning removed"},
      {"bhyt-gamma-inverse", "--bhyt-gamma0 kappa-over-lambda", "ln-released",
       "BHyT with gamma starting at kappa / lambda (5, 10): an RMSNorm of gain 1 at the start"},
      {"ln-gelu", "--norm ln --mlp gelu", "ln-released", "LayerNorm on the Llama block with a GELU MLP"},
      {"bhyt-gelu", "--mlp gelu", "ln-gelu",
       "BHyT with a GELU MLP (SwiGLU's product is quadratic in a small input), against ln-gelu"},
      {"bhyt-lambda5", "--bhyt-lambda-attn 5 --bhyt-lambda-mlp 5", "ln-released", "BHyT with lambda 5 at both sites"},
      {"bhyt-lambda10", "--bhyt-lambda-attn 10 --bhyt-lambda-mlp 10", "ln-released",
       "BHyT with lambda 10 at both sites"},
  };
  return arms;
}

const std::vector<SeededArm>& bhyt_gap_long_arms() {
  static const std::vector<SeededArm> arms = {
      {"ln-released", "--norm ln", "", "LayerNorm"},
      {"bhyt-released", "", "ln-released", "BHyT"},
      {"rms-released", "--norm rms", "ln-released", "RMSNorm"},
  };
  return arms;
}

std::vector<std::string> bhyt_gap_run_specs(const std::vector<int64_t>& seeds, int64_t long_steps, int64_t long_eval,
                                            const std::map<std::string, std::string>& tuned,
                                            const std::string& tuned_source) {
  std::vector<std::string> specs;
  for (int64_t seed : seeds)
    for (const SeededArm& a : bhyt_gap_controls())
      specs.push_back(control_label(a.label, seed) + "=" + recipe_flags(a) + " --seed " + std::to_string(seed));
  for (const SeededArm& a : bhyt_gap_long_arms()) {
    const auto t = tuned.find(a.label);
    NL_CHECK(t != tuned.end(), "--tuned-results: no tuned run '", a.label, "' (", recipe_flags(a), ") in ",
             tuned_source, "; tune it first: compare_norms --tune ... --arms '", a.label, "=", recipe_flags(a),
             "'");
    for (int64_t seed : seeds)
      specs.push_back(long_label(a.label, seed) + "=" + recipe_flags(a) + " " + t->second + " --steps " +
                      std::to_string(long_steps) + " --eval-every " + std::to_string(long_eval) + " --seed " +
                      std::to_string(seed));
  }
  return specs;
}

double gap_share(double arm_gap, double bhyt_gap) {
  if (!(bhyt_gap > 0) || std::isnan(arm_gap)) return NAN;
  return 100.0 * arm_gap / bhyt_gap;
}

std::string catch_up_verdict(const std::string& arm, const std::string& reference, int64_t early, int64_t end,
                             const std::vector<double>& early_gaps, const std::vector<double>& end_gaps,
                             int did_not_train) {
  const size_t n = end_gaps.size() + (size_t)did_not_train;
  const std::string who = "`" + arm + "`";
  if (end_gaps.empty()) return who + " did not train in " + std::to_string(n) + " of " + std::to_string(n) + " seeds";
  const std::string untrained =
      did_not_train ? " (it did not train in " + std::to_string(did_not_train) + " of " + std::to_string(n) +
                          " seeds, which say nothing either way)"
                    : "";
  const Spread e = spread_of(early_gaps), f = spread_of(end_gaps);
  auto gap = [&](const Spread& s, int64_t step) {
    return fmt(s.mean, "%+.1f") + " % (" + fmt(s.min, "%+.1f") + " to " + fmt(s.max, "%+.1f") + ") at step " +
           std::to_string(step);
  };
  const std::string numbers = ": " + gap(e, early) + ", " + gap(f, end) + " against `" + reference + "`" + untrained;
  bool narrowed = early_gaps.size() == end_gaps.size();
  for (size_t i = 0; narrowed && i < end_gaps.size(); ++i) narrowed = end_gaps[i] < early_gaps[i];
  const bool all_behind_end = f.min > kTiePercent, all_level_end = f.max <= kTiePercent;
  const bool slower = e.min > kTiePercent;
  if (slower && all_level_end) return who + " learns more slowly and catches up" + numbers;
  if (all_behind_end && narrowed) return who + " learns more slowly and ends worse" + numbers;
  if (all_behind_end) return who + " ends worse and does not close the gap" + numbers;
  if (all_level_end && e.max <= kTiePercent) return who + " is not behind" + numbers;
  if (all_level_end)
    return who + " ends level; early it was behind by more than 1 % in " +
           std::to_string(
               std::count_if(early_gaps.begin(), early_gaps.end(), [](double g) { return g > kTiePercent; })) +
           " of " + std::to_string(early_gaps.size()) + " seeds" + numbers;
  return "the seeds disagree on whether " + who + " ends behind (by more than 1 % in " +
         std::to_string(std::count_if(end_gaps.begin(), end_gaps.end(), [](double g) { return g > kTiePercent; })) +
         " of " + std::to_string(end_gaps.size()) + ")" + numbers;
}

std::string render_bhyt_gap_report(const BhytGapResults& results) {
  json view = comparison_view(results.header);
  view["command"] = results.command;
  view["unigram"] = fmt(results.unigram_loss, "%.4f");
  view["n_seeds"] = results.seeds.size();
  std::string seeds;
  for (const int64_t s : results.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  view["seed_list"] = seeds;
  const int64_t long_steps = results.long_steps;
  view["long_steps"] = long_steps;
  // the controls
  const double bhyt_gap = spread_of(arm_seeds(results, "", "bhyt-released", "ln-released", 0).gap).mean;
  view["controls"] = json::array();
  for (const SeededArm& a : bhyt_gap_controls()) {
    const ArmSeeds s = arm_seeds(results, "", a.label, a.reference, 0);
    const double share = gap_share(spread_of(s.gap).mean, bhyt_gap);
    view["controls"].push_back({{"label", a.label},
                                {"flags", recipe_flags(a)},
                                {"tests", a.tests},
                                {"val", seeds_text(s.val, "%.4f")},
                                {"reference", a.reference.empty() ? "-" : a.reference},
                                {"gap", a.reference.empty() ? "-" : seeds_text(s.gap, "%+.1f")},
                                {"share", a.reference.empty() || std::isnan(share) ? "-" : fmt(share, "%.0f %%")},
                                {"did_not_train", std::to_string(s.did_not_train) + " of " +
                                                      std::to_string(results.seeds.size())}});
  }
  view["bhyt_gap"] = fmt(bhyt_gap, "%+.1f");
  // the long runs: the loss and the gap at a few steps, and the verdicts
  const int64_t early = results.steps;
  std::vector<int64_t> steps;
  for (int64_t s : {early, 2 * early, long_steps / 2, long_steps})
    if (s > 0 && s <= long_steps && std::find(steps.begin(), steps.end(), s) == steps.end()) steps.push_back(s);
  std::sort(steps.begin(), steps.end());
  view["at_steps"] = steps;
  std::string tuned_files;
  for (const std::string& file : results.tuned_results)
    tuned_files += (tuned_files.empty() ? "" : ", ") + std::filesystem::path(file).filename().string();
  view["tuned_files"] = tuned_files;
  view["long"] = json::array();
  view["verdicts"] = json::array();
  for (const SeededArm& a : bhyt_gap_long_arms()) {
    json row = {{"label", a.label}, {"flags", results.long_flags.at(a.label)}, {"at", json::array()}};
    for (int64_t s : steps) {
      const ArmSeeds at = arm_seeds(results, "long-", a.label, a.reference, s);
      row["at"].push_back({{"val", seeds_text(at.val, "%.4f")},
                           {"gap", a.reference.empty() ? "" : " (" + seeds_text(at.gap, "%+.1f") + " %)"}});
    }
    view["long"].push_back(row);
    if (a.reference.empty()) continue;
    const ArmSeeds first = arm_seeds(results, "long-", a.label, a.reference, early);
    const ArmSeeds last = arm_seeds(results, "long-", a.label, a.reference, long_steps);
    view["verdicts"].push_back(
        catch_up_verdict(a.label, a.reference, early, long_steps, first.gap, last.gap, last.did_not_train));
  }
  return render_template(kBhytGapTemplate, view, "studies/compare/bhyt_gap.md.in");
}

namespace {

// arm label -> its best flags, from each tuned comparison's results (the first that has
// it). A comparison tuned on another model, data or run length than the controls' (`here`,
// the study's values) is refused: its best setting is for other runs.
std::map<std::string, std::string> read_tuned_flags(const std::vector<std::string>& files,
                                                    const nlohmann::ordered_json& here) {
  std::map<std::string, std::string> flags;
  for (const std::string& file : files) {
    const TunedResults tuned = read_comparison_results<TunedResults>(file, "--tuned-results");
    const std::string difference = first_recipe_difference(
        nlohmann::ordered_json::parse(tuned.header.recipe.dump()), here,
        {"layers", "dim", "heads", "seq", "batch", "steps", "data", "train_bytes"}, nlohmann::ordered_json::object(),
        "there", "here");
    NL_CHECK(difference.empty(), "--tuned-results ", file, ": a tuned comparison of another recipe (", difference,
             "); tune the runs with the controls' flags");
    for (const TunedRow& row : tuned_rows(tuned))
      for (const SeededArm& a : bhyt_gap_long_arms())
        if (row.label == a.label && row.best >= 0 && !flags.count(a.label) &&
            row.flags == recipe_flags(a))
          flags[a.label] = row.best_flags;
  }
  return flags;
}

}  // namespace

int bhyt_gap_main(const std::vector<std::string>& args) {
  FlagParser p("bhyt_gap",
               "Why bhyt-released trails ln-released: controls that each change one thing, and long runs of "
               "ln-released, bhyt-released and rms-released at their tuned settings (docs/norms/bhyt.md). The "
               "train_gpt flags given here go to every run, before the run's own.");
  GPTRunConfig base;
  add_study_recipe_flags(p, base, add_gpt_run_flags, "runs/bhyt_gap", {"--norm", "--recipe", "--seed"});
  SeededStudyFlags f;
  add_seeded_study_flags(p, f, "control and long run");
  int64_t long_steps = 5000, long_eval = 250;
  p.integer("--long-steps", long_steps, 1, 100000000, "the long runs' steps (the controls': --steps)");
  p.integer("--long-eval-every", long_eval, 1, 100000000, "the long runs' validation interval");
  std::vector<std::string> tuned_files = {"docs/results/demo_tuned.json", "docs/results/bhyt_gap_tuned.json"};
  p.list("--tuned-results", tuned_files,
         "tuned comparisons' results (compare_norms --tune --doc FILE writes them beside FILE): each long run trains "
         "at its arm's best setting, from the first file that tuned it",
         FlagRole::Control);
  if (!p.parse(args)) return 0;
  check_seeded_study_flags(f);
  const std::string out = base.out_dir;
  BhytGapResults results;
  std::vector<RunSpec> runs;
  if (!f.comparison.reuse) {
    std::string sources;
    for (const std::string& file : tuned_files) sources += (sources.empty() ? "" : ", ") + file;
    std::map<std::string, std::string> tuned = read_tuned_flags(tuned_files, p.values());
    runs = parse_run_specs(bhyt_gap_run_specs(f.seeds, long_steps, long_eval, tuned, sources));
    put_seeded_study_fields(results, "bhyt_gap", args, f.seeds, base.data_dir, base.train_bytes);
    results.long_steps = long_steps;
    results.tuned_results = tuned_files;
    for (const SeededArm& a : bhyt_gap_long_arms()) results.long_flags[a.label] = tuned[a.label];
  }
  const std::vector<std::string> common = given_run_flags(p, gpt_study_own_keys(p, {"threads"}));
  if (f.dry_run) {
    print_seeded_plan("bhyt_gap", common, runs, out, f);
    return 0;
  }
  results = train_or_reuse_seeded(p, f, common, runs, out, base.threads, results);
  std::vector<ComparedRun> long_runs;
  for (const ComparedRun& run : results.runs)
    if (run.label.rfind("long-", 0) == 0) long_runs.push_back(run);
  write_curves(out + "/long_val_loss.csv", long_runs);
  return finish_seeded_study(out, f.doc, render_bhyt_gap_report(results), results, results);
}

}  // namespace nl
