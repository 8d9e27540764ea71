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

DepthCellSummary DepthCellSummary::from_json(const RecordReader& r) {
  DepthCellSummary s;
  DepthRun& run = s.run;
  run.depth = r["depth"].integer();
  run.variant = r["variant"].text();
  run.seed = (uint64_t)r["seed"].integer();
  run.exit_code = (int)r["exit_code"].integer();
  s.kept = r["kept"].boolean();
  s.block = r["block"].text();
  s.norm = r["norm"].text();
  run.kappa = r["kappa"].number();
  run.train_loss = r["train_loss"].number();
  run.val_loss = r["val_loss"].number();
  run.tok_s = r["tok_s"].number();
  run.diverged = r["diverged"].boolean();
  run.var_init = r["var_init"].numbers();
  run.var_end = r["var_end"].numbers();
  // a finished run has both profiles, one value per layer and the embedding; a failed one neither
  for (const char* key : {"var_init", "var_end"}) {
    const size_t n = (key[4] == 'i' ? run.var_init : run.var_end).size();
    if (n != 0 && n != (size_t)run.depth + 1)
      r[key].fail_because("has " + std::to_string(n) + " values, not " + std::to_string(run.depth + 1) +
                  " (the embedding and each of " + std::to_string(run.depth) + " layers) nor none");
  }
  for (const RecordReader& p : r["site2"].elements())
    run.site2.push_back({p[0].integer(), p[1].integer(), p[2].number(), p[3].number()});
  run.lambda_min = r["lambda_min"].number();
  run.lambda_max = r["lambda_max"].number();
  return s;
}

namespace {

// A speed row's fields, spelled once for the writer and the reader.
json speed_row_json(const SpeedRow& r) {
  return {{"config", r.config}, {"norm", r.norm}, {"step_ms", r.step_ms}, {"forward_ms", r.forward_ms}};
}
SpeedRow speed_row_from(const RecordReader& s) {
  return {s["config"].text(), s["norm"].text(), s["step_ms"].number(), s["forward_ms"].number()};
}

}  // namespace

json speed_json(const std::vector<SpeedRow>& rows) {
  json j = json::array();
  for (const SpeedRow& row : rows) j.push_back(speed_row_json(row));
  return j;
}

json DepthResults::to_json() const {
  json j = {{"study", "depth"},   {"date", date},       {"command", command},       {"out", out},
            {"jobs", jobs},       {"threads", threads}, {"cores", cores},           {"loads", loads},
            {"recipe", recipe},   {"cells_run", cells_run}, {"cells_kept", cells_kept},
            {"seconds", seconds}, {"depths", depths},   {"seeds", seeds},           {"plot_script", plot_script},
            {"speed_reps", speed_reps}};
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

DepthResults DepthResults::from_json(const RecordReader& r) {
  DepthResults d;
  d.date = r["date"].text(), d.command = r["command"].text(), d.out = r["out"].text();
  d.jobs = r["jobs"].integer(), d.threads = r["threads"].integer(), d.cores = r["cores"].integer();
  d.loads = r["loads"].numbers();
  d.recipe = r["recipe"].object();
  if (r["recipe"].has("bhyt_p")) r["recipe"]["bhyt_p"].as(kNumber);
  d.cells_run = r["cells_run"].integer(), d.cells_kept = r["cells_kept"].integer();
  d.seconds = r["seconds"].number();
  d.depths = r["depths"].integers(), d.seeds = r["seeds"].integers();
  for (const RecordReader& a : r["variants"].elements()) d.arms.push_back({a["label"].text(), a["flags"].text()});
  for (const RecordReader& s : r["runs"].elements()) d.runs.push_back(DepthCellSummary::from_json(s));
  d.plot_script = r["plot_script"].text();
  d.speed_reps = r["speed_reps"].integer();
  if (!r["speed"].as(kArray | kNull).is_null()) {
    d.speed.emplace();
    for (const RecordReader& s : r["speed"].elements()) d.speed->push_back(speed_row_from(s));
    if (r.has("speed_seconds")) d.speed_seconds = r["speed_seconds"].number();
  }
  return d;
}

DepthResults read_depth_results(const std::string& out) {
  const json doc = read_study_results(out, {});
  return DepthResults::from_json(RecordReader(doc, "--reuse: " + out + "/results.json"));
}

}  // namespace nl
