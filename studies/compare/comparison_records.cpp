#include "studies/compare/comparison_records.h"

#include "studies/compare/bhyt_gap.h"  // its long arms
#include "train/loop/log_row.h"  // the log's column names

namespace nl {

using json = nlohmann::json;

namespace {

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

void require_run_figures(const ComparisonResults& r, const std::vector<std::string>& names) {
  check_each_run(r, [&](const ComparedRun& run) { require_figures(run, names); });
}

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, ComparisonHeader> h) {
  io("date", h.date)("jobs", h.jobs)("threads", h.threads)("cores", h.cores);
  io("load", h.load).number("seconds", h.seconds).object("recipe", h.recipe);
}
NL_JSON_RECORD(ComparisonHeader)

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, ComparedRun> r) {
  io("label", r.label)("flags", r.flags).object("config", r.config);
  io("exit_code", r.exit_code).nullable("result", r.result);  // null: it did not finish
  io("curve", r.curve)("train_curve", r.train_curve).optional("final_sat2", r.final_sat2);
}
NL_JSON_RECORD(ComparedRun)

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, ComparisonResults> r) {
  io.flat(r.header)("runs", r.runs);
}
NL_JSON_RECORD(ComparisonResults)

DemoConfig demo_config(const ComparedRun& run) {
  DemoConfig c;
  from_json(run.config, c);
  return c;
}

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, DemoConfig> c) {
  io("block", c.block)("norm", c.norm).optional("recipe", c.recipe)("layers", c.layers);
}

// read only: a run's config.json is its program's to write
void from_json(const json& j, DemoConfig& c) { read_fields(j, c); }

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, DemoResults> r) {
  io.flat(base_of<ComparisonResults>(r)).number("unigram_loss", r.unigram_loss);
}

void to_json(json& j, const DemoResults& r) { write_fields(j, r); }

// the fields, then what the report reads of each run's config and result
void from_json(const json& j, DemoResults& r) {
  read_fields(j, r);
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

// no field of its own (layers is the recipe's): the base record, then the figures its report reads
void to_json(json& j, const VitResults& r) { to_json(j, static_cast<const ComparisonResults&>(r)); }

void from_json(const json& j, VitResults& r) {
  from_json(j, static_cast<ComparisonResults&>(r));
  read_recipe_field(r.header, "layers", r.layers);
  check_each_run(r, [&](const ComparedRun& run) {
    require_figures(run, {"test_accuracy", "test_loss", kValAcc, "img_per_cpu_s", "img_per_s", "rms_0",
                          rms_of_layer(r.layers)});
  });
}

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, SeededResults> r) {
  io.flat(base_of<ComparisonResults>(r))("command", r.command)("seeds", r.seeds);
  io.number("unigram_loss", r.unigram_loss);
}

void to_json(json& j, const SeededResults& r) { write_fields(j, r); }

// the fields, then each finished run's validation loss
void from_json(const json& j, SeededResults& r) {
  read_fields(j, r);
  check_each_run(r, [](const ComparedRun& run) { require_figures(run, {kValLoss}); });
}

// no field of its own either: the seeded record, then each run's final_sat2 and last rms
void to_json(json& j, const DytTrainsResults& r) { to_json(j, static_cast<const SeededResults&>(r)); }

void from_json(const json& j, DytTrainsResults& r) {
  from_json(j, static_cast<SeededResults&>(r));
  read_recipe_field(r.header, "layers", r.layers);
  check_each_run(r, [&](const ComparedRun& run) {
    if (!run.final_sat2) throw FieldError("final_sat2", "is missing");
    require_figures(run, {rms_of_layer(r.layers)});
  });
}

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, BhytGapResults> r) {
  io.flat(base_of<SeededResults>(r));  // its from_json: the seeded comparisons' checks too
  io("long_steps", r.long_steps)("long_flags", r.long_flags)("tuned_results", r.tuned_results);
}

void to_json(json& j, const BhytGapResults& r) { write_fields(j, r); }

// the fields, then the controls' steps from the recipe and every long arm's flags
void from_json(const json& j, BhytGapResults& r) {
  read_fields(j, r);
  read_recipe_field(r.header, "steps", r.steps);
  for (const SeededArm& a : bhyt_gap_long_arms())
    if (!r.long_flags.count(a.label)) throw FieldError("long_flags." + a.label, "is missing");
}

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, TunedCell> c) {
  io("folder", c.folder)("exit_code", c.exit_code)("diverged", c.diverged);
  io("val_loss", c.val_loss)("train_loss", c.train_loss)("tuning_loss", c.tuning_loss);
}
NL_JSON_RECORD(TunedCell)

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, TunedTrial> t) {
  io("setting", t.setting)("flags", t.flags)("is_shared", t.is_shared)("cell", t.cell);
}
NL_JSON_RECORD(TunedTrial)

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, TunedRun> r) {
  io("label", r.label)("flags", r.flags)("norm", r.norm)("block", r.block)("recipe", r.recipe);
  io("shared", r.shared)("trials", r.trials);
}
NL_JSON_RECORD(TunedRun)

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, TuningGrid> g) {
  io("axes", g.axes)("dyt_axes", g.dyt_axes);
  io("settings", g.settings)("tune_bytes", g.tune_bytes)("train_bytes", g.train_bytes);
}
NL_JSON_RECORD(TuningGrid)

template <class Io>
void visit_fields(Io& io, FieldsOf<Io, TunedResults> r) {
  io.flat(r.header).number("unigram_loss", r.unigram_loss)("command", r.command);
  io("tuning", r.tuning)("runs", r.runs);
}
NL_JSON_RECORD(TunedResults)

}  // namespace nl
