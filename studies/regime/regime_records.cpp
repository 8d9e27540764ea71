#include "studies/regime/regime_records.h"

#include "train/io/json_fields.h"

namespace nl {

using json = nlohmann::json;

namespace {

void expect_object(const json& j) {
  if (!j.is_object()) fields::wrong_kind(j, "an object");
}

json figures_json(const std::map<std::string, double>& m) {
  json j = json::object();
  for (const auto& [key, value] : m) j[key] = figure_json(value);
  return j;
}

// optional fields, written only when they hold a value
void put_if(json& j, const char* key, const std::optional<double>& v) {
  if (v) j[key] = figure_json(*v);
}
void put_if(json& j, const char* key, const std::optional<std::map<std::string, double>>& v) {
  if (v) j[key] = figures_json(*v);
}
template <class T>
void put_if(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

}  // namespace

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

void to_json(json& j, const RegimeRun& r) {
  j = {{"model", r.model},     {"arm", r.arm},         {"size", r.size},
       {"width", r.width},     {"seed", r.seed},       {"llama", r.llama},
       {"exit_code", r.exit_code}, {"kept", r.kept},   {"norm", r.norm},
       {"bounded", r.bounded}, {"val_end", figure_json(r.val_end)}, {"seconds", figure_json(r.seconds)},
       {"curve", r.curve}};
  put_if(j, "acc_curve", r.acc_curve);
  put_if(j, "train_end", r.train_end);
  put_if(j, "sat_screen", r.sat_screen);
  put_if(j, "sat_end", r.sat_end);
  put_if(j, "erank_end", r.erank_end);
  put_if(j, "logit_variance_end", r.logit_variance_end);
  put_if(j, "alpha_end", r.alpha_end);
  put_if(j, "noise_end", r.noise_end);
}

void from_json(const json& j, RegimeRun& r) {
  expect_object(j);
  read_field(j, "model", r.model);
  read_field(j, "arm", r.arm);
  read_field(j, "size", r.size);
  read_field(j, "width", r.width);
  read_field(j, "seed", r.seed);
  read_optional_field(j, "llama", r.llama);
  read_field(j, "exit_code", r.exit_code);
  read_optional_field(j, "kept", r.kept);
  read_field(j, "norm", r.norm);
  read_field(j, "bounded", r.bounded);
  read_field(j, "val_end", r.val_end);
  read_field(j, "seconds", r.seconds);
  read_field(j, "curve", r.curve);
  read_optional_field(j, "acc_curve", r.acc_curve);
  read_optional_field(j, "train_end", r.train_end);
  // a GPT cell is measured at the screen step and at the end (--measure-at): a finished
  // one's record has every instrument (null where one was not finite); a failed one's,
  // written before the writer filled them in, may lack those of the end
  const bool gpt = r.model == "gpt", measured = gpt && r.exit_code == 0;
  auto instrument = [&](const char* key, auto& out) {
    if (measured) read_field(j, key, out);
    else read_optional_field(j, key, out);
  };
  if (gpt) read_field(j, "sat_screen", r.sat_screen);
  else read_optional_field(j, "sat_screen", r.sat_screen);
  instrument("sat_end", r.sat_end);
  instrument("erank_end", r.erank_end);
  instrument("logit_variance_end", r.logit_variance_end);
  instrument("alpha_end", r.alpha_end);
  instrument("noise_end", r.noise_end);
}

void to_json(json& j, const RegimeArm& a) { j = {{"label", a.label}, {"flags", a.flags}}; }

void from_json(const json& j, RegimeArm& a) {
  expect_object(j);
  read_field(j, "label", a.label);
  read_field(j, "flags", a.flags);
}

void to_json(json& j, const NotRunCell& c) { j = {{"cell", c.cell}, {"seed", c.seed}}; }

void from_json(const json& j, NotRunCell& c) {
  expect_object(j);
  read_optional_field(j, "cell", c.cell);
  read_optional_field(j, "seed", c.seed);
}

void to_json(json& j, const RegimeResults& r) {
  j = r.header;
  j.update({{"grid", r.grid}, {"grid_replaced", r.grid_replaced}, {"reference", r.reference}, {"seeds", r.seeds},
            {"screen_step", r.screen_step}, {"vit_steps", r.vit_steps}, {"train_bytes_all", r.train_bytes_all},
            {"cells_run", r.cells_run}, {"cells_kept", r.cells_kept}, {"seconds", figure_json(r.seconds)},
            {"estimate_minutes", r.estimate_minutes}, {"llama_note", r.llama_note}, {"arms", r.arms},
            {"vit_arms", r.vit_arms}, {"llama_arms", r.llama_arms}, {"plot_script", r.plot_script}, {"runs", r.runs}});
  put_if(j, "unigram_loss", r.unigram_loss);
  put_if(j, "not_run", r.not_run);
}

void from_json(const json& j, RegimeResults& r) {
  expect_object(j);
  from_json(j, r.header);
  try {  // the recipe's flags the report computes with (passes over a subset, the base width)
    read_field(r.header.recipe, "steps", r.steps);
    read_field(r.header.recipe, "batch", r.batch);
    read_field(r.header.recipe, "seq", r.seq);
    read_field(r.header.recipe, "dim", r.dim);
  } catch (const FieldError& e) {
    throw e.within("recipe");
  }
  read_field(j, "grid", r.grid);
  read_optional_field(j, "grid_replaced", r.grid_replaced);
  read_field(j, "reference", r.reference);
  read_field(j, "seeds", r.seeds);
  read_field(j, "screen_step", r.screen_step);
  read_field(j, "vit_steps", r.vit_steps);
  read_field(j, "train_bytes_all", r.train_bytes_all);
  read_optional_field(j, "unigram_loss", r.unigram_loss);
  read_field(j, "cells_run", r.cells_run);
  read_field(j, "cells_kept", r.cells_kept);
  read_field(j, "seconds", r.seconds);
  read_field(j, "estimate_minutes", r.estimate_minutes);
  read_optional_field(j, "llama_note", r.llama_note);
  read_optional_field(j, "not_run", r.not_run);
  read_field(j, "arms", r.arms);
  read_field(j, "vit_arms", r.vit_arms);
  read_optional_field(j, "llama_arms", r.llama_arms);
  read_field(j, "plot_script", r.plot_script);
  read_field(j, "runs", r.runs);
}

RegimeResults regime_results_of(const json& doc, const std::string& flag, const std::string& file) {
  return read_record<RegimeResults>(doc, flag, file);
}

RegimeResults read_regime_results(const std::string& path, const std::string& flag, const std::string& missing_hint) {
  return regime_results_of(read_results_file(path, flag, missing_hint), flag, path);
}

}  // namespace nl
