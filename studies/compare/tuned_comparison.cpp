#include "studies/compare/tuned_comparison.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "nn/norms/registry.h"
#include "studies/compare/ln_baseline.h"
#include "studies/compare/tuning.h"
#include "studies/grid/grid.h"
#include "studies/report/study.h"
#include "studies/report/template.h"
#include "studies/report/verdicts.h"
#include "tensor/error.h"
#include "tensor/threads.h"
#include "train/data/text_data.h"
#include "train/gpt/gpt_eval.h"
#include "train/io/files.h"
#include "train/loop/log_row.h"  // the log's column names

namespace nl {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char kDemoTunedTemplate[] =
#include "studies/compare/demo_tuned.md.in.h"
    ;

const char kSharedFolder[] = "shared";

// A run of the plan: its cells, by index into the grid's cells.
struct PlannedRun {
  RunSpec spec;
  std::string norm, block, recipe;
  std::vector<TuneSetting> settings;
  int shared = -1;             // the cell at the run's own flags
  std::vector<int> cell_of;    // each setting's cell (the shared one when it is the same run)
};

struct TunedPlan {
  std::vector<GridCell> cells;
  std::vector<nlohmann::ordered_json> configs;
  std::vector<PlannedRun> runs;
  int64_t train_bytes = 0;  // what every cell trains on: the training text less the tuning split
};

nlohmann::ordered_json without_out(nlohmann::ordered_json config) {
  config.erase("out");
  return config;
}

// The cells: each run at its own flags, then at each setting of its grid (a DyT run's
// from the DyT axes), every one on the same training bytes; a setting whose checked
// config is the shared cell's is that cell.
TunedPlan plan_tuned(const std::vector<std::string>& common, const std::vector<RunSpec>& runs,
                     const std::vector<TuneAxis>& axes, const std::vector<TuneAxis>& dyt_axes, const std::string& out,
                     int64_t train_bytes) {
  TunedPlan plan;
  plan.train_bytes = train_bytes;
  const std::vector<std::string> tail = {"--train-bytes", std::to_string(train_bytes)};
  auto cell_for = [&](const RunSpec& r, const std::string& folder, const std::vector<std::string>& extra) {
    GridCell cell;
    cell.label = r.label + " " + folder;
    cell.program = "train_gpt";
    cell.args = common;
    cell.args.insert(cell.args.end(), r.args.begin(), r.args.end());
    cell.args.insert(cell.args.end(), extra.begin(), extra.end());
    cell.args.insert(cell.args.end(), tail.begin(), tail.end());
    cell.out_dir = out + "/" + r.label + "/" + folder;
    return cell;
  };
  for (const RunSpec& r : runs) {
    PlannedRun run;
    run.spec = r;
    const GridCell shared = cell_for(r, kSharedFolder, {});
    const nlohmann::ordered_json shared_config = check_grid({shared}).at(0);
    run.norm = shared_config.value("norm", "");
    run.block = shared_config.value("block", "");
    run.recipe = shared_config.value("recipe", "");
    run.shared = (int)plan.cells.size();
    plan.cells.push_back(shared);
    plan.configs.push_back(shared_config);
    run.settings = tune_settings(norm_kind(run.norm).tuned_as_dyt ? dyt_axes : axes);
    std::vector<GridCell> candidates;
    for (const TuneSetting& s : run.settings) candidates.push_back(cell_for(r, s.label, s.args));
    const std::vector<nlohmann::ordered_json> configs = check_grid(candidates);
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (without_out(configs[i]) == without_out(shared_config)) {
        run.cell_of.push_back(run.shared);
        continue;
      }
      run.cell_of.push_back((int)plan.cells.size());
      plan.cells.push_back(candidates[i]);
      plan.configs.push_back(configs[i]);
    }
    plan.runs.push_back(run);
  }
  return plan;
}

// --dry-run: the cells per run, those already finished, and the minutes left.
void print_price(const TunedPlan& plan, const TuneOptions& t, int jobs, size_t settings) {
  double seconds = 0;
  size_t finished = 0;
  for (size_t i = 0; i < plan.cells.size(); ++i) {
    if (fs::exists(plan.cells[i].out_dir + "/result.json")) {
      ++finished;
      continue;
    }
    // and the tuning split's evaluation: about 2 s a cell for 64 KB, measured beside a run
    seconds += (double)planned_steps(plan.configs[i]) * t.step_ms / 1000.0 + 2.0 * (double)t.tune_bytes / 65536.0;
  }
  for (const auto& [flag, axes] : {std::make_pair("--tune", t.axes), std::make_pair("--tune-dyt", t.dyt_axes)}) {
    if (axes.empty()) continue;
    std::string labels;
    for (const TuneSetting& s : tune_settings(parse_tune_axes(axes, flag)))
      labels += (labels.empty() ? "" : ", ") + s.label;
    std::printf("%s settings: %s\n", flag, labels.c_str());
  }
  for (const PlannedRun& r : plan.runs) {
    size_t own = 1;
    for (int c : r.cell_of) own += c != r.shared;
    std::printf("  %-16s %-6s %-14s %zu settings, %zu cells (%s)\n", r.spec.label.c_str(), r.norm.c_str(),
                r.recipe.empty() ? "-" : r.recipe.c_str(), r.settings.size(), own,
                own == r.settings.size() ? "the shared settings are one of them" : "and the shared settings");
  }
  const double minutes = seconds / 60.0 / jobs;
  std::printf("tuned comparison: %zu runs x %zu settings each, %zu cells (%zu finished already, kept), training on "
              "the first %lld bytes; about %.1f minutes at %d at a time (%.0f ms a step, --step-ms, and 2 s a cell "
              "on the tuning split)\n",
              plan.runs.size(), settings, plan.cells.size(), finished, (long long)plan.train_bytes, minutes, jobs,
              t.step_ms);
}

// A cell as results.json keeps it: the run's numbers and its loss on the tuning split
// (NaN, written null, unless it finished).
TunedCell cell_summary(const GridCell& cell, const CellOutcome& oc, const GPTRunConfig& base,
                       const std::string& tuning) {
  TunedCell c;
  c.folder = cell.out_dir;
  c.exit_code = oc.exit_code;
  c.diverged = true;
  if (!oc.result.is_null()) {
    const ResultRecord r = result_record_of(oc.result, cell.out_dir + "/result.json");
    c.diverged = oc.exit_code != 0 || r.diverged;
    c.val_loss = r.figure(kValLoss);
    c.train_loss = r.final_train_loss;
  }
  if (!c.diverged) {
    try {
      c.tuning_loss = evaluate_gpt(base, cell.out_dir, tuning).loss;
    } catch (const Error& e) {
      std::fprintf(stderr, "tuned comparison: %s: the tuning split could not be evaluated: %s\n", cell.label.c_str(),
                   e.what());
    }
  }
  return c;
}

bool cell_finished(const TunedCell& cell) {
  return cell.exit_code == 0 && !cell.diverged && std::isfinite(cell.val_loss);
}

std::string loss_text(double v) { return std::isfinite(v) ? fmt(v, "%.4f") : "-"; }

std::string cell_status(const TunedCell& cell) {
  if (cell.exit_code == 1 || (cell.exit_code == 0 && !cell_finished(cell))) return "DIVERGED (NaN/inf)";
  if (cell.exit_code != 0) return "FAILED (exit " + std::to_string(cell.exit_code) + ")";
  return std::isfinite(cell.tuning_loss) ? "finished" : "no tuning loss";
}

void write_sweep(const std::string& path, const TunedResults& results, const std::vector<TunedRow>& rows) {
  std::string text = "run,setting,flags,tuning_loss,val_loss,train_loss,exit_code,best\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::vector<TunedTrial>& trials = results.runs[i].trials;
    for (size_t k = 0; k < trials.size(); ++k) {
      const TunedCell& c = trials[k].cell;
      text += rows[i].label + "," + trials[k].setting + "," + trials[k].flags + "," + fmt(c.tuning_loss, "%.9g") +
              "," + fmt(c.val_loss, "%.9g") + "," + fmt(c.train_loss, "%.9g") + "," + std::to_string(c.exit_code) +
              "," + ((int)k == rows[i].best ? "1" : "0") + "\n";
    }
  }
  write_text_file(path, text);
}

void print_tuned_table(const std::vector<TunedRow>& rows, size_t settings) {
  const std::string best = "best of " + std::to_string(settings) + " (tuning split)";
  std::printf("\n%-16s %-6s %11s %-26s %11s %-36s %9s  %s\n", "run", "norm", "shared val", "shared status",
              "tuned val", best.c_str(), "vs its ln", "tuned status");
  for (const TunedRow& r : rows)
    std::printf("%-16s %-6s %11s %-26s %11s %-36s %9s  %s\n", r.label.c_str(), r.norm.c_str(),
                loss_text(r.shared_val).c_str(), r.shared_status.c_str(), loss_text(r.best_val).c_str(),
                r.best < 0 ? "-" : r.best_setting.c_str(), relative_text(r.best_vs_ln).c_str(), r.best_status.c_str());
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

}  // namespace

void add_tune_flags(FlagParser& p, TuneOptions& t) {
  p.text("--tune", t.axes,
         "tune each run: train it at every setting of these axes, NAME=V1,V2;NAME=... (NAME a train_gpt flag without "
         "its dashes, or alpha0 for every DyT site's initial alpha), choose its best on a tuning split held out of the "
         "training text, and report it beside the run at the shared settings (empty: no tuning)",
         FlagRole::Control);
  p.text("--tune-dyt", t.dyt_axes,
         "with --tune: the axes of the runs whose norm is dyt, as many settings as --tune's (empty: --tune's)",
         FlagRole::Control);
  p.integer("--tune-bytes", t.tune_bytes, 1024, INT64_MAX,
            "with --tune: the tuning split, the last N bytes of the training text (of --train-bytes'), which no cell "
            "trains on",
            FlagRole::Control);
  add_step_ms_flag(p, t.step_ms);
  add_dry_run_flag(p, t.dry_run);
  p.text("--doc", t.doc, "also write the report to this file, and results.json beside it as its name with .json",
         FlagRole::Control);
  p.check([&] {
    if (t.axes.empty()) {
      NL_CHECK(t.dyt_axes.empty(), "--tune-dyt: only with --tune");
      return;
    }
    const size_t n = tune_setting_count(parse_tune_axes(t.axes, "--tune"));
    if (!t.dyt_axes.empty()) {
      const size_t d = tune_setting_count(parse_tune_axes(t.dyt_axes, "--tune-dyt"));
      NL_CHECK(d == n, "--tune-dyt: ", d, " settings, but --tune has ", n,
               ": every run is tuned over the same number of settings");
    }
  });
}

int run_tuned_comparison(const FlagParser& p, const ComparisonFlags& f, const GPTRunConfig& base,
                         const std::vector<std::string>& common, const std::vector<RunSpec>& runs,
                         const TuneOptions& t, const std::vector<std::string>& args) {
  const std::string out = base.out_dir;
  for (const RunSpec& r : runs)
    for (const std::string& a : r.args)
      NL_CHECK(a.rfind("--train-bytes", 0) != 0, "--arms: ", r.label,
               " sets --train-bytes; with --tune give it to compare_norms (the tuning split is held out of it)");
  TunedResults results;
  if (f.reuse) {
    results = reuse_comparison_results<TunedResults>(out);
  } else {
    const auto start = StudyClock::now();
    const double load = load_average();
    const TextData data = load_fortunes(base.data_dir, base.train_bytes);
    const int64_t n = (int64_t)data.train.size();
    NL_CHECK(n - t.tune_bytes > base.model.context + 1, "--tune-bytes ", t.tune_bytes, ": the training text holds ", n,
             " bytes, too few to leave a run more than --seq ", base.model.context, " of them");
    const std::vector<TuneAxis> axes = parse_tune_axes(t.axes, "--tune");
    const std::vector<TuneAxis> dyt_axes = t.dyt_axes.empty() ? axes : parse_tune_axes(t.dyt_axes, "--tune-dyt");
    const TunedPlan plan = plan_tuned(common, runs, axes, dyt_axes, out, n - t.tune_bytes);
    const int jobs = effective_jobs(f.jobs);
    const size_t settings = tune_setting_count(axes);
    if (t.dry_run) {
      print_price(plan, t, jobs, settings);
      return 0;
    }
    fs::create_directories(out);
    const std::string tuning = out + "/tuning.txt";
    write_text_file(tuning, std::string(data.train.end() - t.tune_bytes, data.train.end()));
    const std::vector<CellOutcome> outcomes = run_study_grid(
        "tuned comparison", plan.cells, jobs, base.threads,
        [&](size_t i, const CellOutcome& oc, const nlohmann::ordered_json&) {
          if (i == 0) std::printf("evaluating each finished cell on the tuning split, %s (%lld bytes)\n",
                                  tuning.c_str(), (long long)t.tune_bytes);
          const ScopedThreads threads(jobs);
          return cell_summary(plan.cells[i], oc, base, tuning);
        },
        ", then each finished one on the tuning split");
    results.header = comparison_header(p.values(), jobs, base.threads, load, seconds_since(start));
    // statuses read against the text the cells trained on
    results.unigram_loss = unigram_loss(std::vector<uint8_t>(data.train.begin(), data.train.end() - t.tune_bytes));
    results.command = study_command("build/release/compare_norms", args);
    results.tuning = {t.axes, t.dyt_axes.empty() ? t.axes : t.dyt_axes, (int64_t)settings, t.tune_bytes,
                      plan.train_bytes};
    for (const PlannedRun& r : plan.runs) {
      const std::string spec = spec_text(r.spec);
      TunedRun run{r.spec.label, spec.substr(spec.find('=') + 1), r.norm, r.block, r.recipe,
                   outcomes[(size_t)r.shared].summary.get<TunedCell>(), {}};
      for (size_t k = 0; k < r.settings.size(); ++k)
        run.trials.push_back({r.settings[k].label, join(r.settings[k].args), r.cell_of[k] == r.shared,
                              outcomes[(size_t)r.cell_of[k]].summary.get<TunedCell>()});
      results.runs.push_back(run);
    }
    results = write_comparison_results(out, results);
  }
  const std::vector<TunedRow> rows = tuned_rows(results);
  write_sweep(out + "/sweep.csv", results, rows);
  const std::string report = render_tuned_report(results);
  write_text_file(out + "/report.md", report);
  write_doc_copy(t.doc, report, results);
  print_tuned_table(rows, (size_t)results.tuning.settings);
  for (const TunedRun& run : results.runs)
    if (run.shared.exit_code != 0 && run.shared.exit_code != 1) return 1;  // a refused or killed run
  return 0;
}

std::vector<TunedRow> tuned_rows(const TunedResults& results) {
  std::vector<TunedRow> rows;
  std::vector<RunKind> kinds;
  for (const TunedRun& run : results.runs) {
    TunedRow row;
    row.label = run.label;
    row.flags = run.flags;
    row.norm = run.norm;
    row.block = run.block;
    row.recipe = run.recipe.empty() ? "-" : run.recipe;
    row.settings = run.trials.size();
    row.shared_val = cell_finished(run.shared) ? run.shared.val_loss : NAN;
    std::vector<TuneTrial> trials;
    for (const TunedTrial& t : run.trials)
      trials.push_back({cell_finished(t.cell), t.cell.tuning_loss, t.cell.val_loss});
    row.best = select_tuned(trials);
    if (row.best >= 0) {
      const TunedTrial& b = run.trials[(size_t)row.best];
      row.best_setting = b.setting;
      row.best_flags = b.flags;
      row.best_val = trials[(size_t)row.best].reported_val_loss;
      row.best_tuning = trials[(size_t)row.best].tuning_loss;
    } else {
      row.best_val = row.best_tuning = NAN;
    }
    kinds.push_back({row.norm, row.block, row.recipe});
    rows.push_back(row);
  }
  const std::vector<int> baselines = ln_baselines(kinds);
  const double unigram = results.unigram_loss;
  for (size_t i = 0; i < rows.size(); ++i) {
    TunedRow& row = rows[i];
    const TunedRow* ln = baselines[i] < 0 ? nullptr : &rows[(size_t)baselines[i]];
    row.ln_label = ln ? ln->label : "";
    row.shared_status =
        status_against_ln(std::isnan(row.shared_val), row.shared_val, ln ? ln->shared_val : NAN, unigram);
    row.best_vs_ln = percent_above(row.best_val, ln ? ln->best_val : NAN);
    row.best_status = row.best < 0 ? "no setting finished"
                                   : status_against_ln(false, row.best_val, ln ? ln->best_val : NAN, unigram);
  }
  return rows;
}

std::string render_tuned_report(const TunedResults& results) {
  json view = comparison_view(results.header);
  view["command"] = results.command;
  view.update(json(results.tuning));
  view["dyt_differs"] = results.tuning.axes != results.tuning.dyt_axes;
  view["unigram"] = fmt(results.unigram_loss, "%.4f");
  view["rows"] = json::array();
  view["sweep"] = json::array();
  const std::vector<TunedRow> rows = tuned_rows(results);
  for (size_t i = 0; i < rows.size(); ++i) {
    const TunedRow& r = rows[i];
    view["rows"].push_back({{"label", r.label},
                            {"flags", r.flags},
                            {"recipe", r.recipe},
                            {"block", r.block},
                            {"norm", r.norm},
                            {"shared_val", loss_text(r.shared_val)},
                            {"shared_status", r.shared_status},
                            {"best", r.best < 0 ? "-" : r.best_setting},
                            {"best_flags", r.best < 0 ? "-" : r.best_flags},
                            {"best_val", loss_text(r.best_val)},
                            {"best_tuning", loss_text(r.best_tuning)},
                            {"vs_ln", relative_text(r.best_vs_ln)},
                            {"ln_label", r.ln_label.empty() ? "-" : r.ln_label},
                            {"best_status", r.best_status}});
    const std::vector<TunedTrial>& trials = results.runs[i].trials;
    for (size_t k = 0; k < trials.size(); ++k) {
      const TunedCell& c = trials[k].cell;
      view["sweep"].push_back({{"label", r.label},
                               {"setting", trials[k].setting},
                               {"flags", trials[k].flags},
                               {"shared", trials[k].is_shared ? " (= shared)" : ""},
                               {"tuning", loss_text(c.tuning_loss)},
                               {"val", loss_text(c.val_loss)},
                               {"status", cell_status(c)},
                               {"chosen", (int)k == r.best ? "**best**" : ""}});
    }
  }
  return render_template(kDemoTunedTemplate, view, "studies/compare/demo_tuned.md.in");
}

}  // namespace nl
