#include "studies/compare/comparison_records.h"

#include "studies/compare/bhyt_gap.h"  // its long arms
#include "train/loop/log_row.h"  // the log's column names

namespace nl {

using json = nlohmann::json;

namespace {

void expect_object(const json& j) {
  if (!j.is_object()) fields::wrong_kind(j, "an object");
}

// check(run) for each run, a FieldError it throws placed under runs[i]
template <class F>
void check_each_run(const ComparisonResults& r, F check) {
  for (size_t i = 0; i < r.runs.size(); ++i) try {
      check(r.runs[i]);
    } catch (const FieldError& e) {
      throw e.within("[" + std::to_string(i) + "]").within("runs");
    }
}

// A finished run's result holds each of `names` as a figure (a number, or null for one
// that was not finite): "result.val_loss is missing" otherwise. A run without a result
// holds none.
void require_figures(const ComparedRun& run, const std::vector<std::string>& names) {
  if (!run.result) return;
  for (const std::string& name : names) try {
      double unused = NAN;
      read_field(run.result->named, name.c_str(), unused);
    } catch (const FieldError& e) {
      throw e.within("result");
    }
}

// recipe.KEY of the header, the path named when it is missing
void read_recipe_field(const ComparisonHeader& h, const char* key, int64_t& out) {
  try {
    read_field(h.recipe, key, out);
  } catch (const FieldError& e) {
    throw e.within("recipe");
  }
}

std::string rms_of_layer(int64_t layer) { return "rms_" + std::to_string(layer); }

}  // namespace

std::string results_text(const json& record) { return record.dump(1) + "\n"; }

void to_json(json& j, const ComparisonHeader& h) {
  j = {{"date", h.date},       {"jobs", h.jobs},           {"threads", h.threads}, {"cores", h.cores},
       {"load", figure_json(h.load)}, {"seconds", h.seconds}, {"recipe", h.recipe}};
}

void from_json(const json& j, ComparisonHeader& h) {
  expect_object(j);
  read_field(j, "date", h.date);
  read_field(j, "jobs", h.jobs);
  read_field(j, "threads", h.threads);
  read_field(j, "cores", h.cores);
  read_field(j, "load", h.load);
  read_field(j, "seconds", h.seconds);
  read_object_field(j, "recipe", h.recipe);
}

void to_json(json& j, const ComparedRun& r) {
  j = {{"label", r.label},
       {"flags", r.flags},
       {"config", r.config},
       {"exit_code", r.exit_code},
       {"result", r.result ? json(*r.result) : json()},
       {"curve", r.curve},
       {"train_curve", r.train_curve}};
  if (r.final_sat2) j["final_sat2"] = figure_json(*r.final_sat2);
}

void from_json(const json& j, ComparedRun& r) {
  expect_object(j);
  read_field(j, "label", r.label);
  read_field(j, "flags", r.flags);
  read_object_field(j, "config", r.config);
  read_field(j, "exit_code", r.exit_code);
  if (!j.contains("result")) throw FieldError("result", "is missing");
  if (!j["result"].is_null()) read_field(j, "result", r.result);
  read_field(j, "curve", r.curve);
  read_field(j, "train_curve", r.train_curve);
  read_optional_field(j, "final_sat2", r.final_sat2);
}

void to_json(json& j, const ComparisonResults& r) {
  j = r.header;
  j["runs"] = r.runs;
}

void from_json(const json& j, ComparisonResults& r) {
  from_json(j, r.header);
  read_field(j, "runs", r.runs);
}

DemoConfig demo_config(const ComparedRun& run) {
  DemoConfig c;
  from_json(run.config, c);
  return c;
}

void from_json(const json& j, DemoConfig& c) {
  expect_object(j);
  read_field(j, "block", c.block);
  read_field(j, "norm", c.norm);
  read_optional_field(j, "recipe", c.recipe);
  read_field(j, "layers", c.layers);
}

void to_json(json& j, const DemoResults& r) {
  to_json(j, static_cast<const ComparisonResults&>(r));
  j["unigram_loss"] = figure_json(r.unigram_loss);
}

void from_json(const json& j, DemoResults& r) {
  from_json(j, static_cast<ComparisonResults&>(r));
  read_field(j, "unigram_loss", r.unigram_loss);
  check_each_run(r, [](const ComparedRun& run) {
    DemoConfig c;
    try {
      c = demo_config(run);
    } catch (const FieldError& e) {
      throw e.within("config");
    }
    require_figures(run, {kValLoss, "tok_per_s", "rms_0", rms_of_layer(c.layers)});
  });
}

void to_json(json& j, const VitResults& r) { to_json(j, static_cast<const ComparisonResults&>(r)); }

void from_json(const json& j, VitResults& r) {
  from_json(j, static_cast<ComparisonResults&>(r));
  read_recipe_field(r.header, "layers", r.layers);
  check_each_run(r, [&](const ComparedRun& run) {
    require_figures(run, {"test_accuracy", "test_loss", kValAcc, "img_per_cpu_s", "img_per_s", "rms_0",
                          rms_of_layer(r.layers)});
  });
}

void to_json(json& j, const SeededResults& r) {
  to_json(j, static_cast<const ComparisonResults&>(r));
  j.update({{"command", r.command}, {"seeds", r.seeds}, {"unigram_loss", figure_json(r.unigram_loss)}});
}

void from_json(const json& j, SeededResults& r) {
  from_json(j, static_cast<ComparisonResults&>(r));
  read_field(j, "command", r.command);
  read_field(j, "seeds", r.seeds);
  read_field(j, "unigram_loss", r.unigram_loss);
  check_each_run(r, [](const ComparedRun& run) { require_figures(run, {kValLoss}); });
}

void to_json(json& j, const DytTrainsResults& r) { to_json(j, static_cast<const SeededResults&>(r)); }

void from_json(const json& j, DytTrainsResults& r) {
  from_json(j, static_cast<SeededResults&>(r));
  read_recipe_field(r.header, "layers", r.layers);
  check_each_run(r, [&](const ComparedRun& run) {
    if (!run.final_sat2) throw FieldError("final_sat2", "is missing");
    require_figures(run, {rms_of_layer(r.layers)});
  });
}

void to_json(json& j, const BhytGapResults& r) {
  to_json(j, static_cast<const SeededResults&>(r));
  j.update({{"long_steps", r.long_steps}, {"long_flags", r.long_flags}, {"tuned_results", r.tuned_results}});
}

void from_json(const json& j, BhytGapResults& r) {
  from_json(j, static_cast<SeededResults&>(r));
  read_recipe_field(r.header, "steps", r.steps);
  read_field(j, "long_steps", r.long_steps);
  read_field(j, "long_flags", r.long_flags);
  for (const SeededArm& a : bhyt_gap_long_arms())
    if (!r.long_flags.count(a.label)) throw FieldError("long_flags." + a.label, "is missing");
  read_field(j, "tuned_results", r.tuned_results);
}

void to_json(json& j, const TunedCell& c) {
  j = {{"folder", c.folder},
       {"exit_code", c.exit_code},
       {"diverged", c.diverged},
       {"val_loss", figure_json(c.val_loss)},
       {"train_loss", figure_json(c.train_loss)},
       {"tuning_loss", figure_json(c.tuning_loss)}};
}

void from_json(const json& j, TunedCell& c) {
  expect_object(j);
  read_field(j, "folder", c.folder);
  read_field(j, "exit_code", c.exit_code);
  read_field(j, "diverged", c.diverged);
  read_field(j, "val_loss", c.val_loss);
  read_field(j, "train_loss", c.train_loss);
  read_field(j, "tuning_loss", c.tuning_loss);
}

void to_json(json& j, const TunedTrial& t) {
  j = {{"setting", t.setting}, {"flags", t.flags}, {"is_shared", t.is_shared}, {"cell", t.cell}};
}

void from_json(const json& j, TunedTrial& t) {
  expect_object(j);
  read_field(j, "setting", t.setting);
  read_field(j, "flags", t.flags);
  read_field(j, "is_shared", t.is_shared);
  read_field(j, "cell", t.cell);
}

void to_json(json& j, const TunedRun& r) {
  j = {{"label", r.label},   {"flags", r.flags},   {"norm", r.norm},        {"block", r.block},
       {"recipe", r.recipe}, {"shared", r.shared}, {"trials", r.trials}};
}

void from_json(const json& j, TunedRun& r) {
  expect_object(j);
  read_field(j, "label", r.label);
  read_field(j, "flags", r.flags);
  read_field(j, "norm", r.norm);
  read_field(j, "block", r.block);
  read_field(j, "recipe", r.recipe);
  read_field(j, "shared", r.shared);
  read_field(j, "trials", r.trials);
}

void to_json(json& j, const TuningGrid& g) {
  j = {{"axes", g.axes},
       {"dyt_axes", g.dyt_axes},
       {"settings", g.settings},
       {"tune_bytes", g.tune_bytes},
       {"train_bytes", g.train_bytes}};
}

void from_json(const json& j, TuningGrid& g) {
  expect_object(j);
  read_field(j, "axes", g.axes);
  read_field(j, "dyt_axes", g.dyt_axes);
  read_field(j, "settings", g.settings);
  read_field(j, "tune_bytes", g.tune_bytes);
  read_field(j, "train_bytes", g.train_bytes);
}

void to_json(json& j, const TunedResults& r) {
  j = r.header;
  j.update({{"unigram_loss", figure_json(r.unigram_loss)},
            {"command", r.command},
            {"tuning", r.tuning},
            {"runs", r.runs}});
}

void from_json(const json& j, TunedResults& r) {
  from_json(j, r.header);
  read_field(j, "unigram_loss", r.unigram_loss);
  read_field(j, "command", r.command);
  read_field(j, "tuning", r.tuning);
  read_field(j, "runs", r.runs);
}

}  // namespace nl
