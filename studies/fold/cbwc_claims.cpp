#include "studies/fold/cbwc_claims.h"

#include <cmath>
#include <string>

#include "nn/norms/registry.h"
#include "studies/report/claims.h"
#include "studies/report/study.h"  // fmt
#include "train/io/json_fields.h"
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
json without_norm(const ComparedRun& run) {
  json c = run.config;
  c.erase("norm");
  c.erase("final_norm");  // "" (the blocks' norm) in both runs of a pair
  return c;
}

// The run's norm, as its config names it ("" for none).
std::string norm_of(const ComparedRun& run) { return run.config.value("norm", ""); }

// The kind a run's norm folds into (NormKind::folds_into: ln -> cbwc), "" for none or for
// a name no registered kind has.
std::string folds_into(const ComparedRun& run) {
  const NormKind* kind = find_norm_kind(norm_of(run));
  return kind ? kind->folds_into : "";
}

}  // namespace

json cbwc_training_claims(const ComparisonResults& comparison) {
  json rows = json::array();
  // each run of a fold's target kind (cbwc) against its twin of the kind that folds into it (ln)
  for (const ComparedRun& cbwc : comparison.runs) {
    const std::string target = norm_of(cbwc);
    for (const ComparedRun& ln : comparison.runs) {
      if (target.empty() || folds_into(ln) != target || without_norm(ln) != without_norm(cbwc)) continue;
      const std::string claim = "CBWC + RMSNorm trains exactly like LayerNorm from the same start (" + cbwc.label +
                                " against " + ln.label + ")";
      const std::string paper = "the same outputs and gradients: one trajectory up to float rounding";
      // the pair's recipe, as the table's recipe column says it
      const std::string recipe = ln.config.value("recipe", "");
      auto add = [&](json row) {
        row["recipe"] = recipe.empty() ? "the demo's" : "`--recipe " + recipe + "`";
        rows.push_back(row);
      };
      if (!cbwc.finished() || !ln.finished()) {
        add(claim_row(claim, paper, "-", "untestable here", "", "a run of the pair failed or diverged"));
        continue;
      }
      // every logged validation loss, step by step
      double largest = 0;
      size_t compared = 0;
      for (size_t i = 0; i < cbwc.curve.size() && i < ln.curve.size(); ++i) {
        if (cbwc.curve[i].first != ln.curve[i].first) continue;
        const double d = std::fabs(number_of(cbwc.curve[i].second) - number_of(ln.curve[i].second));
        largest = std::isnan(d) ? NAN : std::max(largest, d);
        ++compared;
      }
      const std::string here = "largest difference of " + std::to_string(compared) + " validation losses " +
                               fmt(largest, "%.2g") + " nats (end " + fmt(cbwc.figure(kValLoss), "%.6f") +
                               " against " + fmt(ln.figure(kValLoss), "%.6f") + ")";
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
  const bool checked = check.contains("max_logit_diff");  // absent: the fold had no data to check
  double diff = NAN;                                        // null in the file: a difference that was not finite
  if (checked) read_field(check, "max_logit_diff", diff);
  const std::string claim = "folding a trained LayerNorm " + std::string(model == "vit" ? "ViT" : "GPT") +
                            " into CBWC + RMSNorm changes no prediction";
  const std::string paper = "identical predictions";
  // the fields a verdict is read from must be there, each of its kind (train/io/json_fields.h):
  // read as false or 0 when missing, they would print "not reproduced" from a file that says nothing
  if (!checked) {
    rows.push_back(claim_row(claim, paper, "-", "untestable here", "", "the fold ran no check (no data)"));
  } else if (model == "vit") {
    int64_t same = 0, images = 0;
    read_field(check, "same_classes", same);
    read_field(check, "images", images);
    const bool ok = diff <= kSameLogits && same == images && images > 0;
    rows.push_back(claim_row(claim, paper,
                             "largest logit difference " + fmt(diff, "%.2g") + "; the same class for " +
                                 std::to_string(same) + " of " + std::to_string(images) + " test images",
                             ok ? "reproduced" : "not reproduced", "threshold " + fmt(kSameLogits, "%.0e")));
  } else {
    bool same_text = false;
    read_field(check, "samples_identical", same_text);
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
