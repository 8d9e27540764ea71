#include "studies/depth/depth_records.h"

#include <cmath>

#include "studies/report/study.h"

namespace nl {

namespace {

using json = nlohmann::json;

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(); }

}  // namespace

json DepthCellSummary::to_json() const {
  json site2 = json::array();
  for (const Site2Pair& p : run.site2) site2.push_back({p.layer, p.step, p.approx, p.exact});
  return {{"depth", run.depth},
          {"variant", run.variant},
          {"seed", run.seed},
          {"exit_code", run.exit_code},
          {"kept", kept},
          {"block", block},
          {"norm", norm},
          {"kappa", finite_or_null(run.kappa)},
          {"train_loss", finite_or_null(run.train_loss)},
          {"val_loss", finite_or_null(run.val_loss)},
          {"tok_s", finite_or_null(run.tok_s)},
          {"diverged", run.diverged},
          {"var_init", run.var_init},
          {"var_end", run.var_end},
          {"site2", site2},
          {"lambda_min", finite_or_null(run.lambda_min)},
          {"lambda_max", finite_or_null(run.lambda_max)}};
}

// site2's pairs are written as [layer, step, approx, exact]
void from_json(const json& j, Site2Pair& p) {
  if (!j.is_array() || j.size() != 4)
    throw FieldError("", "is " + json_kind_name(j) + ", not [layer, step, approx, exact]");
  for (size_t k = 0; k < 4; ++k) try {
      if (k < 2) fields::read(j[k], k == 0 ? p.layer : p.step);
      else fields::read(j[k], k == 2 ? p.approx : p.exact);
    } catch (const FieldError& e) {
      throw e.within("[" + std::to_string(k) + "]");
    }
}

void from_json(const json& j, DepthCellSummary& s) {
  if (!j.is_object()) throw FieldError("", "is " + json_kind_name(j) + ", not a cell's summary");
  DepthRun& run = s.run;
  int64_t seed = 0;
  read_field(j, "depth", run.depth);
  read_field(j, "variant", run.variant);
  read_field(j, "seed", seed);
  run.seed = (uint64_t)seed;
  read_field(j, "exit_code", run.exit_code);
  read_field(j, "kept", s.kept);
  read_field(j, "block", s.block);
  read_field(j, "norm", s.norm);
  read_field(j, "kappa", run.kappa);
  read_field(j, "train_loss", run.train_loss);
  read_field(j, "val_loss", run.val_loss);
  read_field(j, "tok_s", run.tok_s);
  read_field(j, "diverged", run.diverged);
  read_field(j, "var_init", run.var_init);
  read_field(j, "var_end", run.var_end);
  // a finished run has both profiles, one value per layer and the embedding; a failed one neither
  for (const char* key : {"var_init", "var_end"}) {
    const size_t n = (key[4] == 'i' ? run.var_init : run.var_end).size();
    if (n != 0 && n != (size_t)run.depth + 1)
      throw FieldError(key, "has " + std::to_string(n) + " values, not " + std::to_string(run.depth + 1) +
                                " (the embedding and each of " + std::to_string(run.depth) + " layers) nor none");
  }
  read_field(j, "site2", run.site2);
  read_field(j, "lambda_min", run.lambda_min);
  read_field(j, "lambda_max", run.lambda_max);
}

namespace {

// A speed row's fields, spelled once for the writer and the reader.
json speed_row_json(const SpeedRow& r) {
  return {{"config", r.config}, {"norm", r.norm}, {"step_ms", r.step_ms}, {"forward_ms", r.forward_ms}};
}

}  // namespace

void from_json(const json& j, SpeedRow& r) {
  if (!j.is_object()) throw FieldError("", "is " + json_kind_name(j) + ", not a speed row");
  read_field(j, "config", r.config);
  read_field(j, "norm", r.norm);
  read_field(j, "step_ms", r.step_ms);
  read_field(j, "forward_ms", r.forward_ms);
}

json speed_json(const std::vector<SpeedRow>& rows) {
  json j = json::array();
  for (const SpeedRow& row : rows) j.push_back(speed_row_json(row));
  return j;
}

json DepthResults::to_json() const {
  json j = static_cast<const StudyHeader&>(*this);
  j.update({{"study", "depth"}, {"cells_run", cells_run}, {"cells_kept", cells_kept}, {"seconds", seconds},
            {"depths", depths}, {"seeds", seeds}, {"plot_script", plot_script}, {"speed_reps", speed_reps}});
  j["variants"] = json::array();
  for (const DepthArm& a : arms) j["variants"].push_back({{"label", a.label}, {"flags", a.flags}});
  j["runs"] = json::array();
  for (const DepthCellSummary& s : runs) j["runs"].push_back(s.to_json());
  j["speed"] = speed ? speed_json(*speed) : json();
  if (speed) {
    if (!std::isnan(speed_seconds)) j["speed_seconds"] = speed_seconds;  // files before it lack it
  }
  return j;
}

void from_json(const json& j, DepthArm& a) {
  if (!j.is_object()) throw FieldError("", "is " + json_kind_name(j) + ", not an arm");
  read_field(j, "label", a.label);
  read_field(j, "flags", a.flags);
}

void from_json(const json& j, DepthResults& d) {
  from_json(j, static_cast<StudyHeader&>(d));
  if (d.recipe.contains("bhyt_p") && !d.recipe["bhyt_p"].is_number())  // the report reads it as kappa's p
    throw FieldError("recipe.bhyt_p", "is " + json_kind_name(d.recipe["bhyt_p"]) + ", not a number");
  read_field(j, "cells_run", d.cells_run);
  read_field(j, "cells_kept", d.cells_kept);
  read_field(j, "seconds", d.seconds);
  read_field(j, "depths", d.depths);
  read_field(j, "seeds", d.seeds);
  read_field(j, "variants", d.arms);
  read_field(j, "runs", d.runs);
  read_field(j, "plot_script", d.plot_script);
  read_field(j, "speed_reps", d.speed_reps);
  if (!j.contains("speed")) throw FieldError("speed", "is missing");
  if (!j["speed"].is_null()) {
    read_field(j, "speed", d.speed);
    read_optional_field(j, "speed_seconds", d.speed_seconds);
  }
}

DepthResults read_depth_results(const std::string& out) {
  const json doc = read_study_results(out);
  return read_record<DepthResults>(doc, "--reuse", out + "/results.json");
}

}  // namespace nl
