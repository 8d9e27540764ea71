#include "studies/compare/compare_norms.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "nn/norms/registry.h"
#include "studies/compare/comparison.h"
#include "studies/compare/ln_baseline.h"
#include "studies/compare/tuned_comparison.h"
#include "studies/grid/run_spec.h"
#include "studies/report/study.h"
#include "studies/report/template.h"
#include "studies/report/verdicts.h"
#include "train/data/text_data.h"
#include "train/flags/gpt_flags.h"
#include "train/io/files.h"
#include "train/io/run_dir.h"
#include "train/loop/log_row.h"  // the log's column names

namespace nl {

namespace {

using json = nlohmann::json;

const char kDemoTemplate[] =
#include "studies/compare/demo.md.in.h"
    ;

// The largest |train loss(a) - train loss(b)| over the steps both logged.
double largest_train_difference(const DemoResults& results, const std::string& a, const std::string& b) {
  std::map<std::string, std::map<int64_t, double>> losses;
  for (const ComparedRun& run : results.runs)
    for (const auto& [step, v] : run.train_curve) losses[run.label][step] = std::strtod(v.c_str(), nullptr);
  double worst = 0;
  for (const auto& [step, v] : losses[a])
    if (losses[b].count(step)) worst = std::max(worst, std::fabs(v - losses[b][step]));
  return worst;
}

void print_table(const std::vector<DemoRow>& rows) {
  std::printf("\n%-14s %-14s %-6s %9s %10s %-12s %11s %9s %14s  %s\n", "run", "recipe", "block", "val loss",
              "vs ln", "its ln", "train loss", "tok/s", "resid RMS L/1", "status");
  for (const DemoRow& r : rows)
    std::printf("%-14s %-14s %-6s %9.4f %10s %-12s %11.4f %9.0f %14.2f  %s\n", r.label.c_str(), r.recipe.c_str(),
                r.block.c_str(), r.val_loss, relative_text(r.vs_ln).c_str(),
                r.ln_label.empty() ? "-" : r.ln_label.c_str(), r.train_loss, r.tok_s, r.rms_ratio, r.status.c_str());
}

void write_summary(const std::string& path, const std::vector<DemoRow>& rows) {
  std::string text =
      "run,recipe,block,norm,train_loss,val_loss,val_vs_ln_percent,ln_run,tok_per_s,rms_last_over_first,status\n";
  for (const DemoRow& r : rows)
    text += r.label + "," + r.recipe + "," + r.block + "," + r.norm + "," + fmt(r.train_loss, "%.9g") + "," +
            fmt(r.val_loss, "%.9g") + "," + fmt(r.vs_ln, "%.6g") + "," + r.ln_label + "," + fmt(r.tok_s, "%.0f") + "," +
            fmt(r.rms_ratio, "%.9g") + "," + r.status + "\n";
  write_text_file(path, text);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// For each row that is stuck, diverged or behind its ln: what the tuned comparison found for
// the run of the same label and flags (its best setting, and whether that trains it).
json tuned_notes(const std::vector<DemoRow>& rows, const TunedResults* tuned, const std::string& doc) {
  json notes = json::array();
  if (!tuned) return notes;
  const std::vector<TunedRow> tuned_runs = tuned_rows(*tuned);
  const std::string n = std::to_string(tuned->tuning.settings);
  const std::string link = "[" + doc + "](" + doc + ")";
  for (const DemoRow& r : rows) {
    if (r.status == "ok" || starts_with(r.status, "FAILED")) continue;
    const TunedRow* t = nullptr;
    for (const TunedRow& candidate : tuned_runs)
      if (candidate.label == r.label && candidate.flags == r.flags) t = &candidate;
    std::string text;
    if (!t) {
      text = "not among the runs of the tuned comparison (" + link + ")";
    } else if (t->best < 0) {
      text = "none of its " + n + " tuned settings finished (" + link + ")";
    } else {
      const bool was_stuck = starts_with(r.status, "stuck") || starts_with(r.status, "DIVERGED");
      const bool trains = !starts_with(t->best_status, "stuck") && !starts_with(t->best_status, "DIVERGED");
      std::string ln_best;
      for (const TunedRow& l : tuned_runs)
        if (l.label == t->ln_label && l.best >= 0) ln_best = " at its best, " + fmt(l.best_val, "%.4f");
      const std::string setting = "`" + t->best_setting + "` (`" + t->best_flags + "`)";
      text = was_stuck ? (trains ? "tuning trains it: its best of " + n + " settings on the tuning split, " + setting
                                 : "none of the " + n + " settings of the tuned grid trains it: the best on the "
                                   "tuning split, " + setting + ",")
                       : "its best of " + n + " tuned settings on the tuning split, " + setting + ",";
      text += " reaches " + fmt(t->best_val, "%.4f") + " on validation (" + fmt(t->shared_val, "%.4f") +
              " at the shared settings on the same data): " + t->best_status +
              (t->ln_label.empty() || t->ln_label == t->label ? "" : " against " + t->ln_label + ln_best) + " (" +
              link + ")";
    }
    notes.push_back({{"label", r.label}, {"status", r.status}, {"text", text}});
  }
  return notes;
}

}  // namespace

const std::vector<std::string>& default_demo_runs() {
  static const std::vector<std::string> runs = {
      "ln", "rms", "cbwc", "dyt", "bhyt",                    // the plain recipe: GPT-2 block
      "bhyt-released", "dyt-llm", "dyt-verma",               // the papers' recipes
      "ln-llama=--block llama --norm ln", "rms-llama=--block llama --norm rms",  // the Llama block, plain
      // each recipe with LayerNorm in place of its norm: the same model, optimizer and
      // schedule, so that a recipe's row measures its norm and nothing else
      "ln-released=--recipe bhyt-released --norm ln", "ln-dyt-llm=--recipe dyt-llm --norm ln",
      "ln-verma=--recipe dyt-verma --norm ln",
  };
  return runs;
}

std::vector<DemoRow> demo_rows(const DemoResults& results) {
  std::vector<DemoRow> rows;
  for (const ComparedRun& run : results.runs) {
    const DemoConfig c = demo_config(run);
    DemoRow row;
    row.label = run.label;
    row.flags = run.flags;
    row.recipe = c.recipe.empty() ? "-" : c.recipe;
    row.block = c.block;
    row.norm = c.norm;
    row.train_loss = run.result ? run.result->final_train_loss : NAN;
    row.val_loss = run.figure(kValLoss);
    row.tok_s = run.figure("tok_per_s");
    row.rms_ratio = run.figure("rms_" + std::to_string(c.layers)) / run.figure("rms_0");
    row.exit_code = run.exit_code;
    row.diverged = !run.finished();
    rows.push_back(row);
  }
  // each row against the ln run of its block and recipe, else the first ln run on its block
  std::vector<RunKind> kinds;
  for (const DemoRow& row : rows) kinds.push_back({row.norm, row.block, row.recipe});
  const std::vector<int> baselines = ln_baselines(kinds);
  const double unigram = results.unigram_loss;
  for (size_t i = 0; i < rows.size(); ++i) {
    DemoRow& row = rows[i];
    const DemoRow* base = baselines[i] < 0 ? nullptr : &rows[(size_t)baselines[i]];
    row.ln_label = base ? base->label : "";
    const double ln_val = !base || base->diverged ? NAN : base->val_loss;
    row.vs_ln = percent_above(row.val_loss, ln_val);
    row.status = status_against_ln(row.diverged, row.val_loss, ln_val, unigram);
    // exit 1 is a NaN/inf stop; any other failure (2: refused, 128 + N: a signal) is no divergence
    if (row.exit_code != 0 && row.exit_code != 1) row.status = "FAILED (exit " + std::to_string(row.exit_code) + ")";
  }
  return rows;
}

std::string render_demo_report(const DemoResults& results, const TunedResults* tuned, const std::string& tuned_doc) {
  json view = comparison_view(results.header);
  view["unigram"] = fmt(results.unigram_loss, "%.4f");
  view["stuck"] = fmt(kStuckLoss, "%.1f");
  view["rows"] = json::array();
  const std::vector<DemoRow> rows = demo_rows(results);
  for (const DemoRow& r : rows)
    view["rows"].push_back({{"label", r.label},
                            {"flags", r.flags},
                            {"recipe", r.recipe},
                            {"block", r.block},
                            {"norm", r.norm},
                            {"train_loss", fmt(r.train_loss, "%.4f")},
                            {"val_loss", fmt(r.val_loss, "%.4f")},
                            {"vs_ln", relative_text(r.vs_ln)},
                            {"ln_label", r.ln_label.empty() ? "-" : r.ln_label},
                            {"tok_s", fmt(r.tok_s, "%.0f")},
                            {"rms_ratio", fmt(r.rms_ratio, "%.2f")},
                            {"status", r.status}});
  view["tuned_notes"] = tuned_notes(rows, tuned, tuned_doc);
  view["has_tuned_notes"] = !view["tuned_notes"].empty();
  // a norm and the one it folds into (ln and cbwc) compute the same function: the
  // claim is that they train alike, on the same block and recipe
  view["folds"] = json::array();
  for (const DemoRow& a : rows) {
    const std::string into = norm_kind(a.norm).folds_into;
    for (const DemoRow& b : rows) {
      if (into.empty() || b.norm != into || b.block != a.block || b.recipe != a.recipe) continue;
      view["folds"].push_back({{"norm", a.label},
                               {"into", b.label},
                               {"decimals", agreeing_decimals(a.val_loss, b.val_loss)},
                               {"a", fmt(a.val_loss, "%.6f")},
                               {"b", fmt(b.val_loss, "%.6f")},
                               {"max_train_diff", fmt(largest_train_difference(results, a.label, b.label), "%.2g")}});
      break;
    }
  }
  return render_template(kDemoTemplate, view, "studies/compare/demo.md.in");
}

namespace {

// The demo plot's panels: one per LayerNorm baseline, holding that ln run and every run
// read against it (the plain recipe's five norms; each paper recipe beside its own ln), so
// that a reader compares curves that share a recipe, not thirteen at once.
// OUT/val_loss_panels.tsv lists each panel's CSV and title for scripts/plot_val_loss.sh.
void write_panel_curves(const std::string& out, const std::vector<ComparedRun>& runs,
                        const std::vector<DemoRow>& rows) {
  std::vector<std::string> panels;  // each panel's ln label, in the order of the table
  for (const DemoRow& r : rows) {
    const std::string key = r.ln_label.empty() ? r.label : r.ln_label;
    if (std::find(panels.begin(), panels.end(), key) == panels.end()) panels.push_back(key);
  }
  std::string list;
  for (size_t k = 0; k < panels.size(); ++k) {
    std::vector<ComparedRun> members;
    std::string names;
    for (const DemoRow& r : rows)
      if ((r.ln_label.empty() ? r.label : r.ln_label) == panels[k])
        for (const ComparedRun& run : runs)
          if (run.label == r.label) members.push_back(run), names += (names.empty() ? "" : ", ") + r.label;
    const std::string file = "val_loss_panel" + std::to_string(k + 1) + ".csv";
    write_curves(out + "/" + file, members);
    list += file + "\t" + names + "\n";
  }
  write_text_file(out + "/val_loss_panels.tsv", list);
}

}  // namespace

int compare_norms_main(const std::vector<std::string>& args) {
  FlagParser p("compare_norms",
               "Train the demo GPT once per arm of --arms and compare them (the study behind make demo). The "
               "train_gpt flags given here (any but --norm and --recipe, which the runs name) go to every run, "
               "before the run's own flags.");
  GPTRunConfig base;
  add_study_recipe_flags(p, base, add_gpt_run_flags, "runs/demo", {"--norm", "--recipe"});
  ComparisonFlags f;
  add_comparison_flags(p, f);
  std::vector<std::string> run_texts = default_demo_runs();
  p.list("--arms", run_texts,
         "the runs, each LABEL=FLAGS (train_gpt flags separated by spaces; LABEL names its folder and row), a norm "
         "(" + norm_choices(", ") + ": --norm NAME on the defaults, the plain recipe) or a recipe (--list-recipes: "
         "--recipe NAME)");
  p.alias("--arms", "--runs");
  TuneOptions tune;
  add_tune_flags(p, tune);
  std::string tuned_file = "docs/results/demo_tuned.json";
  p.text("--tuned-results", tuned_file,
         "a tuned comparison's results (compare_norms --tune --doc FILE writes them beside FILE): when the file is "
         "there, each row that is stuck or behind its ln says what tuning found for it (empty: none)",
         FlagRole::Control);
  std::vector<RunSpec> runs;
  p.check([&] { runs = parse_run_specs(run_texts); });
  if (!p.parse(args)) return 0;
  const std::vector<std::string> common = given_run_flags(p, {"threads", "jobs", "arms"});
  if (!tune.doc.empty()) check_doc_folder(tune.doc);  // before hours of training go into it
  if (!tune.axes.empty()) return run_tuned_comparison(p, f, base, common, runs, tune, args);
  // read before any run: a file that is there but unreadable stops the study now
  std::optional<TunedResults> tuned;
  if (!tuned_file.empty() && std::filesystem::exists(tuned_file))
    tuned = read_comparison_results<TunedResults>(tuned_file, "--tuned-results");
  if (tuned) {
    // a tuned comparison of another recipe (other steps, model, data) says nothing of these runs
    std::vector<std::string> keys;
    for (const std::string& k : p.recipe_keys())
      if (k != "arms") keys.push_back(k);
    const std::string difference =
        first_recipe_difference(nlohmann::ordered_json::parse(tuned->header.recipe.dump()), p.values(), keys,
                                later_flag_defaults(), "there", "here");
    if (!difference.empty()) {
      // said only when asked for: the default file is the demo's, and another recipe's
      // comparison (a shorter test, other runs) has nothing to learn from it
      if (p.given("--tuned-results"))
        std::fprintf(stderr, "--tuned-results %s: a tuned comparison of another recipe (%s); the report reads "
                     "nothing from it\n", tuned_file.c_str(), difference.c_str());
      tuned.reset();
    }
  }
  const std::string tuned_doc = std::filesystem::path(tuned_file).stem().string() + ".md";
  const std::string out = base.out_dir;
  if (tune.dry_run) {
    NL_CHECK(!f.reuse, "--dry-run prices runs to train; --reuse trains none: give one of them");
    print_comparison_plan("compare_norms", "train_gpt", common, runs, out, f.jobs, tune.step_ms);
    return 0;
  }
  DemoResults results;
  if (f.reuse) {
    results = reuse_comparison_results<DemoResults>(out);
  } else {
    // missing data fails before any run; the unigram loss is the status's reference
    const double unigram = unigram_loss(load_fortunes(base.data_dir, base.train_bytes).train);
    static_cast<ComparisonResults&>(results) =
        train_comparison(p, f, "train_gpt", common, runs, out, base.threads, kValLoss, false);
    results.unigram_loss = unigram;
    results = write_comparison_results(out, results);
  }
  const std::vector<DemoRow> rows = demo_rows(results);
  write_summary(out + "/summary.csv", rows);
  write_curves(out + "/val_loss.csv", results.runs);
  write_panel_curves(out, results.runs, rows);
  const std::string report = render_demo_report(results, tuned ? &*tuned : nullptr, tuned_doc);
  write_text_file(out + "/report.md", report);
  write_doc_copy(tune.doc, report, results);
  print_table(rows);
  for (const DemoRow& r : rows)
    if (r.status.rfind("FAILED", 0) == 0) return 1;  // a run that did not train is not a result
  return 0;
}

}  // namespace nl
