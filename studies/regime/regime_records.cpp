#include "studies/regime/regime_records.h"

#include "train/io/json_fields.h"

namespace nl {

using json = nlohmann::json;

// a point is a [step, value] pair, not an object of fields
void to_json(json& j, const CurvePoint& p) { j = json::array({json(p.step), figure_json(p.value)}); }

void from_json(const json& j, CurvePoint& p) {
  if (!j.is_array()) fields::wrong_kind(j, "a [step, value] pair");
  if (j.size() < 2) throw FieldError("[" + std::to_string(j.size()) + "]", "is missing");
  try {
    fields::read(j[0], p.step);
  } catch (const FieldError& e) {
    throw e.within("[0]");
  }
  try {
    fields::read(j[1], p.value);
  } catch (const FieldError& e) {
    throw e.within("[1]");
  }
}

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, RegimeRun> r) {
  io("model", r.model)("arm", r.arm)("size", r.size)("width", r.width)("seed", r.seed);  // its cell
  io.optional("llama", r.llama)("exit_code", r.exit_code).optional("kept", r.kept);
  io("norm", r.norm)("bounded", r.bounded);
  io("val_end", r.val_end)("seconds", r.seconds)("curve", r.curve).optional("acc_curve", r.acc_curve);
  io.optional("train_end", r.train_end);
  // a GPT cell is measured at the screen step and at the end (--measure-at): a finished
  // one's record has every instrument (null where one was not finite); a failed one's,
  // written before the writer filled them in, may lack those of the end (the reader has
  // read model and exit_code by now)
  const bool gpt = r.model == "gpt", measured = gpt && r.exit_code == 0;
  io.optional("sat_screen", r.sat_screen, gpt).optional("sat_end", r.sat_end, measured);
  io.optional("erank_end", r.erank_end, measured).optional("logit_variance_end", r.logit_variance_end, measured);
  io.optional("alpha_end", r.alpha_end, measured).optional("noise_end", r.noise_end, measured);
}
NL_JSON_RECORD(RegimeRun)

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, RegimeArm> a) {
  io("label", a.label)("flags", a.flags);
}
NL_JSON_RECORD(RegimeArm)

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, NotRunCell> c) {
  io.optional("cell", c.cell).optional("seed", c.seed);
}
NL_JSON_RECORD(NotRunCell)

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, RegimeResults> r) {
  io.flat(r.header)("grid", r.grid).optional("grid_replaced", r.grid_replaced)("reference", r.reference);
  io("seeds", r.seeds)("screen_step", r.screen_step)("vit_steps", r.vit_steps);
  io("train_bytes_all", r.train_bytes_all).optional("unigram_loss", r.unigram_loss);
  io("cells_run", r.cells_run)("cells_kept", r.cells_kept)("seconds", r.seconds);
  io("estimate_minutes", r.estimate_minutes).optional("llama_note", r.llama_note).optional("not_run", r.not_run);
  io("arms", r.arms)("vit_arms", r.vit_arms).optional("llama_arms", r.llama_arms);
  io("plot_script", r.plot_script)("runs", r.runs);
}

void to_json(json& j, const RegimeResults& r) { write_fields(j, r); }

// the fields, then the recipe's flags the report computes with (passes over a subset,
// the base width), which the writer leaves in the recipe
void from_json(const json& j, RegimeResults& r) {
  read_fields(j, r);
  try {
    read_field(r.header.recipe, "steps", r.steps);
    read_field(r.header.recipe, "batch", r.batch);
    read_field(r.header.recipe, "seq", r.seq);
    read_field(r.header.recipe, "dim", r.dim);
  } catch (const FieldError& e) {
    throw e.within("recipe");
  }
}

RegimeResults regime_results_of(const json& doc, const std::string& flag, const std::string& file) {
  return read_record<RegimeResults>(doc, flag, file);
}

RegimeResults read_regime_results(const std::string& path, const std::string& flag, const std::string& missing_hint) {
  return regime_results_of(read_results_file(path, flag, missing_hint), flag, path);
}

}  // namespace nl
