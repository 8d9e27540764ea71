#include "studies/compare/compare_vit.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "nn/norms/registry.h"
#include "studies/compare/comparison.h"
#include "studies/report/study.h"
#include "studies/report/template.h"
#include "tensor/error.h"
#include "train/flags/families.h"
#include "train/flags/vit_flags.h"
#include "train/io/files.h"
#include "train/loop/log_row.h"  // the log's column names

namespace nl {

namespace {

using json = nlohmann::json;

const char kVitTemplate[] =
#include "studies/compare/vit.md.in.h"
    ;

struct Row {
  std::string norm, status;
  double test_acc, test_loss, val_acc, train_loss, img_cpu_s, img_s, cpu_s, seconds, rms_ratio;
  int64_t steps;
};

std::vector<Row> table_rows(const VitResults& results) {
  std::vector<Row> rows;
  for (const ComparedRun& run : results.runs) {
    const std::optional<ResultRecord>& r = run.result;
    Row row;
    row.norm = run.label;
    row.test_acc = run.figure("test_accuracy");
    row.test_loss = run.figure("test_loss");
    row.val_acc = run.figure(kValAcc);
    row.train_loss = r ? r->final_train_loss : NAN;
    row.img_cpu_s = run.figure("img_per_cpu_s");
    row.img_s = run.figure("img_per_s");
    row.cpu_s = r ? r->cpu_seconds : NAN;
    row.seconds = r ? r->seconds : NAN;
    row.rms_ratio = run.figure("rms_" + std::to_string(results.layers)) / run.figure("rms_0");
    row.steps = r ? r->steps : 0;
    row.status = vit_status(run.exit_code, r && r->diverged, row.test_acc);
    rows.push_back(row);
  }
  return rows;
}

void print_vit_table(const std::vector<Row>& rows) {
  std::printf("\n%-10s %9s %10s %8s %10s %7s %14s  %s\n", "norm", "test acc", "test loss", "val acc", "img/s/core",
              "CPU s", "resid RMS L/1", "status");
  for (const Row& r : rows)
    std::printf("%-10s %8.2f%% %10.4f %7.2f%% %10.0f %7.0f %14.2f  %s\n", r.norm.c_str(), 100.0 * r.test_acc,
                r.test_loss, 100.0 * r.val_acc, r.img_cpu_s, r.cpu_s, r.rms_ratio, r.status.c_str());
}

void write_vit_summary(const std::string& path, const VitResults& results, const std::vector<Row>& rows) {
  std::string text =
      "norm,test_acc,test_loss,val_acc,train_loss,img_per_cpu_s,img_per_s,cpu_seconds,seconds,rms_last_over_first,"
      "status\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const std::optional<ResultRecord>& res = results.runs[i].result;
    // the accuracy as result.json writes it, so the two files agree to the digit
    const std::string acc = res ? res->named.at("test_accuracy").dump() : "nan";
    text += r.norm + "," + acc + "," + fmt(r.test_loss, "%.9g") + "," + fmt(r.val_acc, "%.9g") + "," +
            fmt(r.train_loss, "%.9g") + "," + fmt(r.img_cpu_s, "%.0f") + "," + fmt(r.img_s, "%.0f") + "," +
            fmt(r.cpu_s, "%.1f") + "," + fmt(r.seconds, "%.1f") + "," + fmt(r.rms_ratio, "%.9g") + "," + r.status +
            "\n";
  }
  write_text_file(path, text);
}

}  // namespace

std::string vit_status(int exit_code, bool diverged, double test_accuracy) {
  if (exit_code > 1 || (exit_code != 0 && !diverged && std::isnan(test_accuracy))) return "FAILED (see stderr)";
  if (diverged || exit_code == 1) return "DIVERGED (NaN/inf)";
  if (!(test_accuracy >= 0.5)) return "near chance";
  return "ok";
}

std::string render_vit_report(const VitResults& results) {
  json view = comparison_view(results.header);
  const std::vector<Row> rows = table_rows(results);
  int64_t steps = 0;
  view["rows"] = json::array();
  for (const Row& r : rows) {
    steps = std::max(steps, r.steps);
    view["rows"].push_back({{"norm", r.norm},
                            {"test_acc", fmt(100.0 * r.test_acc, "%.2f")},
                            {"test_loss", fmt(r.test_loss, "%.4f")},
                            {"val_acc", fmt(100.0 * r.val_acc, "%.2f")},
                            {"img_cpu_s", fmt(r.img_cpu_s, "%.0f")},
                            {"cpu_s", fmt(r.cpu_s, "%.0f")},
                            {"rms_ratio", fmt(r.rms_ratio, "%.2f")},
                            {"status", r.status}});
  }
  view["steps_done"] = steps;
  // the first norm of --norms is the one the others are read against
  view["against_first"] = false;
  if (rows.size() > 1 && std::isfinite(rows[0].test_acc)) {
    json others = json::array();
    for (size_t i = 1; i < rows.size(); ++i)
      others.push_back({{"norm", rows[i].norm}, {"diff", fmt(100.0 * (rows[i].test_acc - rows[0].test_acc), "%+.2f")}});
    view["against_first"] = {{"first", rows[0].norm}, {"accuracy", fmt(100.0 * rows[0].test_acc, "%.2f")},
                             {"others", others}};
  }
  return render_template(kVitTemplate, view, "studies/compare/vit.md.in");
}

int compare_vit_main(const std::vector<std::string>& args) {
  FlagParser p("compare_vit",
               "Train the demo ViT once per norm with one recipe and compare them (the study behind make demo-vit). "
               "Every train_vit flag but --norm sets the recipe of every run.");
  ViTRunConfig base;
  add_study_recipe_flags(p, base, add_vit_run_flags, "runs/demo-vit", {"--norm"});
  ComparisonFlags f;
  add_comparison_flags(p, f);
  std::vector<std::string> norms = {"ln", "rms", "cbwc", "dyt", "bhyt"};
  add_norms_list_flag(p, norms);
  bool dry_run = false;
  double step_ms = 39;
  add_dry_run_flag(p, dry_run);
  add_step_ms_flag(p, step_ms, "the demo ViT", "docs/vit.md");
  if (!p.parse(args)) return 0;
  NL_CHECK(!dry_run || !f.reuse, "--dry-run prices runs to train; --reuse trains none: give one of them");
  const std::string out = base.out_dir;
  if (!f.reuse)
    load_fashion_mnist(base.data_dir, base.val_size, base.split_seed,
                       base.train_images);  // missing data fails before any run
  std::vector<RunSpec> runs;
  for (const auto& n : norms) runs.push_back({n, {"--norm", n}});
  if (dry_run) {  // every run at once, as the study trains them
    print_comparison_plan("compare_vit", "train_vit", flags_from_values(p.values(), {"threads", "jobs", "norms"}), runs,
                          out, f.jobs > 0 ? f.jobs : (int)runs.size(), step_ms);
    return 0;
  }
  VitResults results;
  if (f.reuse) {
    results = reuse_comparison_results<VitResults>(out);
  } else {
    static_cast<ComparisonResults&>(results) =
        train_comparison(p, f, "train_vit", flags_from_values(p.values(), {"threads", "jobs", "norms"}), runs, out,
                         base.threads, kValAcc, /*all_at_once=*/true);
    results = write_comparison_results(out, results);
  }
  const std::vector<Row> rows = table_rows(results);
  write_vit_summary(out + "/summary.csv", results, rows);
  write_curves(out + "/val_acc.csv", results.runs);
  write_text_file(out + "/report.md", render_vit_report(results));
  print_vit_table(rows);
  for (const Row& r : rows)
    if (r.status.rfind("FAILED", 0) == 0) return 1;
  return 0;
}

}  // namespace nl
