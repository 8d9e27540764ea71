#include "studies/depth/depth_run.h"

#include <cmath>
#include <cstdio>

#include "nn/norms/registry.h"
#include "studies/report/study.h"
#include "tensor/error.h"
#include "tensor/threads.h"
#include "train/safety/distributed.h"

namespace nl {

const std::vector<std::string>& depth_speed_norms() {
  static const std::vector<std::string> norms = {"rms", "bhyt-exact", "bhyt"};
  return norms;
}

void print_depth_speed(const DepthFlags& f) {
  NL_CHECK(f.speed_reps > 0, "--speed needs --speed-steps > 0");
  NL_CHECK(dist::world_size() == 1, "--speed times one process's steps: run it without mpirun (here ",
           dist::world_size(), " ranks)");
  set_num_threads(f.base.threads);
  std::printf("%s\n", speed_json(measure_norm_speed(depth_speed_norms(), f.speed_reps, f.base.seed)).dump(1).c_str());
}

DepthCellSummary summarize_depth_cell(const std::string& arm, const CellOutcome& outcome,
                                      const nlohmann::ordered_json& config, const std::string& out_dir) {
  const nlohmann::json& res = outcome.result;
  DepthCellSummary s;
  DepthRun& r = s.run;
  r.depth = config["layers"];
  r.seed = config["seed"];
  r.variant = arm;
  r.exit_code = outcome.exit_code;
  s.kept = outcome.kept;
  s.norm = config["norm"], s.block = config["block"];
  const NormKind& kind = norm_kind(s.norm);
  r.kappa = kind.approximates_site2 || kind.reports_site2 ? 1.0 / std::sqrt(1.0 - config.value("bhyt_p", 0.99)) : NAN;
  r.train_loss = res.is_object() ? res.value("final_train_loss", NAN) : NAN;
  r.val_loss = res.is_object() ? res.value("val_loss", NAN) : NAN;
  r.tok_s = res.is_object() ? res.value("tok_per_s", NAN) : NAN;
  r.diverged = r.exit_code != 0 || !res.is_object() || res.value("diverged", true);
  if (r.exit_code == 0) read_depth_run(out_dir, r);
  return s;
}

std::optional<DepthResults> run_depth(const DepthFlags& f, const std::vector<GridCell>& cells) {
  const auto start = StudyClock::now();
  DepthResults results;
  results.loads = {load_average()};
  const auto summarize = [&](size_t i, const CellOutcome& outcome, const nlohmann::ordered_json& config) {
    return summarize_depth_cell(f.arms[i % f.arms.size()].label, outcome, config, cells[i].out_dir).to_json();
  };
  const std::vector<CellOutcome> outcomes = run_study_grid("depth study", cells, f.jobs, f.base.threads, summarize);
  if (!dist::is_lead()) return std::nullopt;  // the lead rank has every cell's summary and writes the report
  results.loads.push_back(load_average());
  for (size_t i = 0; i < outcomes.size(); ++i) {
    results.runs.push_back(read_record<DepthCellSummary>(outcomes[i].summary, "", "cell " + cells[i].label));
    results.cells_kept += outcomes[i].kept;
  }
  results.cells_run = (int64_t)outcomes.size() - results.cells_kept;
  results.seconds = seconds_since(start);
  // the speed section times one process's steps: under mpirun the lead would train alone
  // while the other ranks have left (train_step's all-reduce would wait for them)
  const bool speed = f.speed_reps > 0 && dist::world_size() == 1;
  if (f.speed_reps > 0 && !speed)
    std::printf("speed section: not run under %d ranks (it times one process's steps; depth_study --speed alone "
                "does)\n", dist::world_size());
  results.speed_reps = speed ? f.speed_reps : 0;
  if (speed) {
    std::printf("speed section ...\n");
    std::fflush(stdout);
    const auto t0 = StudyClock::now();
    set_num_threads(f.base.threads);
    results.speed = measure_norm_speed(depth_speed_norms(), f.speed_reps, f.base.seed);
    results.speed_seconds = seconds_since(t0);
    results.loads.push_back(load_average());
  }
  results.date = today();
  results.command = f.command;
  results.out = f.base.out_dir;
  results.jobs = effective_jobs(f.jobs);
  results.threads = f.base.threads;
  results.cores = effective_jobs(0);
  results.recipe = nlohmann::json::parse(f.recipe.dump());
  results.depths = f.depths;
  results.seeds = f.seeds;
  fields::read(run_specs_json(f.arms), results.arms);  // the arms as results.json lists them
  results.plot_script = f.plot_script;
  return results;
}

}  // namespace nl
