#include "studies/fold/cbwc_claims.h"

#include <cmath>
#include <string>

#include "nn/norms/registry.h"
#include "studies/report/claims.h"
#include "studies/report/study.h"  // fmt
#include "train/loop/log_row.h"  // the log's column names

namespace nl {

using json = nlohmann::json;

namespace {

// A number as a results file writes it: a number, or its text (curves hold "2.4066658").
double number_of(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    try {
      return std::stod(v.get<std::string>());
    } catch (const std::exception&) {
    }
  }
  return NAN;
}

// The run's configuration without the norm: what must match for a run to be another's twin.
json without_norm(const json& run) {
  json c = run.value("config", json::object());
  c.erase("norm");
  c.erase("final_norm");  // "" (the blocks' norm) in both runs of a pair
  return c;
}

// The kind a run's norm folds into (NormKind::folds_into: ln -> cbwc), "" for none or for
// a name no registered kind has.
std::string folds_into(const json& run) {
  const NormKind* kind = find_norm_kind(run.value("config", json::object()).value("norm", ""));
  return kind ? kind->folds_into : "";
}

bool trained(const json& run) {
  const json res = run.value("result", json::object());
  return run.value("exit_code", -1) == 0 && res.is_object() && !res.value("diverged", true);
}

}  // namespace

json cbwc_training_claims(const json& comparison) {
  json rows = json::array();
  const json runs = comparison.value("runs", json::array());
  // each run of a fold's target kind (cbwc) against its twin of the kind that folds into it (ln)
  for (const json& cbwc : runs) {
    const std::string target = cbwc.value("config", json::object()).value("norm", "");
    for (const json& ln : runs) {
      if (target.empty() || folds_into(ln) != target || without_norm(ln) != without_norm(cbwc)) continue;
      const std::string claim = "CBWC + RMSNorm trains exactly like LayerNorm from the same start (" +
                                cbwc.value("label", "cbwc") + " against " + ln.value("label", "ln") + ")";
      const std::string paper = "the same outputs and gradients: one trajectory up to float rounding";
      // the pair's recipe, as the table's recipe column says it
      const std::string recipe = ln.value("config", json::object()).value("recipe", "");
      auto add = [&](json row) {
        row["recipe"] = recipe.empty() ? "the demo's" : "`--recipe " + recipe + "`";
        rows.push_back(row);
      };
      if (!trained(cbwc) || !trained(ln)) {
        add(claim_row(claim, paper, "-", "untestable here", "", "a run of the pair failed or diverged"));
        continue;
      }
      // every logged validation loss, step by step
      const json a = cbwc.value("curve", json::array()), b = ln.value("curve", json::array());
      double largest = 0;
      size_t compared = 0;
      for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        if (a[i].size() < 2 || b[i].size() < 2 || a[i][0] != b[i][0]) continue;
        const double d = std::fabs(number_of(a[i][1]) - number_of(b[i][1]));
        largest = std::isnan(d) ? NAN : std::max(largest, d);
        ++compared;
      }
      const double end_a = number_of(cbwc.value("result", json::object()).value(kValLoss, json())),
                   end_b = number_of(ln.value("result", json::object()).value(kValLoss, json()));
      const std::string here = "largest difference of " + std::to_string(compared) + " validation losses " +
                               fmt(largest, "%.2g") + " nats (end " + fmt(end_a, "%.6f") + " against " +
                               fmt(end_b, "%.6f") + ")";
      if (compared == 0)
        add(claim_row(claim, paper, here, "untestable here", "", "the two runs logged no common step"));
      else
        add(claim_row(claim, paper, here, largest <= kSameTrajectoryNats ? "reproduced" : "not reproduced",
                                 "threshold " + fmt(kSameTrajectoryNats, "%.0e") + " nats at every evaluation"));
    }
  }
  return rows;
}

json fold_claims(const json& check) {
  json rows = json::array();
  const std::string model = check.value("model", "gpt");
  const double diff = number_of(check.value("max_logit_diff", json()));
  const std::string claim = "folding a trained LayerNorm " + std::string(model == "vit" ? "ViT" : "GPT") +
                            " into CBWC + RMSNorm changes no prediction";
  const std::string paper = "identical predictions";
  if (!check.contains("max_logit_diff")) {
    rows.push_back(claim_row(claim, paper, "-", "untestable here", "", "the fold ran no check (no data)"));
  } else if (model == "vit") {
    const int64_t same = check.value("same_classes", (int64_t)0), images = check.value("images", (int64_t)0);
    const bool ok = diff <= kSameLogits && same == images && images > 0;
    rows.push_back(claim_row(claim, paper,
                             "largest logit difference " + fmt(diff, "%.2g") + "; the same class for " +
                                 std::to_string(same) + " of " + std::to_string(images) + " test images",
                             ok ? "reproduced" : "not reproduced", "threshold " + fmt(kSameLogits, "%.0e")));
  } else {
    const bool same_text = check.value("samples_identical", false);
    const bool ok = diff <= kSameLogits && same_text;
    std::string here = "largest logit difference " + fmt(diff, "%.2g");
    if (check.contains("loss_ln"))
      here += ", loss " + fmt(number_of(check.value("loss_ln", json())), "%.6f") + " against " +
              fmt(number_of(check.value("loss_folded", json())), "%.6f");
    here += std::string("; sampled text ") + (same_text ? "identical" : "different");
    rows.push_back(
        claim_row(claim, paper, here, ok ? "reproduced" : "not reproduced", "threshold " + fmt(kSameLogits, "%.0e")));
  }
  rows.push_back(claim_row("the folded model runs faster", "2-12 % faster inference (GPUs), 50-80 % faster norm op",
                           "-", "untestable here", "",
                           "a speed is measured by `bench_fold` on an idle machine: docs/performance.md"));
  return rows;
}

}  // namespace nl
