#include "studies/depth/depth_flags.h"

#include <algorithm>

#include "studies/depth/depth_plan.h"
#include "studies/instruments/act_stats_observer.h"
#include "studies/report/study.h"
#include "train/flags/gpt_flags.h"

namespace nl {

std::vector<std::string> depth_set_per_cell() {
  std::vector<std::string> set;
  const std::vector<std::string> axes = depth_cell_flags(1, 1);
  for (size_t i = 0; i < axes.size(); i += 2) set.push_back(axes[i]);
  // a flag every default arm sets is the arms' to choose, never the recipe's
  const std::vector<RunSpec> arms = parse_run_specs(default_depth_arms());
  for (const std::string& a : arms.front().args) {
    if (a.rfind("--", 0) != 0 || std::find(set.begin(), set.end(), a) != set.end()) continue;
    if (std::all_of(arms.begin(), arms.end(), [&](const RunSpec& s) {
          return std::find(s.args.begin(), s.args.end(), a) != s.args.end();
        }))
      set.push_back(a);
  }
  return set;
}

bool parse_depth_flags(const std::vector<std::string>& args, DepthFlags& f) {
  const std::vector<std::string> per_cell = depth_set_per_cell();
  std::string named;
  for (const std::string& flag : per_cell) named += (named.empty() ? "" : ", ") + flag;
  FlagParser p("depth_study",
               "Train deep-narrow GPTs with each block/norm variant at each depth and seed, and write the BHyT depth "
               "report. Every train_gpt flag but those the grid sets (" + named + ") sets the recipe of every run.");
  f.base = GPTRunConfig();
  f.base.model.dim = 128, f.base.model.heads = 4, f.base.model.context = 64;
  f.base.batch = 16, f.base.steps = 600, f.base.warmup = 30, f.base.eval_every = 100, f.base.eval_batches = 10;
  add_study_recipe_flags(p, f.base, add_gpt_run_flags, "runs/depth", per_cell);
  ActStatsSettings stats{50, 16};
  add_act_stats_flags(p, stats);
  f.depths = {8, 16}, f.seeds = {1337, 1338, 1339};
  std::vector<std::string> arm_texts = default_depth_arms();
  f.jobs = 0, f.speed_reps = 5, f.step_ms = 87;
  f.speed_only = f.reuse = f.dry_run = false;
  f.doc = "docs/results/depth.md", f.plot_script = "scripts/plot_depth.sh";
  p.group("Study");
  p.integer_list("--depths", f.depths, 1, 256, "numbers of layers");
  add_seeds_flag(p, f.seeds, "depth and variant");
  p.list("--arms", arm_texts, "the runs per depth and seed, LABEL=FLAGS (flags separated by spaces)");
  p.alias("--arms", "--variants");
  add_study_run_flags(p, f.jobs, f.reuse);
  p.integer("--speed-steps", f.speed_reps, 0, 10000,
            "timed steps per norm of `small` in the speed section (tiny: 4x); 0: no section", FlagRole::Setting);
  p.toggle("--speed", f.speed_only, "only time bhyt, bhyt-exact and rms on tiny and small, print the table, and stop",
           FlagRole::Control);
  add_report_flags(p, f.doc, f.plot_script, "the per-layer plots");
  add_dry_run_flag(p, f.dry_run);
  add_step_ms_flag(p, f.step_ms, "the demo GPT (4 layers; a cell of L layers costs L / 4 of it)");
  p.check([&] { f.arms = parse_run_specs(arm_texts); });
  if (!p.parse(args)) return false;
  f.recipe = p.values();
  // the study's own flags (its axes, --jobs, ...) and --threads, which the grid gives each
  // run itself, stay out of each run's command line
  f.run_flags = flags_from_values(f.recipe, gpt_study_own_keys(p, {"threads"}));
  f.command = study_command("build/release/depth_study", args);
  return true;
}

}  // namespace nl
