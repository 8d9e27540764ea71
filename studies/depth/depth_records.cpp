#include "studies/depth/depth_records.h"

#include <cmath>

#include "studies/report/study.h"

namespace nl {

using json = nlohmann::json;

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, DepthCellSummary> s) {
  auto& run = s.run;  // its fields stand beside the summary's own
  io("depth", run.depth)("variant", run.variant)("seed", run.seed)("exit_code", run.exit_code);
  io("kept", s.kept)("block", s.block)("norm", s.norm);
  io("kappa", run.kappa)("train_loss", run.train_loss)("val_loss", run.val_loss)("tok_s", run.tok_s);
  io("diverged", run.diverged)("var_init", run.var_init)("var_end", run.var_end)("site2", run.site2);
  io("lambda_min", run.lambda_min)("lambda_max", run.lambda_max);
}

void to_json(json& j, const DepthCellSummary& s) { write_fields(j, s); }

json DepthCellSummary::to_json() const { return *this; }

// site2's pairs are written as [layer, step, approx, exact], not as objects of fields
void to_json(json& j, const Site2Pair& p) { j = {p.layer, p.step, p.approx, p.exact}; }

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

// the fields, then the profiles' lengths: a finished run has both, one value per layer
// and the embedding; a failed one neither
void from_json(const json& j, DepthCellSummary& s) {
  read_fields(j, s, "a cell's summary");
  const DepthRun& run = s.run;
  for (const char* key : {"var_init", "var_end"}) {
    const size_t n = (key[4] == 'i' ? run.var_init : run.var_end).size();
    if (n != 0 && n != (size_t)run.depth + 1)
      throw FieldError(key, "has " + std::to_string(n) + " values, not " + std::to_string(run.depth + 1) +
                                " (the embedding and each of " + std::to_string(run.depth) + " layers) nor none");
  }
}

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, SpeedRow> r) {
  io("config", r.config)("norm", r.norm)("step_ms", r.step_ms)("forward_ms", r.forward_ms);
}

void to_json(json& j, const SpeedRow& r) { write_fields(j, r); }
void from_json(const json& j, SpeedRow& r) { read_fields(j, r, "a speed row"); }

json speed_json(const std::vector<SpeedRow>& rows) { return fields::write(rows); }

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, DepthArm> a) {
  io("label", a.label)("flags", a.flags);
}

void to_json(json& j, const DepthArm& a) { write_fields(j, a); }
void from_json(const json& j, DepthArm& a) { read_fields(j, a, "an arm"); }

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, DepthResults> d) {
  io.flat(base_of<StudyHeader>(d))("cells_run", d.cells_run)("cells_kept", d.cells_kept)("seconds", d.seconds);
  io("depths", d.depths)("seeds", d.seeds)("variants", d.arms)("runs", d.runs)("plot_script", d.plot_script);
  io("speed_reps", d.speed_reps).nullable("speed", d.speed);
}

// The fields, and two by hand: "study", which tells the file apart and is never read
// back, and speed_seconds, written beside a speed section only (files before it lack it).
json DepthResults::to_json() const {
  json j;
  write_fields(j, *this);
  j["study"] = "depth";
  if (speed && !std::isnan(speed_seconds)) j["speed_seconds"] = speed_seconds;
  return j;
}

void from_json(const json& j, DepthResults& d) {
  read_fields(j, d);
  if (d.recipe.contains("bhyt_p") && !d.recipe["bhyt_p"].is_number())  // the report reads it as kappa's p
    throw FieldError("recipe.bhyt_p", "is " + json_kind_name(d.recipe["bhyt_p"]) + ", not a number");
  if (d.speed) read_optional_field(j, "speed_seconds", d.speed_seconds);
}

DepthResults read_depth_results(const std::string& out) {
  const json doc = read_study_results(out);
  return read_record<DepthResults>(doc, "--reuse", out + "/results.json");
}

}  // namespace nl
