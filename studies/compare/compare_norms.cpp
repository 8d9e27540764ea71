#include "studies/compare/compare_norms.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "nn/norms/registry.h"
#include "studies/compare/comparison.h"
#include "studies/report/study.h"
#include "studies/report/template.h"
#include "studies/report/verdicts.h"
#include "train/flags/gpt_flags.h"
#include "train/io/files.h"

namespace nl {

namespace {

using json = nlohmann::json;

const char kTemplate[] =
#include "studies/compare/demo.md.in.h"
    ;

// One row of the table, from a run's result.json.
struct Row {
  std::string norm, status;
  double train_loss, val_loss, tok_s, rms_ratio;
};

std::vector<Row> table_rows(const json& results) {
  const int64_t layers = results["recipe"]["layers"];
  std::vector<Row> rows;
  for (const json& run : results["runs"]) {
    const json& r = run["result"];
    Row row;
    row.norm = run["label"];
    row.train_loss = result_number(r, "final_train_loss");
    row.val_loss = result_number(r, "val_loss");
    row.tok_s = result_number(r, "tok_per_s");
    row.rms_ratio = result_number(r, "rms_" + std::to_string(layers)) / result_number(r, "rms_0");
    const bool diverged = run["exit_code"] != 0 || !r.is_object() || r.value("diverged", true);
    row.status = run_status(diverged, row.val_loss);
    rows.push_back(row);
  }
  return rows;
}

// The largest |train loss(a) - train loss(b)| over the steps both logged.
double largest_train_difference(const json& results, const std::string& a, const std::string& b) {
  std::map<std::string, std::map<int64_t, double>> losses;
  for (const json& run : results["runs"])
    for (const auto& [step, v] : run["train_curve"].get<std::vector<std::pair<int64_t, std::string>>>())
      losses[run["label"]][step] = std::strtod(v.c_str(), nullptr);
  double worst = 0;
  for (const auto& [step, v] : losses[a])
    if (losses[b].count(step)) worst = std::max(worst, std::fabs(v - losses[b][step]));
  return worst;
}

void print_table(const std::vector<Row>& rows) {
  std::printf("\n%-10s %11s %9s %9s %17s  %s\n", "norm", "train loss", "val loss", "tok/s", "resid RMS L/1", "status");
  for (const Row& r : rows)
    std::printf("%-10s %11.4f %9.4f %9.0f %17.2f  %s\n", r.norm.c_str(), r.train_loss, r.val_loss, r.tok_s,
                r.rms_ratio, r.status.c_str());
}

void write_summary(const std::string& path, const std::vector<Row>& rows) {
  std::string text = "norm,train_loss,val_loss,tok_per_s,rms_last_over_first,status\n";
  for (const Row& r : rows)
    text += r.norm + "," + fmt(r.train_loss, "%.9g") + "," + fmt(r.val_loss, "%.9g") + "," + fmt(r.tok_s, "%.0f") +
            "," + fmt(r.rms_ratio, "%.9g") + "," + r.status + "\n";
  write_text_file(path, text);
}

}  // namespace

std::string render_demo_report(const json& results) {
  json view = json::object();
  for (const auto& [key, value] : results["recipe"].items()) view[key] = value;
  for (const char* key : {"date", "jobs", "threads", "cores"}) view[key] = results[key];
  view["load"] = fmt(results["load"].get<double>(), "%.1f");
  view["minutes"] = fmt(results["seconds"].get<double>() / 60.0, "%.1f");
  view["stuck"] = fmt(kStuckLoss, "%.1f");
  view["rows"] = json::array();
  std::map<std::string, Row> by_norm;
  for (const Row& r : table_rows(results)) {
    by_norm[r.norm] = r;
    view["rows"].push_back({{"norm", r.norm},
                            {"train_loss", fmt(r.train_loss, "%.4f")},
                            {"val_loss", fmt(r.val_loss, "%.4f")},
                            {"tok_s", fmt(r.tok_s, "%.0f")},
                            {"rms_ratio", fmt(r.rms_ratio, "%.2f")},
                            {"status", r.status}});
  }
  // a norm and the one it folds into (ln and cbwc) compute the same function: the
  // claim is that they train alike
  view["folds"] = json::array();
  for (const auto& [norm, row] : by_norm) {
    const std::string into = norm_kind(norm).folds_into;
    if (into.empty() || !by_norm.count(into)) continue;
    view["folds"].push_back({{"norm", norm},
                             {"into", into},
                             {"decimals", agreeing_decimals(row.val_loss, by_norm[into].val_loss)},
                             {"a", fmt(row.val_loss, "%.6f")},
                             {"b", fmt(by_norm[into].val_loss, "%.6f")},
                             {"max_train_diff", fmt(largest_train_difference(results, norm, into), "%.2g")}});
  }
  return render_template(kTemplate, view, "studies/compare/demo.md.in");
}

int compare_norms_main(const std::vector<std::string>& args) {
  FlagParser p("compare_norms",
               "Train the demo GPT once per norm with one recipe and compare them (the study behind make demo). "
               "Every train_gpt flag but --norm sets the recipe of every run.");
  p.omit({"--norm", "--resume", "--stop-after", "--quiet"});
  GPTRunConfig base;
  base.threads = 1;  // runs side by side, one thread each
  base.out_dir = "runs/demo";
  add_gpt_run_flags(p, base);
  ComparisonFlags f;
  add_comparison_flags(p, f);
  if (!p.parse(args)) return 0;
  const std::string out = base.out_dir;
  const json results = compare_norm_runs(p, f, "train_gpt", out, base.threads, 2, false);
  const std::vector<Row> rows = table_rows(results);
  write_summary(out + "/summary.csv", rows);
  write_curves(out + "/val_loss.csv", results["runs"]);
  write_text_file(out + "/report.md", render_demo_report(results));
  print_table(rows);
  return 0;
}

}  // namespace nl
