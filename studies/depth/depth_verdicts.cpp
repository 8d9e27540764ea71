#include "studies/depth/depth_verdicts.h"

#include <algorithm>
#include <cmath>

#include "nn/norms/registry.h"
#include "studies/instruments/act_stats.h"
#include "studies/report/claims.h"
#include "studies/report/study.h"

namespace nl {

namespace {

using json = nlohmann::json;

// How many of a cell's seeds did not learn (diverged, or a validation loss not below
// kLearntLoss): a claim resting on such a seed is untestable, never reproduced.
size_t not_learnt(const DepthCell& c) {
  size_t n = 0;
  for (const DepthRun& r : c.runs) n += r.diverged || !(r.val_loss < kLearntLoss);
  return n;
}

// "did not train in k of n seeds" for the first of the cells with such a seed ("": none).
std::string untrained_why(const std::vector<const DepthCell*>& cells) {
  for (const DepthCell* c : cells)
    if (size_t k = not_learnt(*c))
      return c->variant + " did not train in " + std::to_string(k) + " of " + std::to_string(c->runs.size()) +
             " seeds";
  return "";
}

// A row of the "what reproduces" table from a range verdict: held -> reproduced, any other
// -> not reproduced (the other way, or the seeds disagree); untestable when a seed of a
// cell it compares did not train.
json range_claim(const std::string& claim, const std::string& paper, const std::string& here, RangeVerdict v,
                 const std::string& detail, const std::vector<const DepthCell*>& cells) {
  const std::string why = untrained_why(cells);
  if (!why.empty()) return claim_row(claim, paper, here, "untestable here", detail, why);
  return claim_row(claim, paper, here, v == RangeVerdict::Held ? "reproduced" : "not reproduced", detail);
}

void flat_verdicts(const std::vector<DepthCell>& cells, const std::vector<int64_t>& depths, json& summary,
                   json& verdicts, json& claims) {
  for (int64_t d : depths) {
    // the Pre-LN baseline: the pre-norm statistics variant whose stream grew least
    const DepthCell* pre = nullptr;
    for (const DepthCell& c : cells)
      if (c.depth == d && c.role == DepthRole::PreLN &&
          (!pre || spread_of(over_seeds(c, [](const DepthRun& r) { return growth(r.var_end, 1); })).mean <
                       spread_of(over_seeds(*pre, [](const DepthRun& r) { return growth(r.var_end, 1); })).mean))
        pre = &c;
    if (!pre) continue;
    for (const DepthCell& c : cells) {
      if (c.depth != d || c.role != DepthRole::BHyT) continue;
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

void lns_verdicts(const std::vector<DepthCell>& cells, json& summary, json& verdicts, json& claims) {
  for (const DepthCell& b : cells) {
    if (b.role != DepthRole::BHyT) continue;
    const DepthCell* lns = nullptr;
    for (const DepthCell& c : cells)
      if (c.depth == b.depth && c.role == DepthRole::LNS) lns = &c;
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

void ratio_rows(const std::vector<DepthCell>& cells, json& rows, json& summary, json& verdicts, json& claims) {
  for (const DepthCell& c : cells) {
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

// The speed section's rows are told apart by what their kinds declare, so that a row read
// back from results.json is placed by its kind, not by its spelling.
enum class SpeedRole { Baseline, Exact, Approximated };
SpeedRole speed_role(const std::string& norm) {
  const NormKind& k = norm_kind(norm);
  return k.approximates_site2 ? SpeedRole::Approximated : k.reports_site2 ? SpeedRole::Exact : SpeedRole::Baseline;
}

void speed_view(const DepthResults& results, json& view, json& summary, json& claims) {
  const std::string claim = "the approximation is cheaper than BHyT*", paper = "+13.7 % steps/s";
  if (!results.speed) {
    view["speed"] = false;
    claims.push_back(claim_row(claim, paper, "-", "untestable here", "",
                               "this run timed nothing (--speed-steps 0); a run with --speed-steps N times it"));
    return;
  }
  const std::vector<SpeedRow>& rows = *results.speed;
  auto find = [&](const std::string& config, SpeedRole role) -> const SpeedRow* {
    for (const SpeedRow& r : rows)
      if (r.config == config && speed_role(r.norm) == role) return &r;
    return nullptr;
  };
  json speed = json::object();
  speed["speed_tiny_steps"] = 4 * results.speed_reps;
  speed["speed_small_steps"] = results.speed_reps;
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
  view["speed_seconds"] = fmt(results.speed_seconds, "%.0f");
}

}  // namespace

DepthRole depth_role(const std::string& block, const std::string& norm) {
  const NormKind& k = norm_kind(norm);
  if (k.approximates_site2 || k.reports_site2) return DepthRole::BHyT;
  if (block == "lns") return DepthRole::LNS;
  if (block == "pre" && k.statistics && !k.ends_bounded()) return DepthRole::PreLN;
  return DepthRole::Other;
}

std::vector<DepthCell> depth_cells(const std::vector<DepthCellSummary>& runs) {
  std::vector<DepthCell> cells;
  for (const DepthCellSummary& s : runs) {
    const DepthRun& r = s.run;
    auto it = std::find_if(cells.begin(), cells.end(),
                           [&](const DepthCell& c) { return c.depth == r.depth && c.variant == r.variant; });
    if (it == cells.end()) {
      cells.push_back({r.depth, r.variant, depth_role(s.block, s.norm), {}});
      it = cells.end() - 1;
    }
    it->runs.push_back(r);
  }
  return cells;
}

DepthVerdicts depth_verdicts(const std::vector<DepthCell>& cells, const DepthResults& results) {
  DepthVerdicts v;
  json growth = json::array(), lns = json::array(), ratios = json::array(), ratio_verdicts = json::array();
  flat_verdicts(cells, results.depths, v.summary, growth, v.claims);
  lns_verdicts(cells, v.summary, lns, v.claims);
  ratio_rows(cells, ratios, v.summary, ratio_verdicts, v.claims);
  speed_view(results, v.view, v.summary, v.claims);
  v.view["growth_verdicts"] = growth;
  v.view["lns_verdicts"] = lns;
  v.view["ratio_rows"] = ratios;
  v.view["ratio_verdicts"] = ratio_verdicts;
  return v;
}

}  // namespace nl
