#include "studies/depth/depth_study.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "nn/norms/registry.h"
#include "studies/depth/depth_analysis.h"
#include "studies/depth/depth_speed.h"
#include "studies/grid/grid.h"
#include "studies/grid/run_spec.h"
#include "studies/instruments/act_stats.h"
#include "studies/instruments/act_stats_observer.h"
#include "studies/report/claims.h"
#include "studies/report/study.h"
#include "studies/report/template.h"
#include "tensor/threads.h"
#include "train/flags/gpt_flags.h"
#include "train/io/files.h"
#include "train/safety/distributed.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;

const char kTemplate[] =
#include "studies/depth/depth.md.in.h"
    ;

// BHyT's released recipe (lambda 2 / 1, a final RMSNorm, c_attn refreshed about 50
// times a run: the kinds' defaults, written out) for both forms, and this project's
// earlier one, labelled as such.
const std::vector<std::string> kVariants = {
    "pre+ln=--block pre --norm ln",
    "pre+rms=--block pre --norm rms",
    "peri+rms=--block peri --norm rms",
    "lns+rms=--block lns --norm rms",
    "pre+bhyt-exact=--block pre --norm bhyt-exact --final-norm rms --bhyt-lambda-attn 2 --bhyt-lambda-mlp 1",
    "pre+bhyt=--block pre --norm bhyt --final-norm rms --bhyt-lambda-attn 2 --bhyt-lambda-mlp 1",
    "pre+bhyt-old=--block pre --norm bhyt --final-norm bhyt --bhyt-lambda 1 --bhyt-lambda-attn 1 "
    "--bhyt-lambda-mlp 1 --bhyt-refresh 1",
};

// Which reference point the paper's depth plot uses, as read in the released
// repository's figure (the paper's text was not at hand).
const char* kPaperReference =
    "The BHyT paper's depth figure (Figure 3 of Byun et al. 2026, shipped in MLAI-Yonsei/BHyT: Llama-1B after 20B "
    "tokens of C4) plots the absolute variance per layer with its index 0 at the first block's output, not at the "
    "embedding: its reference point is block 1's output, the L/1 columns here.";

// What a run is to the claims, from the block and norm its config.json records: a
// Pre-LN baseline, LayerNorm Scaling, a BHyT run, or none of these.
enum class Role { PreLN, LNS, BHyT, Other };

Role role_of(const std::string& block, const std::string& norm) {
  const NormKind& k = norm_kind(norm);
  if (k.approximates_site2 || k.reports_site2) return Role::BHyT;
  if (block == "lns") return Role::LNS;
  if (block == "pre" && k.statistics && !k.ends_bounded()) return Role::PreLN;
  return Role::Other;
}

// ---------------------------------------------------------------- the runs in results.json

json run_json(const DepthRun& r, const std::string& block, const std::string& norm, bool kept) {
  json site2 = json::array();
  for (const Site2Pair& p : r.site2) site2.push_back({p.layer, p.step, p.approx, p.exact});
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(); };
  return {{"depth", r.depth},          {"variant", r.variant},     {"seed", r.seed},
          {"exit_code", r.exit_code},  {"kept", kept},             {"block", block},
          {"norm", norm},              {"kappa", num(r.kappa)},    {"train_loss", num(r.train_loss)},
          {"val_loss", num(r.val_loss)}, {"tok_s", num(r.tok_s)},  {"diverged", r.diverged},
          {"var_init", r.var_init},    {"var_end", r.var_end},     {"site2", site2},
          {"lambda_min", num(r.lambda_min)}, {"lambda_max", num(r.lambda_max)}};
}

double number(const json& v) { return v.is_number() ? v.get<double>() : NAN; }

std::vector<double> numbers(const json& a) {
  std::vector<double> out;
  for (const auto& v : a) out.push_back(number(v));
  return out;
}

// The fields of results.json that run_from_json and the report read (--reuse checks them first).
const ResultSchema kDepthFields = {
    {"recipe", kObject},          {"recipe.bhyt_p", kNumber, true}, {"date", kString},
    {"command", kString},         {"out", kString},                 {"jobs", kInteger},
    {"threads", kInteger},        {"cores", kInteger},              {"cells_run", kInteger},
    {"cells_kept", kInteger},     {"loads", kArray},                {"seconds", kNumber | kNull},
    {"depths", kArray},           {"depths[]", kInteger},           {"seeds", kArray},
    {"seeds[]", kInteger},        {"variants", kArray},             {"plot_script", kString},
    {"speed", kArray | kNull},    {"speed[]", kObject},             {"speed[].config", kString},
    {"speed[].norm", kString},    {"speed[].step_ms", kNumber},     {"speed[].forward_ms", kNumber},
    {"speed_reps", kInteger},     {"runs", kArray},                 {"runs[]", kObject},
    {"runs[].depth", kInteger},   {"runs[].variant", kString},      {"runs[].seed", kInteger},
    {"runs[].exit_code", kInteger}, {"runs[].diverged", kBool},     {"runs[].block", kString},
    {"runs[].norm", kString},     {"runs[].var_init", kArray},      {"runs[].var_end", kArray},
    {"runs[].site2", kArray},     {"runs[].site2[]", kArray},       {"runs[].site2[][0]", kInteger},
    {"runs[].site2[][1]", kInteger}, {"runs[].site2[][2]", kAny},   {"runs[].site2[][3]", kAny},
    {"runs[].kappa", kNumber | kNull}, {"runs[].train_loss", kNumber | kNull}, {"runs[].val_loss", kNumber | kNull},
    {"runs[].tok_s", kNumber | kNull}, {"runs[].lambda_min", kNumber | kNull}, {"runs[].lambda_max", kNumber | kNull}};

DepthRun run_from_json(const json& j) {
  DepthRun r;
  r.depth = j["depth"];
  r.variant = j["variant"];
  r.seed = j["seed"];
  r.exit_code = j["exit_code"];
  r.kappa = number(j["kappa"]);
  r.train_loss = number(j["train_loss"]);
  r.val_loss = number(j["val_loss"]);
  r.tok_s = number(j["tok_s"]);
  r.diverged = j["diverged"];
  r.var_init = numbers(j["var_init"]);
  r.var_end = numbers(j["var_end"]);
  for (const auto& p : j["site2"]) r.site2.push_back({p[0], p[1], number(p[2]), number(p[3])});
  r.lambda_min = number(j["lambda_min"]);
  r.lambda_max = number(j["lambda_max"]);
  return r;
}

// ---------------------------------------------------------------- the report's view

struct Cell {  // the runs of one (depth, variant), over the seeds
  int64_t depth;
  std::string variant;
  Role role;
  std::vector<DepthRun> runs;
};

std::vector<Cell> cells_of(const json& results) {
  std::vector<Cell> cells;
  for (const json& j : results["runs"]) {
    const DepthRun r = run_from_json(j);
    auto it = std::find_if(cells.begin(), cells.end(),
                           [&](const Cell& c) { return c.depth == r.depth && c.variant == r.variant; });
    if (it == cells.end()) {
      cells.push_back({r.depth, r.variant, role_of(j["block"], j["norm"]), {}});
      it = cells.end() - 1;
    }
    it->runs.push_back(r);
  }
  return cells;
}

template <class F>
std::vector<double> over_seeds(const Cell& c, F f) {
  std::vector<double> v;
  for (const DepthRun& r : c.runs) v.push_back(f(r));
  return v;
}

// How many of a cell's seeds did not learn (diverged, or a validation loss not below
// kLearntLoss): a claim resting on such a seed is untestable, never reproduced.
size_t not_learnt(const Cell& c) {
  size_t n = 0;
  for (const DepthRun& r : c.runs) n += r.diverged || !(r.val_loss < kLearntLoss);
  return n;
}

// "did not train in k of n seeds" for the first of the cells with such a seed ("": none).
std::string untrained_why(const std::vector<const Cell*>& cells) {
  for (const Cell* c : cells)
    if (size_t k = not_learnt(*c))
      return c->variant + " did not train in " + std::to_string(k) + " of " + std::to_string(c->runs.size()) +
             " seeds";
  return "";
}

// A row of the "what reproduces" table from a range verdict: held -> reproduced, any other
// -> not reproduced (the other way, or the seeds disagree); untestable when a seed of a
// cell it compares did not train.
json range_claim(const std::string& claim, const std::string& paper, const std::string& here, RangeVerdict v,
                 const std::string& detail, const std::vector<const Cell*>& cells) {
  const std::string why = untrained_why(cells);
  if (!why.empty()) return claim_row(claim, paper, here, "untestable here", detail, why);
  return claim_row(claim, paper, here, v == RangeVerdict::Held ? "reproduced" : "not reproduced", detail);
}

void flat_verdicts(const std::vector<Cell>& cells, const std::vector<int64_t>& depths, json& summary,
                   json& verdicts, json& claims) {
  for (int64_t d : depths) {
    // the Pre-LN baseline: the pre-norm statistics variant whose stream grew least
    const Cell* pre = nullptr;
    for (const Cell& c : cells)
      if (c.depth == d && c.role == Role::PreLN &&
          (!pre || spread_of(over_seeds(c, [](const DepthRun& r) { return growth(r.var_end, 1); })).mean <
                       spread_of(over_seeds(*pre, [](const DepthRun& r) { return growth(r.var_end, 1); })).mean))
        pre = &c;
    if (!pre) continue;
    for (const Cell& c : cells) {
      if (c.depth != d || c.role != Role::BHyT) continue;
      std::string line = std::to_string(d) + " layers, " + c.variant + " against " + pre->variant + ":";
      for (int64_t from : {0, 1}) {
        if (from >= d) continue;  // no growth past block 1 in a one-block model
        auto g = [from](const DepthRun& r) { return growth(r.var_end, from); };
        const RangeVerdict v = compare_ranges(over_seeds(c, g), over_seeds(*pre, g));
        line += std::string(from ? "; " : " ") + "growth from " + (from ? "block 1" : "the embedding") + " " +
                verdict_text(v) + " (" + range_text(over_seeds(c, g), "%.3g") + "x against " +
                range_text(over_seeds(*pre, g), "%.3g") + "x)";
      }
      verdicts.push_back(line);
      summary.push_back("Flat residual stream with depth: " + line);
      // the paper's figure starts at block 1's output (kPaperReference): that growth judges the claim
      if (d < 2) continue;
      auto g1 = [](const DepthRun& r) { return growth(r.var_end, 1); };
      claims.push_back(range_claim(
          "residual-stream variance flat with depth where Pre-LN's grows (" + std::to_string(d) + " layers, " +
              c.variant + " against " + pre->variant + ")",
          "flat from block 1's output (Llama-1B)",
          "growth from block 1 " + range_text(over_seeds(c, g1), "%.3g") + "x against " +
              range_text(over_seeds(*pre, g1), "%.3g") + "x",
          compare_ranges(over_seeds(c, g1), over_seeds(*pre, g1)), line, {&c, pre}));
    }
  }
}

void lns_verdicts(const std::vector<Cell>& cells, json& summary, json& verdicts, json& claims) {
  for (const Cell& b : cells) {
    if (b.role != Role::BHyT) continue;
    const Cell* lns = nullptr;
    for (const Cell& c : cells)
      if (c.depth == b.depth && c.role == Role::LNS) lns = &c;
    if (!lns) continue;
    std::vector<RangeVerdict> per_layer;
    double worst = 0;
    for (int64_t l = 1; l <= b.depth; ++l) {
      auto at = [l](const DepthRun& r) { return (size_t)l < r.var_end.size() ? r.var_end[(size_t)l] : NAN; };
      per_layer.push_back(compare_ranges(over_seeds(b, at), over_seeds(*lns, at)));
      worst = std::max(worst, spread_of(over_seeds(b, at)).max / spread_of(over_seeds(*lns, at)).min);
    }
    const auto count = [&](RangeVerdict v) { return std::count(per_layer.begin(), per_layer.end(), v); };
    const std::string line = std::to_string(b.depth) + " layers, " + b.variant + " against " + lns->variant + ": " +
                             verdict_text(all_layers(per_layer)) + ": below at " +
                             std::to_string(count(RangeVerdict::Held)) + " of " + std::to_string(b.depth) +
                             " layers, above at " + std::to_string(count(RangeVerdict::NotHeld)) + ", overlapping at " +
                             std::to_string(count(RangeVerdict::Unclear)) + "; largest bhyt/lns ratio " +
                             fmt(worst, "%.3g");
    verdicts.push_back(line);
    summary.push_back("Below LayerNorm Scaling: " + line);
    claims.push_back(range_claim("per-layer variance below LayerNorm Scaling's (" + std::to_string(b.depth) +
                                     " layers, " + b.variant + " against " + lns->variant + ")",
                                 "below at every layer when lambda / kappa < 1 / sqrt(L)",
                                 "below at " + std::to_string(count(RangeVerdict::Held)) + " of " +
                                     std::to_string(b.depth) + " layers",
                                 all_layers(per_layer), line, {&b, lns}));
  }
}

void ratio_rows(const std::vector<Cell>& cells, json& rows, json& summary, json& verdicts, json& claims) {
  for (const Cell& c : cells) {
    std::vector<double> a, e, all;
    for (const DepthRun& r : c.runs)
      for (const Site2Pair& p : r.site2) a.push_back(p.approx), e.push_back(p.exact), all.push_back(p.approx / p.exact);
    if (all.empty()) continue;
    for (int64_t l = 0; l < c.depth; ++l) {
      std::vector<double> q;
      for (const DepthRun& r : c.runs)
        for (double v : site2_ratios(r.site2, l)) q.push_back(v);
      const Range rg = range_of(q);
      rows.push_back({{"depth", c.depth}, {"variant", c.variant}, {"layer", l + 1}, {"n", rg.n},
                      {"median", fmt(rg.median, "%.3f")}, {"min", fmt(rg.min, "%.3f")}, {"max", fmt(rg.max, "%.3f")}});
    }
    const double r = pearson(a, e);
    const Range rg = range_of(all);
    const std::string line = std::to_string(c.depth) + " layers, " + c.variant + ": Pearson r = " + fmt(r, "%.4f") +
                             " over " + std::to_string(all.size()) + " (layer, step, seed) pairs, " +
                             verdict_text(r > 0.99 ? RangeVerdict::Held : RangeVerdict::NotHeld) +
                             " against the paper's r > 0.99; approx/exact median " + fmt(rg.median, "%.2f") +
                             ", from " + fmt(rg.min, "%.2f") + " to " + fmt(rg.max, "%.2f");
    verdicts.push_back(line);
    summary.push_back("Approximated vs exact site-2 variance: " + line);
    claims.push_back(range_claim("approximated and exact site-2 variance correlate (" + std::to_string(c.depth) +
                                     " layers, " + c.variant + ")",
                                 "Pearson r > 0.99", "r = " + fmt(r, "%.4f"),
                                 r > 0.99 ? RangeVerdict::Held : RangeVerdict::NotHeld, line, {&c}));
  }
}

// The speed section's norms: the paper's baseline RMSNorm, BHyT* and BHyT. Its view
// tells them apart by what their kinds declare, so that a row read back from
// results.json is placed by its kind, not by its spelling.
const std::vector<std::string> kSpeedNorms = {"rms", "bhyt-exact", "bhyt"};
enum class SpeedRole { Baseline, Exact, Approximated };
SpeedRole speed_role(const std::string& norm) {
  const NormKind& k = norm_kind(norm);
  return k.approximates_site2 ? SpeedRole::Approximated : k.reports_site2 ? SpeedRole::Exact : SpeedRole::Baseline;
}

void speed_view(const json& results, json& view, json& summary, json& claims) {
  const std::string claim = "the approximation is cheaper than BHyT*", paper = "+13.7 % steps/s";
  if (!results["speed"].is_array()) {
    view["speed"] = false;
    claims.push_back(claim_row(claim, paper, "-", "untestable here", "",
                               "this run timed nothing (--speed-steps 0); a run with --speed-steps N times it"));
    return;
  }
  const std::vector<SpeedRow> rows = speed_rows(results["speed"]);
  auto find = [&](const std::string& config, SpeedRole role) -> const SpeedRow* {
    for (const SpeedRow& r : rows)
      if (r.config == config && speed_role(r.norm) == role) return &r;
    return nullptr;
  };
  json speed = json::object();
  speed["speed_tiny_steps"] = 4 * results["speed_reps"].get<int>();
  speed["speed_small_steps"] = results["speed_reps"];
  speed["speed_rows"] = json::array();
  speed["speed_verdicts"] = json::array();
  for (const SpeedRow& r : rows) {
    const SpeedRow *rms = find(r.config, SpeedRole::Baseline), *ex = find(r.config, SpeedRole::Exact);
    speed["speed_rows"].push_back({{"config", r.config},
                                   {"norm", r.norm},
                                   {"step_ms", fmt(r.step_ms, "%.1f")},
                                   {"forward_ms", fmt(r.forward_ms, "%.1f")},
                                   {"vs_rms", rms ? fmt(r.step_ms / rms->step_ms, "%.3f") : "-"},
                                   {"exact_over", ex ? fmt(ex->step_ms / r.step_ms, "%.3f") : "-"}});
  }
  for (const char* cfg : {"tiny", "small"}) {
    const SpeedRow *ap = find(cfg, SpeedRole::Approximated), *ex = find(cfg, SpeedRole::Exact);
    if (!ap || !ex) continue;
    const double gain = ex->step_ms / ap->step_ms - 1.0;
    const std::string v = gain > 0.02    ? "**held** (faster)"
                          : gain < -0.02 ? "**did not hold** (slower)"
                                         : "**did not hold** (no difference beyond 2 %)";
    const std::string line = std::string("steps/s of bhyt over bhyt-exact, ") + cfg + ": " +
                             fmt(100.0 * gain, "%+.1f") + " % (paper: +13.7 %): " + v;
    speed["speed_verdicts"].push_back(line);
    summary.push_back("Approximation cheaper than BHyT*: " + line);
    claims.push_back(claim_row(claim + " (" + cfg + ")", paper, fmt(100.0 * gain, "%+.1f") + " %",
                               gain > 0.02 ? "reproduced" : "not reproduced", line));
  }
  view["speed"] = speed;
  view["speed_seconds"] = fmt(number(results.value("speed_seconds", json())), "%.0f");
}

// The per-layer variances (means over the seeds) the plots draw: one CSV per depth and
// time, "layer,<variant>,...".
void write_variance_csvs(const std::string& out, const std::vector<Cell>& cells, const std::vector<int64_t>& depths) {
  for (int64_t d : depths)
    for (bool end : {false, true}) {
      std::string text = "layer";
      for (const Cell& c : cells)
        if (c.depth == d) text += "," + c.variant;
      text += "\n";
      for (int64_t l = 0; l <= d; ++l) {
        text += std::to_string(l);
        for (const Cell& c : cells)
          if (c.depth == d)
            text += "," + fmt(spread_of(over_seeds(c, [&](const DepthRun& r) {
                                return (size_t)l < r.var_init.size() ? (end ? r.var_end : r.var_init)[(size_t)l] : NAN;
                              })).mean, "%.6g");
        text += "\n";
      }
      write_text_file(out + "/depth_L" + std::to_string(d) + (end ? "_end.csv" : "_init.csv"), text);
    }
}

}  // namespace

namespace {

json depth_view(const json& results, bool plotted) {
  json view = json::object();
  for (const auto& [key, value] : results["recipe"].items()) view[key] = value;
  for (const char* key : {"date", "command", "out", "jobs", "threads", "cores", "cells_run", "cells_kept"})
    view[key] = results[key];
  const std::vector<double> loads = numbers(results["loads"]);
  view["load_min"] = fmt(spread_of(loads).min, "%.1f");
  view["load_max"] = fmt(spread_of(loads).max, "%.1f");
  view["minutes"] = fmt(number(results["seconds"]) / 60.0, "%.1f");
  view["runs"] = results["runs"].size();
  std::vector<int64_t> depths = results["depths"];
  std::string depth_list, seed_list;
  for (int64_t d : depths) depth_list += (depth_list.empty() ? "" : ", ") + std::to_string(d);
  for (const auto& s : results["seeds"])
    seed_list += (seed_list.empty() ? "" : ", ") + std::to_string(s.get<int64_t>());
  view["depths"] = depth_list;
  view["seeds"] = seed_list;
  view["seed_count"] = results["seeds"].size();
  view["variants"] = results["variants"];
  view["learnt"] = fmt(kLearntLoss, "%.1f");
  view["paper_reference"] = kPaperReference;
  const double p = results["recipe"].value("bhyt_p", 0.99);
  view["bhyt_p"] = fmt(p, "%.3g");
  view["kappa"] = fmt(1.0 / std::sqrt(1.0 - p), "%.3g");
  view["plot_script"] = results["plot_script"];
  view["plotted"] = plotted;

  const std::vector<Cell> cells = cells_of(results);
  json loss_rows = json::array(), growth_rows = json::array(), lambda_rows = json::array();
  json not_learnt = json::array();
  for (const Cell& c : cells) {
    auto val = over_seeds(c, [](const DepthRun& r) { return r.val_loss; });
    int learnt = 0;
    for (double v : val) learnt += v < kLearntLoss;
    loss_rows.push_back({{"depth", c.depth},
                         {"variant", c.variant},
                         {"train", range_text(over_seeds(c, [](const DepthRun& r) { return r.train_loss; }), "%.4f")},
                         {"val", range_text(val, "%.4f")},
                         {"learnt", std::to_string(learnt) + " of " + std::to_string(c.runs.size())}});
    if (learnt < (int)c.runs.size())
      not_learnt.push_back(std::to_string(c.depth) + " layers " + c.variant + " (" +
                           std::to_string(c.runs.size() - learnt) + " of " + std::to_string(c.runs.size()) +
                           " seeds)");
    auto g = [](int64_t from, bool end) {
      return [from, end](const DepthRun& r) { return growth(end ? r.var_end : r.var_init, from); };
    };
    growth_rows.push_back(
        {{"depth", c.depth},
         {"variant", c.variant},
         {"g0_init", range_text(over_seeds(c, g(0, false)), "%.3g")},
         {"g0_end", range_text(over_seeds(c, g(0, true)), "%.3g")},
         {"g1_init", range_text(over_seeds(c, g(1, false)), "%.3g")},
         {"g1_end", range_text(over_seeds(c, g(1, true)), "%.3g")},
         {"v_end", range_text(over_seeds(c, [](const DepthRun& r) { return r.var_end.back(); }), "%.3g")}});
    if (c.role == Role::BHyT)
      for (const DepthRun& r : c.runs) {
        const double bound = 1.0 / std::sqrt((double)c.depth);
        const double ratio = std::max(std::fabs(r.lambda_min), std::fabs(r.lambda_max)) / r.kappa;
        lambda_rows.push_back({{"depth", c.depth},
                               {"variant", c.variant},
                               {"seed", r.seed},
                               {"min", fmt(r.lambda_min, "%.3f")},
                               {"max", fmt(r.lambda_max, "%.3f")},
                               {"ratio", fmt(ratio, "%.3f")},
                               {"bound", fmt(bound, "%.3f")},
                               {"holds", lambda_condition(std::max(std::fabs(r.lambda_min), std::fabs(r.lambda_max)),
                                                          r.kappa, c.depth)
                                             ? "holds"
                                             : "violated"}});
      }
  }
  view["loss_rows"] = loss_rows;
  view["growth_rows"] = growth_rows;
  view["lambda_rows"] = lambda_rows;
  view["not_learnt"] = not_learnt.empty() ? json(false) : json(not_learnt);
  json summary = json::array(), growth_verdicts = json::array(), lns = json::array(), ratios = json::array(),
       ratio_verdicts = json::array(), claims = json::array();
  flat_verdicts(cells, depths, summary, growth_verdicts, claims);
  lns_verdicts(cells, summary, lns, claims);
  ratio_rows(cells, ratios, summary, ratio_verdicts, claims);
  speed_view(results, view, summary, claims);
  view["claims"] = claims;
  view["growth_verdicts"] = growth_verdicts;
  view["lns_verdicts"] = lns;
  view["ratio_rows"] = ratios;
  view["ratio_verdicts"] = ratio_verdicts;
  view["summary"] = summary;
  json plots = json::array();
  if (plotted)
    for (int64_t d : depths) plots.push_back({{"depth", d}, {"file", "depth_L" + std::to_string(d) + ".png"}});
  view["plots"] = plots;
  return view;
}

}  // namespace

std::string render_depth_report(const json& results, bool plotted) {
  return render_template(kTemplate, depth_view(results, plotted), "studies/depth/depth.md.in");
}

json depth_claims(const json& results) {
  check_results_schema(results, kDepthFields, "depth_claims", "the depth study's results");
  return depth_view(results, false)["claims"];
}

int depth_study_main(const std::vector<std::string>& args) {
  FlagParser p("depth_study",
               "Train deep-narrow GPTs with each block/norm variant at each depth and seed, and write the BHyT depth "
               "report. Every train_gpt flag but those the grid sets (--layers, --seed, --block, --norm) sets the "
               "recipe of every run.");
  GPTRunConfig base;
  base.model.dim = 128, base.model.heads = 4, base.model.context = 64;
  base.batch = 16, base.steps = 600, base.warmup = 30, base.eval_every = 100, base.eval_batches = 10;
  add_study_recipe_flags(p, base, add_gpt_run_flags, "runs/depth", {"--layers", "--seed", "--block", "--norm"});
  ActStatsSettings stats{50, 16};
  add_act_stats_flags(p, stats);
  std::vector<int64_t> depths = {8, 16}, seeds = {1337, 1338, 1339};
  std::vector<std::string> variant_texts = kVariants;
  int jobs = 0, speed_reps = 5;
  bool speed_only = false, reuse = false, dry_run = false;
  double step_ms = 87;
  std::string doc = "docs/results/depth.md", plot_script = "scripts/plot_depth.sh";
  p.integer_list("--depths", depths, 1, 256, "numbers of layers");
  add_seeds_flag(p, seeds, "depth and variant");
  p.list("--arms", variant_texts, "the runs per depth and seed, LABEL=FLAGS (flags separated by spaces)");
  p.alias("--arms", "--variants");
  add_study_run_flags(p, jobs, reuse);
  p.integer("--speed-steps", speed_reps, 0, 10000,
            "timed steps per norm of `small` in the speed section (tiny: 4x); 0: no section", FlagRole::Setting);
  p.toggle("--speed", speed_only, "only time bhyt, bhyt-exact and rms on tiny and small, print the table, and stop",
           FlagRole::Control);
  add_report_flags(p, doc, plot_script, "the per-layer plots");
  add_dry_run_flag(p, dry_run);
  add_step_ms_flag(p, step_ms, "the demo GPT (4 layers; a cell of L layers costs L / 4 of it)");
  std::vector<RunSpec> variants;
  p.check([&] { variants = parse_run_specs(variant_texts); });
  if (!p.parse(args)) return 0;
  // the study's own flags (its axes, --jobs, ...) and the grid runner's --threads stay out
  // of each run's command line
  const std::vector<std::string> own = gpt_study_own_keys(p, {"threads"});
  const std::string out = base.out_dir;
  if (speed_only) {
    NL_CHECK(speed_reps > 0, "--speed needs --speed-steps > 0");
    set_num_threads(base.threads);
    const json rows = speed_json(measure_norm_speed(kSpeedNorms, speed_reps, base.seed));
    std::printf("%s\n", rows.dump(1).c_str());
    return 0;
  }
  NL_CHECK(!dry_run || !reuse, "--dry-run prices runs to train; --reuse trains none: give one of them");
  // the report's folder must take a file before hours of training go into it
  const fs::path doc_dir = fs::path(doc).has_parent_path() ? fs::path(doc).parent_path() : fs::path(".");
  check_doc_folder(doc);

  json results;
  if (reuse) {
    results = read_study_results(out, kDepthFields);
  } else {
    const auto start = StudyClock::now();
    std::vector<double> loads = {load_average()};
    const auto recipe = p.values();
    std::vector<GridCell> cells;
    for (int64_t d : depths)
      for (int64_t seed : seeds)
        for (const RunSpec& v : variants) {
          GridCell cell;
          cell.label = "L" + std::to_string(d) + " " + v.label + " s" + std::to_string(seed);
          cell.program = "train_gpt";
          cell.args = flags_from_values(recipe, own);
          cell.args.insert(cell.args.end(), v.args.begin(), v.args.end());
          for (const std::string& a :
               {std::string("--layers"), std::to_string(d), std::string("--seed"), std::to_string(seed)})
            cell.args.push_back(a);
          cell.out_dir = out + "/L" + std::to_string(d) + "/" + v.label + "/s" + std::to_string(seed);
          cell.cost = (double)d / 4.0;  // against the demo GPT's 4 layers (the ETA reads only ratios)
          cells.push_back(cell);
        }
    if (dry_run) {
      print_grid_plan("depth_study", cells, jobs, step_ms, " in " + out);
      return 0;
    }
    const auto summarize = [&](size_t i, const CellOutcome& outcome, const nlohmann::ordered_json& config) {
      const json& res = outcome.result;
      DepthRun r;
      r.depth = config["layers"];
      r.seed = config["seed"];
      r.variant = variants[i % variants.size()].label;
      r.exit_code = outcome.exit_code;
      const std::string norm = config["norm"], block = config["block"];
      const NormKind& kind = norm_kind(norm);
      r.kappa = kind.approximates_site2 || kind.reports_site2 ? 1.0 / std::sqrt(1.0 - config.value("bhyt_p", 0.99))
                                                              : NAN;
      r.train_loss = res.is_object() ? res.value("final_train_loss", NAN) : NAN;
      r.val_loss = res.is_object() ? res.value("val_loss", NAN) : NAN;
      r.tok_s = res.is_object() ? res.value("tok_per_s", NAN) : NAN;
      r.diverged = r.exit_code != 0 || !res.is_object() || res.value("diverged", true);
      if (r.exit_code == 0) read_depth_run(cells[i].out_dir, r);
      return run_json(r, block, norm, outcome.kept);
    };
    const std::vector<CellOutcome> outcomes = run_study_grid("depth study", cells, jobs, base.threads, summarize);
    if (!dist::is_lead()) return 0;  // the lead rank has every cell's summary and writes the report
    loads.push_back(load_average());
    results = json::object();
    put_grid_outcomes(results, outcomes);
    results["seconds"] = seconds_since(start);
    results["speed"] = nullptr;
    results["speed_reps"] = speed_reps;
    if (speed_reps > 0) {
      std::printf("speed section ...\n");
      std::fflush(stdout);
      const auto t0 = StudyClock::now();
      set_num_threads(base.threads);
      results["speed"] = speed_json(measure_norm_speed(kSpeedNorms, speed_reps, base.seed));
      results["speed_seconds"] = seconds_since(t0);
      loads.push_back(load_average());
    }
    put_study_header(results, study_command("build/release/depth_study", args), out, jobs, base.threads, loads, recipe);
    results["depths"] = depths;
    results["seeds"] = seeds;
    results["variants"] = run_specs_json(variants);
    results["plot_script"] = plot_script;
    results["study"] = "depth";
    write_text_file(out + "/results.json", results.dump(1) + "\n");
  }
  const std::vector<Cell> cells = cells_of(results);
  write_variance_csvs(out, cells, results["depths"]);
  bool plotted = !plot_script.empty();
  for (int64_t d : results["depths"].get<std::vector<int64_t>>()) {
    const std::string stem = out + "/depth_L" + std::to_string(d);
    const std::string png = (doc_dir / ("depth_L" + std::to_string(d) + ".png")).string();
    const std::string cmd = "bash '" + plot_script + "' '" + png + "' 'Residual-stream variance per layer, " +
                            std::to_string(d) + " layers (means over seeds)' '" + stem + "_init.csv' '" + stem +
                            "_end.csv' > /dev/null 2>&1";
    plotted = plotted && std::system(cmd.c_str()) == 0;
  }
  write_text_file(doc, render_depth_report(results, plotted));
  // the results beside the page, for what_reproduces (studies/reproduces/reproduces.h)
  write_text_file((doc_dir / (fs::path(doc).stem().string() + ".json")).string(), results.dump(1) + "\n");
  std::printf("wrote %s\n", doc.c_str());
  return 0;
}

}  // namespace nl
