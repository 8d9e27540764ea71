#include "studies/compare/dyt_trains.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "studies/compare/comparison.h"
#include "studies/instruments/act_stats.h"
#include "studies/report/study.h"
#include "studies/report/template.h"
#include "studies/report/verdicts.h"
#include "tensor/error.h"
#include "train/data/text_data.h"
#include "train/flags/gpt_flags.h"
#include "train/io/files.h"
#include "train/loop/log_row.h"  // the log's column names

namespace nl {

namespace {

using json = nlohmann::json;

const char kDytTrainsTemplate[] =
#include "studies/compare/dyt_trains.md.in.h"
    ;

std::string names(std::vector<const TrainsRow*> rows, bool with_loss) {
  // by loss, those without one last, ties in the arms' order
  std::stable_sort(rows.begin(), rows.end(), [](const TrainsRow* a, const TrainsRow* b) {
    if (std::isnan(a->val_mean)) return false;
    return std::isnan(b->val_mean) || a->val_mean < b->val_mean;
  });
  std::string text;
  for (const TrainsRow* r : rows)
    text += (text.empty() ? "" : ", ") + ("`" + r->label + "`") +
            (with_loss && !std::isnan(r->val_mean) ? " (" + fmt(r->val_mean, "%.4f") + ")" : "");
  return text;
}

}  // namespace

const std::vector<SeededArm>& dyt_trains_arms() {
  static const std::vector<SeededArm> arms = {
      {"ln", "--norm ln", "", "LayerNorm on the plain recipe: the reference"},
      {"dyt", "--norm dyt", "ln", "plain DyT (alpha0 0.5, a DyT final norm), as make demo"},
      {"dyt-a2", "--norm dyt --dyt-alpha0 2", "ln", "alpha0 2 at every site (Verma's)"},
      {"dyt-emb", "--norm dyt --emb-scale sqrt", "ln", "the embedding scaled by a learnt scalar from sqrt(d)"},
      {"dyt-emb-a2", "--norm dyt --emb-scale sqrt --dyt-alpha0 2", "ln", "the embedding scale and alpha0 2"},
      {"dyt-lnf", "--norm dyt --final-norm ln", "ln", "a LayerNorm final norm, DyT in the blocks"},
      {"dyt-lnf-a2", "--norm dyt --final-norm ln --dyt-alpha0 2", "ln", "a LayerNorm final norm and alpha0 2"},
      {"dyt-lnf-emb", "--norm dyt --final-norm ln --emb-scale sqrt", "ln",
       "a LayerNorm final norm and the embedding scale"},
      {"dyt-lnf-emb-a2", "--norm dyt --final-norm ln --emb-scale sqrt --dyt-alpha0 2", "ln",
       "a LayerNorm final norm, the embedding scale and alpha0 2"},
      {"dyt-lr3e-3-a0.1", "--norm dyt --lr 3e-3 --dyt-alpha0 0.1", "ln",
       "the tuned comparison's best plain setting (lr 3e-3, alpha0 0.1)"},
      {"dyt-lnf-warmup500", "--norm dyt --final-norm ln --warmup 500", "ln",
       "a LayerNorm final norm and a warmup over the whole run"},
      {"ln-dyt-llm", "--recipe dyt-llm --norm ln", "", "LayerNorm on DyT's LLaMA recipe: its reference"},
      {"dyt-llm-lr3e-3-a0.1",
       "--recipe dyt-llm --lr 3e-3 --dyt-alpha0 0.1 --dyt-alpha0-attn 0.1 --dyt-alpha0-mlp 0.1 --dyt-alpha0-final 0.1",
       "ln-dyt-llm",
       "DyT's LLaMA recipe at the tuned comparison's best setting (lr 3e-3, alpha0 0.1 at every site); its ln "
       "trains at the recipe's lr 3e-4, so its gap is not at equal settings"},
  };
  return arms;
}

std::string dyt_trains_verdict(const std::vector<TrainsRow>& rows) {
  std::vector<const TrainsRow*> all, some, none;
  size_t seeds = 0;
  for (const TrainsRow& r : rows) {
    if (r.reference || r.seeds == 0) continue;
    seeds = std::max(seeds, r.seeds);
    if (r.did_not_train == 0) all.push_back(&r);
    else if ((size_t)r.did_not_train < r.seeds) some.push_back(&r);
    else none.push_back(&r);
  }
  const std::string n = std::to_string(seeds);
  std::string text = all.empty() ? "No setting of the grid leaves the unigram plateau in all " + n + " seeds"
                                 : "In all " + n + " seeds DyT leaves the unigram plateau with " + names(all, true);
  if (!some.empty()) text += "; in some seeds only with " + names(some, true);
  if (!none.empty()) text += "; in none with " + names(none, false);
  return text;
}

double final_norm_saturation(const std::string& act_stats_csv) {
  if (!std::filesystem::exists(act_stats_csv)) return NAN;
  double sat = NAN;
  int64_t last = -1;
  for (const auto& [step, row] : read_act_stats(act_stats_csv))
    if (row.site == "ln_f" && step >= last) {
      last = step;
      sat = row.has_saturation ? row.saturation[1] : NAN;
    }
  return sat;
}

std::string render_dyt_trains_report(const DytTrainsResults& results) {
  json view = comparison_view(results.header);
  view["command"] = results.command;
  view["unigram"] = fmt(results.unigram_loss, "%.4f");
  std::string seeds;
  for (const int64_t s : results.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  view["seed_list"] = seeds;
  view["arms"] = json::array();
  std::vector<TrainsRow> rows;
  for (const SeededArm& a : dyt_trains_arms()) {
    const ArmSeeds s = arm_seeds(results, "", a.label, a.reference);
    // what explains a stuck run, over every seed that finished, trained or not
    std::vector<double> rms, sat;
    for (const int64_t seed : results.seeds) {
      const ComparedRun* run = find_seeded_run(results, seeded_label("", a.label, seed));
      if (!run) continue;
      const double r = run->figure("rms_" + std::to_string(results.layers));
      if (!std::isnan(r)) rms.push_back(r);
      if (run->final_sat2 && !std::isnan(*run->final_sat2)) sat.push_back(*run->final_sat2);
    }
    const size_t n = results.seeds.size();
    rows.push_back({a.label, a.reference.empty(), n, s.did_not_train, spread_of(s.val).mean});
    view["arms"].push_back({{"label", a.label},
                            {"flags", a.flags},
                            {"tests", a.tests},
                            {"trains", a.reference.empty() ? "reference"
                                                           : std::to_string(n - (size_t)s.did_not_train) + " of " +
                                                                 std::to_string(n)},
                            {"val", seeds_text(s.val, "%.4f")},
                            {"reference", a.reference.empty() ? "-" : a.reference},
                            {"gap", a.reference.empty() ? "-" : seeds_text(s.gap, "%+.1f")},
                            {"rms", seeds_text(rms, "%.2f")},
                            {"sat", seeds_text(sat, "%.3f")}});
  }
  view["verdict"] = dyt_trains_verdict(rows);
  return render_template(kDytTrainsTemplate, view, "studies/compare/dyt_trains.md.in");
}

int dyt_trains_main(const std::vector<std::string>& args) {
  FlagParser p("dyt_trains",
               "Which DyT settings leave the unigram plateau on the demo GPT, seed after seed: each setting trained "
               "once per seed beside LayerNorm (docs/results/dyt_start.md). The train_gpt flags given here go to "
               "every run, before the run's own.");
  GPTRunConfig base;
  add_study_recipe_flags(p, base, add_gpt_run_flags, "runs/dyt_trains", {"--norm", "--recipe", "--seed"});
  SeededStudyFlags f;
  add_seeded_study_flags(p, f, "setting");
  if (!p.parse(args)) return 0;
  check_seeded_study_flags(f);
  const std::string out = base.out_dir;
  DytTrainsResults results;
  std::vector<RunSpec> runs;
  if (!f.comparison.reuse) {
    std::vector<std::string> specs;
    for (int64_t seed : f.seeds)
      for (const SeededArm& a : dyt_trains_arms())
        specs.push_back(seeded_label("", a.label, seed) + "=" + a.flags + " --seed " + std::to_string(seed));
    runs = parse_run_specs(specs);
    put_seeded_study_fields(results, "dyt_trains", args, f.seeds, base.data_dir, base.train_bytes);
  }
  const std::vector<std::string> common = given_run_flags(p, gpt_study_own_keys(p, {"threads"}));
  if (f.dry_run) {
    print_seeded_plan("dyt_trains", common, runs, out, f);
    return 0;
  }
  // the final norm's saturation, kept in results.json: --reuse needs no run folder
  auto keep_saturation = [](const std::string& dir, ComparedRun& run) {
    run.final_sat2 = final_norm_saturation(dir + "/" + run.label + "/act_stats.csv");
  };
  results = train_or_reuse_seeded(p, f, common, runs, out, base.threads, results, keep_saturation);
  return finish_seeded_study(out, f.doc, render_dyt_trains_report(results), results, results);
}

}  // namespace nl
