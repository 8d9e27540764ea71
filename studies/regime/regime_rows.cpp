// The regime report's rows and the verdict on each (studies/regime/regime_rows.h).
#include "studies/regime/regime_rows.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "nn/norms/registry.h"
#include "studies/instruments/screening.h"
#include "studies/regime/regime_study.h"
#include "studies/report/claims.h"
#include "studies/report/study.h"
#include "studies/report/verdicts.h"

namespace nl {

using json = nlohmann::json;

// ---------------------------------------------------------------- the verdict rules

ClaimVerdict alpha0_direction(const std::string& size, double alpha_low, double alpha_high, double paper_low,
                              double paper_high, const PairedComparison& high_vs_low, int not_trained) {
  const std::string low = fmt(alpha_low, "%g"), high = fmt(alpha_high, "%g");
  const std::string claim = "on " + size + ", alpha0 " + low + " to " + high + ": ";
  if (not_trained > 0)  // a stuck seed is evidence for no direction
    return {Verdict::Untestable, claim + "did not train in " + std::to_string(not_trained) + " of the two arms' seeds"};
  const std::string here = "alpha0 " + high + " against " + low + " " + pct(high_vs_low.percent) + ", " +
                           std::to_string(high_vs_low.wins) + "/" + std::to_string(high_vs_low.n) + " seeds lower";
  if (!std::isfinite(paper_low) || !std::isfinite(paper_high))
    return {Verdict::Untestable, claim + "the paper has no number at this subset; here " + here};
  if (paper_low == paper_high) return {Verdict::Untestable, claim + "the paper's change does not move; here " + here};
  // the paper's largest alpha0 ends below its smallest when its change against the same LN
  // is lower; its own alpha0-against-alpha0 change is the ratio of (1 + change) of the two
  const bool paper_falls = paper_high < paper_low;
  const double paper_ratio = 100.0 * ((1.0 + paper_high / 100.0) / (1.0 + paper_low / 100.0) - 1.0);
  const std::string paper = "paper " + pct(paper_low) + " to " + pct(paper_high) + " against LN (" +
                            (paper_falls ? "falls" : "rises") + " with alpha0; " + high + " against " + low + " " +
                            pct(paper_ratio) + ")";
  if (high_vs_low.n == 0) return {Verdict::Untestable, claim + paper + "; here no seed ran both"};
  const Paired expected = paper_falls ? Paired::Helps : Paired::Hurts;
  const Verdict v = high_vs_low.verdict == expected ? Verdict::Reproduced : Verdict::NotReproduced;
  const std::string how = high_vs_low.verdict == expected        ? "the paper's direction at every seed"
                          : high_vs_low.verdict == Paired::Mixed ? "mixed over seeds"
                                                                 : "the other direction at every seed";
  return {v, claim + paper + "; here " + here + ": " + how};
}

std::string regime_row_status(const std::vector<bool>& failed, const std::vector<Curve>& curves) {
  int n_failed = 0, n_stuck = 0, n_overfit = 0;
  for (size_t i = 0; i < curves.size(); ++i) {
    if (i < failed.size() && failed[i]) {
      ++n_failed;
      continue;
    }
    const Overfit o = overfit_of(curves[i]);
    if (!(o.min_value <= kStuckLoss))
      ++n_stuck;  // NaN (no point) counts as stuck
    else if (o.overfits)
      ++n_overfit;
  }
  std::string out;
  auto add = [&out](int n, const char* what) {
    if (n) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(n_failed, "failed");
  add(n_stuck, "stuck near unigram");
  add(n_overfit, "over-fit");
  return out.empty() ? "ok" : out;
}

bool collapsed(bool failed, double train_end, const Curve& val_curve) {
  if (failed) return true;
  if (!std::isnan(train_end)) return !(train_end <= kStuckLoss);
  return !(overfit_of(val_curve).min_value <= kStuckLoss);  // NaN (no point) counts as collapsed
}

std::string chance_at_paper_rate(CollapseCount c) {
  if (c.runs == 0 || (c.collapsed != 0 && c.collapsed != c.runs)) return "";
  // no seed collapsing, or every one: how often the paper's own rate would give that
  const double p = std::pow(c.collapsed == 0 ? 1.0 - kPaperCollapseRate : kPaperCollapseRate, c.runs);
  return "; at that rate " + std::string(c.collapsed == 0 ? "no collapse" : "a collapse in every seed") + " in " +
         std::to_string(c.runs) + " seeds happens " + fmt(100.0 * p, "%.2g") + " % of the time";
}

std::vector<ClaimVerdict> llama_verdicts(const std::string& size, CollapseCount swiglu, CollapseCount gelu,
                                         DataRegime regime) {
  auto of = [](CollapseCount c) { return std::to_string(c.collapsed) + " of " + std::to_string(c.runs); };
  std::vector<ClaimVerdict> out;
  if (swiglu.runs == 0) return out;
  if (regime != DataRegime::Scarce && regime != DataRegime::Rich)
    out.push_back({Verdict::Untestable, "Llama + DyT (SwiGLU) collapsing, " + size +
                                            ": the paper ran it at 1M and 118M "
                                            "tokens, and " +
                                            size + " matches neither (" + of(swiglu) + " seeds collapsed)"});
  // the paper's claim is a collapse in some seeds (1 of 3): every seed collapsing is another finding
  else if (swiglu.collapsed == swiglu.runs)
    out.push_back({Verdict::NotReproduced, "Llama + DyT (SwiGLU) collapses in every seed, not in some, " + size + ": " +
                                               of(swiglu) + " seeds collapsed (paper: 1 of 3" +
                                               chance_at_paper_rate(swiglu) + ")"});
  else
    out.push_back({swiglu.collapsed > 0 ? Verdict::Reproduced : Verdict::NotReproduced,
                   "Llama + DyT (SwiGLU) collapses in some seeds, " + size + ": " + of(swiglu) +
                       " seeds collapsed (paper: 1 of 3" + chance_at_paper_rate(swiglu) + ")"});
  if (gelu.runs == 0) return out;
  const std::string counts = "GELU " + of(gelu) + " collapsed against SwiGLU's " + of(swiglu);
  if (regime != DataRegime::Rich)
    out.push_back({Verdict::Untestable, "A GELU MLP rescuing Llama + DyT, " + size +
                                            ": the paper tested the rescue "
                                            "only with much data (118M tokens, 1.4 passes), and " +
                                            size + " is " + regime_name(regime) + " (" + counts + ")"});
  else if (swiglu.collapsed == 0)
    out.push_back({Verdict::Untestable, "A GELU MLP rescuing Llama + DyT, " + size +
                                            ": SwiGLU + DyT never collapsed, "
                                            "so there was nothing to rescue (" +
                                            counts + ")"});
  else
    out.push_back({gelu.collapsed < swiglu.collapsed ? Verdict::Reproduced : Verdict::NotReproduced,
                   "A GELU MLP in place of SwiGLU rescues Llama + DyT, " + size + ": " + counts + " (paper: rescued)"});
  return out;
}

ClaimVerdict arm_claim(const std::string& what, double paper_percent, const PairedComparison& primary, int not_trained,
                       int seeds) {
  const std::string paper = "paper " + pct(paper_percent);
  if (not_trained > 0)
    return {Verdict::Untestable, what + ": did not train in " + std::to_string(not_trained) + " of " +
                                     std::to_string(seeds) + " seeds (" + paper + ")"};
  if (primary.n > 0 && primary.n < kMinSeeds)
    return {Verdict::Untestable, what + ": " + std::to_string(primary.n) + " paired seed(s), fewer than " +
                                     std::to_string(kMinSeeds) + " (" + paper + ", here " + pct(primary.percent) + ")"};
  if (!std::isfinite(paper_percent) || primary.n == 0)
    return {Verdict::Untestable, what + ": " + (primary.n == 0 ? "no seed ran both arms" : "no paper number")};
  const bool paper_helps = paper_percent < 0;
  const bool every_seed_agrees = primary.verdict == (paper_helps ? Paired::Helps : Paired::Hurts);
  const std::string here = "here " + pct(primary.percent) + ", " + std::to_string(primary.wins) + "/" +
                           std::to_string(primary.n) + " seeds lower";
  return {every_seed_agrees ? Verdict::Reproduced : Verdict::NotReproduced, what + ": " + paper + ", " + here};
}

ClaimVerdict vit_claim(const std::string& what, double paper_points, double points, const PairedComparison& best_error,
                       int not_trained, int seeds) {
  const std::string paper = "paper " + fmt(paper_points, "%+.1f") + " points";
  const std::string here = "here " + fmt(points, "%+.1f") + " points, " + std::to_string(best_error.wins) + "/" +
                           std::to_string(best_error.n) + " seeds higher";
  if (not_trained > 0)
    return {Verdict::Untestable, what + ": did not train in " + std::to_string(not_trained) + " of " +
                                     std::to_string(seeds) + " seeds (" + paper + ")"};
  if (!std::isfinite(paper_points) || best_error.n == 0)
    return {Verdict::Untestable, what + ": " + (best_error.n == 0 ? "no seed ran both arms" : "no paper number")};
  if (best_error.n < kMinSeeds)
    return {Verdict::Untestable, what + ": " + std::to_string(best_error.n) + " paired seed(s), fewer than " +
                                     std::to_string(kMinSeeds) + " (" + paper + ", " + here + ")"};
  // a higher accuracy is a lower error: the paper's gain is every seed's error lower
  const bool every_seed_agrees = best_error.verdict == (paper_points > 0 ? Paired::Helps : Paired::Hurts);
  return {every_seed_agrees ? Verdict::Reproduced : Verdict::NotReproduced, what + ": " + paper + ", " + here};
}

std::string claim_status(Verdict v, bool scarce, const PairedComparison& end, double paper_percent) {
  if (v == Verdict::Reproduced) return "reproduced";
  if (v == Verdict::Untestable) return "untestable here";
  const Paired paper_way = paper_percent < 0 ? Paired::Helps : Paired::Hurts;
  return scarce && std::isfinite(paper_percent) && end.verdict == paper_way ? "artefact" : "not reproduced";
}

bool vit_did_not_train(bool failed, double best_accuracy, double chance, double ln_best) {
  if (failed || !std::isfinite(best_accuracy)) return true;
  return best_accuracy - chance < kTrainedShare * (ln_best - chance);
}

std::string screen_untestable(const std::vector<ScreenCell>& cells, double threshold) {
  int helps = 0, judged = 0;
  for (const ScreenCell& c : cells)
    if (std::isfinite(c.saturation)) ++judged, helps += c.saturation > threshold;
  if (judged == 0) return "untestable: no cell has a saturation";
  if (helps == judged) return "untestable: it predicted helps in every cell";
  if (helps == 0) return "untestable: it predicted does not help in every cell";
  return "";
}

// ---------------------------------------------------------------- the rows

namespace {

// The paper's numbers (Verma 2026, as read in lucky-verma/dyt-composition-study's
// results manifest, results/full/manifests/paper_sources.json): each arm's change of the
// validation loss against LayerNorm at 5000 steps (64M parameters) in its data-scarce
// cell (1M tokens, about 164 passes), its 10M-token cell (16.4 passes), and its two
// data-rich cells (50M tokens, 3.3 passes; 118M tokens, 1.4 passes: the verdict's).
struct PaperArm {
  const char* label;
  double scarce, mid, rich50, rich;  // percent; NaN: not in the paper
  const char* source;
  double alpha0;  // the all-DyT arms of the paper's alpha0 sweep; NaN for the others
  // how our arm differs from the paper's, named in every claim it makes ("": it does not)
  const char* differs = "";
  double in(DataRegime r) const {
    return r == DataRegime::Scarce ? scarce : r == DataRegime::Mid ? mid : r == DataRegime::Rich ? rich : NAN;
  }
};
const PaperArm kPaperArms[] = {
    {"dyt-a0.5", -33.6, NAN, NAN, 42.0, "alpha0 sweep: 1M 6.187 vs 9.319 (2 seeds); 118M +42.0 % (3 seeds)", 0.5},
    {"dyt-a1", -34.1, NAN, NAN, 31.4, "alpha0 sweep: 1M 6.138 vs 9.319; 118M +31.4 %", 1},
    {"dyt-a2", -27.3, 5.9, 19.6, 18.8,
     "phase table: 1M 6.819 vs 9.384; 10M 4.510 vs 4.260; 50M 4.386 vs 3.666; 118M 4.313 vs 3.631 (3 seeds)", 2},
    {"dyt-a3", -20.5, NAN, NAN, 15.5, "alpha0 sweep: 1M 7.409 vs 9.319; 118M +15.5 %", 3},
    {"hardtanh-a1", -33.4, 9.4, NAN, 25.6,
     "HardTanh control: 1M 6.246 vs 9.384; 10M 4.660 vs 4.260; 118M 4.562 vs 3.631 (no alpha)", NAN,
     "ours learns an alpha, the paper's has none"},
    {"ln-drop0.1", NAN, NAN, NAN, 1.2, "dropout control at 118M only: 3.676 vs 3.631", NAN},
    {"ln-drop0.3", NAN, NAN, NAN, 9.5, "dropout control at 118M only: 3.975", NAN},
    {"ln-drop0.5", NAN, NAN, NAN, 18.3, "dropout control at 118M only: 4.295 (DyT 4.313)", NAN},
    {"diff", 1.1, -13.0, -7.8, -7.5,
     "phase table, DiffAttn: 1M 9.490 vs 9.384; 10M 3.706 vs 4.260; 50M 3.380 vs 3.666; 118M 3.359 vs 3.631", NAN},
};
// The paper's ViT result: DyT +8.8 points of best validation accuracy over LN (CIFAR-10
// ViT-Small, one seed: 81.2 % against 72.4 %).
constexpr double kPaperVitPoints = 8.8;

const PaperArm* paper_arm(const std::string& label) {
  for (const PaperArm& a : kPaperArms)
    if (label == a.label) return &a;
  return nullptr;
}

double end_loss(const ReportRun& r) { return r.val_end; }
double min_loss(const ReportRun& r) { return overfit_of(r.curve).min_value; }

// LayerNorm's best evaluation step in a cell: the step of the minimum of its
// seed-mean validation curve.
int64_t best_step(const RunGroup& ln) {
  std::map<int64_t, std::vector<double>> at;
  for (const ReportRun& r : ln.runs)
    for (const CurvePoint& p : r.curve) at[p.step].push_back(p.value);
  Curve mean;
  for (const auto& [step, v] : at) mean.push_back({step, mean_of(v)});
  return overfit_of(mean).min_step;
}

// How many of g's seeds did not train (regime_analysis.h: did_not_train) against LN's
// best loss in the same cell (the mean of its seeds' minima); 0 without a unigram loss
// or an LN group to measure against.
int seeds_not_trained(const RunGroup& g, const RunGroup* ln, double unigram) {
  if (!ln || !std::isfinite(unigram)) return 0;
  const double ln_best = mean_of(ln->each(min_loss));
  if (!std::isfinite(ln_best)) return 0;
  int k = 0;
  for (const ReportRun& r : g.runs) k += did_not_train(r.failed, r.curve, unigram, ln_best);
  return k;
}

std::string comparison_text(const PairedComparison& c) {
  if (c.n == 0) return "-";
  return pct(c.percent) + ", " + std::to_string(c.wins) + "/" + std::to_string(c.n) +
         " seeds lower, p = " + fmt(c.p_sign, "%.3g") + ": " + paired_text(c.verdict);
}

// Why an arm's claim is untestable, from the same counts arm_claim reads.
std::string untestable_why(int not_trained, int seeds, const PairedComparison& c) {
  if (not_trained > 0)
    return "did not train in " + std::to_string(not_trained) + " of " + std::to_string(seeds) + " seeds";
  if (c.n < kMinSeeds) return std::to_string(c.n) + " paired seed(s)";
  return "";
}

std::string status_of(Verdict v) { return claim_status(v, false, PairedComparison{}, NAN); }

std::string of_n(int k, size_t n) { return std::to_string(k) + " of " + std::to_string(n); }

}  // namespace

std::vector<int64_t> RunGroup::seeds() const {
  std::vector<int64_t> s;
  for (const ReportRun& r : runs) s.push_back(r.seed);
  return s;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  size_t n = 0;
  for (double x : v)
    if (std::isfinite(x)) s += x, ++n;
  return n ? s / (double)n : NAN;
}

bool screened(const RunGroup& g) { return !g.runs.empty() && norm_kind(g.runs.front().rec.norm).screened; }

void ReportFindings::file(Verdict v, const std::string& sentence) {
  (v == Verdict::Reproduced      ? reproduced
   : v == Verdict::NotReproduced ? not_reproduced
                                 : untestable)
      .push_back(sentence);
}

ReportGrid::ReportGrid(const RegimeResults& r) : results(r), unigram(r.unigram_loss.value_or(NAN)) {
  for (const RegimeRun& j : r.runs) {
    ReportRun run{j.model, j.arm,      j.size,    j.width, j.seed,
                  j.llama, j.failed(), j.val_end, j.curve, j.acc_curve.value_or(Curve{}),
                  j};
    auto it = std::find_if(groups.begin(), groups.end(), [&](const RunGroup& g) {
      return g.model == run.model && g.arm == run.arm && g.size == run.size && g.width == run.width;
    });
    if (it == groups.end()) {
      groups.push_back({run.model, run.arm, run.size, run.width, run.llama, {}});
      it = groups.end() - 1;
    }
    it->runs.push_back(run);
  }
  for (const RunGroup& g : groups)
    if (g.model == "gpt") {
      if (!std::count(widths.begin(), widths.end(), g.width)) widths.push_back(g.width);
      if (!std::count(sizes.begin(), sizes.end(), g.size)) sizes.push_back(g.size);
    }
  std::sort(widths.begin(), widths.end());
  std::sort(sizes.begin(), sizes.end(), [&](int64_t a, int64_t b) { return bytes_of(a) < bytes_of(b); });
}

int64_t ReportGrid::bytes_of(int64_t size) const { return size < 0 ? results.train_bytes_all : size; }

double ReportGrid::passes_of(int64_t size) const {
  return passes(results.steps, results.batch, results.seq, bytes_of(size));
}

const RunGroup* ReportGrid::find(const std::string& model, const std::string& arm, int64_t size, int64_t width) const {
  for (const RunGroup& g : groups)
    if (g.model == model && g.arm == arm && g.size == size && g.width == width) return &g;
  return nullptr;
}

namespace {

// LayerNorm's over-fitting in one cell: its minimum, where, the end, the rise after it.
json ln_overfit_row(const ReportGrid& grid, const RunGroup& ln, int64_t width, int64_t size) {
  const auto o = [](const ReportRun& r) { return overfit_of(r.curve); };
  int over = 0;
  for (const ReportRun& r : ln.runs) over += o(r).overfits;
  return {{"width", width},
          {"size", size_label(size)},
          {"passes", fmt(grid.passes_of(size), "%.1f")},
          {"min", range_text(ln.each([&](const ReportRun& r) { return o(r).min_value; }), "%.4f")},
          {"min_step", range_text(ln.each([&](const ReportRun& r) { return (double)o(r).min_step; }), "%.0f")},
          {"end", range_text(ln.each([&](const ReportRun& r) { return o(r).end_value; }), "%.4f")},
          {"rise", range_text(ln.each([&](const ReportRun& r) { return o(r).rise(); }), "%.4f")},
          {"overfits", of_n(over, ln.runs.size())}};
}

// The paper's row beside an arm's comparison against LN, its verdict and its claim, in the
// paper's regimes (told by passes); none where the paper has no cell. `end`: the paired
// comparison at the end of the run; `own_best`: each model at its own best step, on which
// the data-scarce verdict rests (the end, which the paper reports, stands beside it).
void paper_row(const ReportGrid& grid, const RunGroup& g, int64_t size, int not_trained, const PairedComparison& end,
               const PairedComparison& own_best, json& paper_rows, ReportFindings& findings) {
  const PaperArm* pa = paper_arm(g.arm);
  const DataRegime regime = data_regime(grid.passes_of(size));
  // the paper's 10M-token cell has three arms (DyT alpha0 2, HardTanh, DiffAttn): no row for the others
  const bool paper_has_cell = regime != DataRegime::Mid || (pa && std::isfinite(pa->mid));
  if (!pa || g.width != grid.results.dim || regime == DataRegime::Between || !paper_has_cell) return;
  const bool scarce = regime == DataRegime::Scarce;
  const double paper = pa->in(regime);
  // the 50M-token cell beside the 118M one: both are data-rich, all of fortunes lies between them
  const std::string paper_text =
      pct(paper) + (regime == DataRegime::Rich && std::isfinite(pa->rich50) ? " (50M: " + pct(pa->rich50) + ")" : "");
  const std::string caveat = scarce ? "; at each model's own best step " + comparison_text(own_best) : "";
  const ClaimVerdict v = arm_claim(g.arm + " at " + size_label(size) + " (" + regime_name(regime) +
                                       (scarce ? ", at each model's own best step" : ", at the end") + ")",
                                   paper, scarce ? own_best : end, not_trained, (int)g.runs.size());
  paper_rows.push_back({{"arm", g.arm},
                        {"regime", regime_name(regime)},
                        {"size", size_label(size)},
                        {"paper", paper_text},
                        {"here", comparison_text(end)},
                        {"source", pa->source},
                        {"caveat", caveat},
                        {"verdict", v.verdict == Verdict::Reproduced      ? "reproduced"
                                    : v.verdict == Verdict::NotReproduced ? "not reproduced"
                                                                          : "untestable"}});
  findings.file(v.verdict, v.text + (scarce ? " (at the end: " + comparison_text(end) + ")" : ""));
  if (!std::isfinite(paper)) return;  // an arm the paper has no number for here makes no claim
  const std::string reference = grid.results.reference;
  findings.claims.push_back(claim_row(
      g.arm + " against " + reference + ", " + regime_name(regime) + " (" + size_label(size) + ", " +
          fmt(grid.passes_of(size), "%.0f") + " passes)" + (*pa->differs ? std::string("; ") + pa->differs : ""),
      paper_text, scarce ? "own best step " + pct(own_best.percent) + ", end " + pct(end.percent) : pct(end.percent),
      claim_status(v.verdict, scarce, end, paper), v.text,
      v.verdict == Verdict::Untestable ? untestable_why(not_trained, (int)g.runs.size(), scarce ? own_best : end)
                                       : ""));
}

// One arm's row of a phase table: its losses over the seeds and, against LN in the same
// cell, the paired comparisons at the end and at LN's best step; the paper's row beside it.
json arm_row(const ReportGrid& grid, const RunGroup& g, const RunGroup* ln, int64_t size, json& paper_rows,
             ReportFindings& findings) {
  const int64_t ln_best = ln ? best_step(*ln) : -1;
  const auto end = g.each(end_loss);
  const auto at_best = g.each([&](const ReportRun& r) { return value_at(r.curve, ln_best); });
  const auto mins = g.each(min_loss);
  json row = {{"arm", g.arm},
              {"end", range_text(end, "%.4f")},
              {"min", range_text(mins, "%.4f")},
              {"at_best", range_text(at_best, "%.4f")},
              {"sat", range_text(g.each([](const ReportRun& r) { return r.rec.sat_screen.value_or(NAN); }), "%.3f")},
              {"vs_end", "-"},
              {"vs_best", "-"}};
  std::vector<bool> failed;
  std::vector<Curve> curves;
  for (const ReportRun& r : g.runs) failed.push_back(r.failed), curves.push_back(r.curve);
  row["status"] = regime_row_status(failed, curves);
  const int not_trained = seeds_not_trained(g, ln, grid.unigram);
  row["not_trained"] = ln && std::isfinite(grid.unigram) ? of_n(not_trained, g.runs.size()) : std::string("-");
  if (!ln || g.arm == grid.results.reference) return row;
  const PairedComparison ce = compare_paired(g.seeds(), end, ln->seeds(), ln->each(end_loss));
  const PairedComparison cb = compare_paired(g.seeds(), at_best, ln->seeds(),
                                             ln->each([&](const ReportRun& r) { return value_at(r.curve, ln_best); }));
  // each model at its own best validation step, as early stopping would keep it
  const PairedComparison cown = compare_paired(g.seeds(), mins, ln->seeds(), ln->each(min_loss));
  row["vs_end"] = comparison_text(ce);
  row["vs_best"] = comparison_text(cb);
  paper_row(grid, g, size, not_trained, ce, cown, paper_rows, findings);
  return row;
}

// LayerNorm on the smallest subset: whether it over-fits (every width's line: a width-256
// block is about width 256), and the data-scarce regime's verdict where the subset is
// seen as often as the paper's scarce cells.
void smallest_subset(const ReportGrid& grid, const RunGroup& ln, int64_t width, ReportFindings& findings) {
  const int64_t size = ln.size;
  int over = 0;
  for (const ReportRun& r : ln.runs) over += overfit_of(r.curve).overfits;
  const int64_t base_width = grid.results.dim;
  const std::string w = grid.widths.size() > 1 || width != base_width ? " (width " + std::to_string(width) + ")" : "";
  const std::string line = "LayerNorm" + w + " over-fits on the smallest subset (" + size_label(size) + ", " +
                           fmt(grid.passes_of(size), "%.0f") + " passes) in " + of_n(over, ln.runs.size()) +
                           " seeds: minimum " + range_text(ln.each(min_loss), "%.4f") + ", end " +
                           range_text(ln.each(end_loss), "%.4f");
  findings.summary.push_back(line);
  // a grid whose smallest subset is 300 KB (17 passes) says nothing of the data-scarce regime
  if (data_regime(grid.passes_of(size)) == DataRegime::Scarce) {
    const bool all = over == (int)ln.runs.size();
    findings.file(all ? Verdict::Reproduced : Verdict::NotReproduced,
                  "the data-scarce regime exists (LN's validation loss rises after a minimum): " + line);
    if (width == base_width)
      findings.claims.push_back(claim_row("LN over-fits when data is scarce (" + size_label(size) + ")",
                                          "over-fits at 1M tokens", of_n(over, ln.runs.size()) + " seeds over-fit",
                                          all ? "reproduced" : "not reproduced", line));
  } else if (width == grid.widths.front())
    findings.untestable.push_back("The data-scarce regime: no subset of this grid is seen " + fmt(kScarcePasses, "%g") +
                                  "+ times (the smallest, " + size_label(size) + ", " +
                                  fmt(grid.passes_of(size), "%.0f") + " passes)");
}

}  // namespace

void phase_tables(const ReportGrid& grid, json& view, ReportFindings& findings) {
  json size_rows = json::array(), phase = json::array(), overfit_rows = json::array(), paper_rows = json::array();
  for (int64_t size : grid.sizes)
    size_rows.push_back(
        {{"size", size_label(size)}, {"bytes", grid.bytes_of(size)}, {"passes", fmt(grid.passes_of(size), "%.1f")}});
  const std::string reference = grid.results.reference;
  for (int64_t w : grid.widths) {
    json tables = json::array();
    for (int64_t size : grid.sizes) {
      const RunGroup* ln = grid.find("gpt", reference, size, w);
      if (ln) overfit_rows.push_back(ln_overfit_row(grid, *ln, w, size));
      json rows = json::array();
      for (const RunGroup& g : grid.groups) {
        if (g.model != "gpt" || g.llama || g.width != w || g.size != size) continue;
        rows.push_back(arm_row(grid, g, ln, size, paper_rows, findings));
        if (g.arm == reference && size == grid.sizes.front()) smallest_subset(grid, g, w, findings);
      }
      tables.push_back({{"size", size_label(size)},
                        {"passes", fmt(grid.passes_of(size), "%.1f")},
                        {"ln_best", ln ? best_step(*ln) : -1},
                        {"rows", rows}});
    }
    phase.push_back({{"width", w}, {"tables", tables}});
  }
  view["size_rows"] = size_rows;
  view["phase"] = phase;
  view["overfit_rows"] = overfit_rows;
  view["paper_rows"] = paper_rows;
  view["paper_table"] = !paper_rows.empty();
}

void alpha0_sweep(const ReportGrid& grid, json& view, ReportFindings& findings) {
  // the paper's alpha0 sweep at the base width: each alpha0's change against LN per
  // subset, and the paper's direction judged by the largest alpha0 against the smallest
  json sweep_rows = json::array(), sweep_lines = json::array();
  std::vector<const PaperArm*> paper_sweep;  // in alpha0 order
  for (const PaperArm& pa : kPaperArms)
    if (std::isfinite(pa.alpha0)) paper_sweep.push_back(&pa);
  std::sort(paper_sweep.begin(), paper_sweep.end(),
            [](const PaperArm* a, const PaperArm* b) { return a->alpha0 < b->alpha0; });
  const int64_t base_width = grid.results.dim;
  for (int64_t size : grid.sizes) {
    const RunGroup* ln = grid.find("gpt", grid.results.reference, size, base_width);
    std::vector<std::pair<const PaperArm*, const RunGroup*>> swept;
    for (const PaperArm* pa : paper_sweep)
      if (const RunGroup* g = grid.find("gpt", pa->label, size, base_width)) swept.push_back({pa, g});
    if (!ln || swept.size() < 2) continue;
    const DataRegime regime = data_regime(grid.passes_of(size));
    // the sweep's numbers are the paper's 1M and 118M cells only
    auto paper_of = [&](const PaperArm& pa) {
      return regime == DataRegime::Scarce || regime == DataRegime::Rich ? pa.in(regime) : NAN;
    };
    for (const auto& [pa, g] : swept)
      sweep_rows.push_back(
          {{"size", size_label(size)},
           {"passes", fmt(grid.passes_of(size), "%.1f")},
           {"alpha0", fmt(pa->alpha0, "%g")},
           {"here", comparison_text(compare_paired(g->seeds(), g->each(end_loss), ln->seeds(), ln->each(end_loss)))},
           {"paper", pct(paper_of(*pa))}});
    const auto& [low, low_g] = swept.front();
    const auto& [high, high_g] = swept.back();
    const PairedComparison high_vs_low =
        compare_paired(high_g->seeds(), high_g->each(end_loss), low_g->seeds(), low_g->each(end_loss));
    const int not_trained = seeds_not_trained(*low_g, ln, grid.unigram) + seeds_not_trained(*high_g, ln, grid.unigram);
    const ClaimVerdict v = alpha0_direction(size_label(size), low->alpha0, high->alpha0, paper_of(*low),
                                            paper_of(*high), high_vs_low, not_trained);
    sweep_lines.push_back(v.text);
    if (regime != DataRegime::Scarce && regime != DataRegime::Rich) continue;  // no sweep number there
    findings.summary.push_back("alpha0 sweep: " + v.text);
    findings.file(v.verdict, "the alpha0 sweep's direction: " + v.text);
    findings.claims.push_back(claim_row(
        "alpha0 " + fmt(high->alpha0, "%g") + " against " + fmt(low->alpha0, "%g") + ", " + regime_name(regime) + " (" +
            size_label(size) + ")",
        pct(paper_of(*high)) + " vs " + pct(paper_of(*low)), comparison_text(high_vs_low), status_of(v.verdict), v.text,
        v.verdict == Verdict::Untestable ? "a seed did not train in " + std::to_string(not_trained) + " of " +
                                               std::to_string(low_g->runs.size() + high_g->runs.size()) + " runs"
                                         : ""));
  }
  view["sweep_rows"] = sweep_rows;
  view["sweep_lines"] = sweep_lines;
  view["sweep"] = !sweep_rows.empty();
  // the section only where the grid has an arm of the sweep; its sentence quotes the
  // paper's sweep from kPaperArms, so the table and the prose cannot disagree
  bool any_swept = false;
  for (const RunGroup& g : grid.groups)
    if (const PaperArm* pa = paper_arm(g.arm)) any_swept = any_swept || std::isfinite(pa->alpha0);
  view["sweep_section"] = any_swept;
  auto paper_sweep_text = [&](double PaperArm::*regime) {
    std::string text;
    for (const PaperArm* pa : paper_sweep) text += (text.empty() ? "" : ", ") + fmt(pa->*regime, "%+.1f");
    return text + " %";
  };
  view["paper_sweep_from"] = fmt(paper_sweep.front()->alpha0, "%g");
  view["paper_sweep_to"] = fmt(paper_sweep.back()->alpha0, "%g");
  view["paper_sweep_rich"] = paper_sweep_text(&PaperArm::rich);
  view["paper_sweep_scarce"] = paper_sweep_text(&PaperArm::scarce);
}

void instrument_rows(const ReportGrid& grid, json& view) {
  json rows = json::array();
  for (const RunGroup& g : grid.groups) {
    if (g.model != "gpt") continue;
    auto at = [&](std::optional<double> RegimeRun::*figure) {
      return range_text(g.each([&](const ReportRun& r) { return (r.rec.*figure).value_or(NAN); }), "%.3g");
    };
    auto noise = [&](const char* eps) {
      return range_text(g.each([&](const ReportRun& r) {
        const auto& n = r.rec.noise_end;
        return n && n->count(eps) ? n->at(eps) : NAN;
      }),
                        "%.3g");
    };
    rows.push_back({{"width", g.width},
                    {"size", size_label(g.size)},
                    {"arm", g.arm},
                    {"sat_end", at(&RegimeRun::sat_end)},
                    {"erank", at(&RegimeRun::erank_end)},
                    {"noise01", noise("0.01")},
                    {"noise1", noise("0.1")},
                    {"logit_var", at(&RegimeRun::logit_variance_end)},
                    {"alpha", at(&RegimeRun::alpha_end)}});
  }
  view["instrument_rows"] = rows;
}

void screen_judgement(const ReportGrid& grid, json& view, ReportFindings& findings) {
  // the cells the screen judges: each arm of a screened norm against LN at the end, in
  // the phase tables' order
  json screen_rows = json::array();
  std::vector<ScreenCell> screen;
  int64_t dyt_cells = 0, dyt_helped = 0;
  for (int64_t w : grid.widths)
    for (int64_t size : grid.sizes) {
      const RunGroup* ln = grid.find("gpt", grid.results.reference, size, w);
      if (!ln) continue;
      for (const RunGroup& g : grid.groups) {
        if (g.model != "gpt" || g.llama || g.width != w || g.size != size || g.arm == grid.results.reference ||
            !screened(g))
          continue;
        const PairedComparison ce = compare_paired(g.seeds(), g.each(end_loss), ln->seeds(), ln->each(end_loss));
        if (ce.n == 0) continue;
        ++dyt_cells;
        dyt_helped += ce.mean_diff < 0;
        const double sat = mean_of(g.each([](const ReportRun& r) { return r.rec.sat_screen.value_or(NAN); }));
        const bool predicts = sat > kScreenThreshold, helped = ce.mean_diff < 0;
        screen.push_back({sat, ce.percent, helped});
        screen_rows.push_back({{"width", w},
                               {"size", size_label(size)},
                               {"arm", g.arm},
                               {"sat", fmt(sat, "%.3f")},
                               {"predicts", predicts ? "helps" : "does not help"},
                               {"outcome", pct(ce.percent) + " (" + paired_text(ce.verdict) + ")"},
                               {"right", std::isfinite(sat) ? (predicts == helped ? "right" : "wrong") : "-"}});
      }
    }
  const ScreenJudgement sj = judge_screen(screen, kScreenThreshold);
  const std::string ci = fmt(100.0 * sj.accuracy_ci.lo, "%.0f") + "-" + fmt(100.0 * sj.accuracy_ci.hi, "%.0f");
  json sv = json::object();
  sv["cells"] = sj.cells;
  sv["correct"] = sj.correct;
  sv["accuracy"] = fmt(100.0 * sj.accuracy(), "%.0f");
  sv["ci_lo"] = fmt(100.0 * sj.accuracy_ci.lo, "%.0f");
  sv["ci_hi"] = fmt(100.0 * sj.accuracy_ci.hi, "%.0f");
  sv["predicted"] = sj.predicted_help;
  sv["helped"] = sj.helped;
  sv["spearman"] =
      std::isfinite(sj.spearman) ? fmt(sj.spearman, "%.2f") : "undefined (fewer than two cells or no spread)";
  view["screen"] = sv;
  view["screen_rows"] = screen_rows;
  // plot_regime.sh draws no screen plot without a point: a cell with a saturation
  view["screen_plot"] =
      view.value("plotted", false) &&
      std::any_of(screen.begin(), screen.end(), [](const ScreenCell& c) { return std::isfinite(c.saturation); });
  view["screen_any"] = !screen_rows.empty();
  view["no_help"] = dyt_cells > 0 && dyt_helped == 0;
  // the rule is judged only where its prediction differs between cells; and its cells
  // share arms and LN baselines, so they are not independent trials
  const std::string screen_untested = screen_untestable(screen, kScreenThreshold);
  view["screen_untestable"] = screen_untested;
  if (dyt_cells == 0) return;
  const std::string rule = "Screening rule (saturation > " + fmt(kScreenThreshold, "%.2f") + " at step " +
                           std::to_string(grid.results.screen_step) + " predicts that DyT helps): ";
  const char* claim = "the step-500 saturation screen predicts when DyT helps";
  if (!screen_untested.empty()) {
    const std::string line = rule + screen_untested + " of " + std::to_string(sj.cells) + " (DyT helped in " +
                             std::to_string(sj.helped) +
                             "), so its accuracy measures how often DyT helped, not the rule";
    findings.summary.push_back(line);
    findings.untestable.push_back(line);
    findings.claims.push_back(claim_row(claim, "saturation > 0.43", "-", "untestable here", line,
                                        screen_untested.substr(std::string("untestable: ").size())));
    return;
  }
  // the rule is reproduced only when its right calls are more than chance would give
  findings.claims.push_back(claim_row(claim, "saturation > 0.43",
                                      "right in " + std::to_string(sj.correct) + " of " + std::to_string(sj.cells) +
                                          " cells (Wilson 95 % " + ci + " %)",
                                      sj.accuracy_ci.lo > 0.5 ? "reproduced" : "not reproduced",
                                      "cells share arms and LN baselines: the interval treats them as independent"));
  findings.summary.push_back(
      rule + "right in " + std::to_string(sj.correct) + " of " + std::to_string(sj.cells) + " DyT cells (" +
      fmt(100.0 * sj.accuracy(), "%.0f") + " %, Wilson 95 % interval " + ci +
      " %, an interval that treats the cells as independent, which they are not: they share arms and LN "
      "baselines); Spearman rank correlation of saturation with DyT's change against LN: " +
      sv["spearman"].get<std::string>());
  if (dyt_helped == 0)
    findings.summary.push_back(
        "**DyT helped in no cell** (its mean over seeds was above LN's everywhere), so the "
        "rule's claim that saturation predicts help cannot be judged here: it can only be "
        "right by predicting no help.");
}

void llama_rows(const ReportGrid& grid, json& view, ReportFindings& findings) {
  // a run collapsed when it failed or its training loss ended above kStuckLoss
  // (regime_rows.h: collapsed; over-fitting is not collapse)
  auto run_collapsed = [](const ReportRun& r) { return collapsed(r.failed, r.rec.train_end.value_or(NAN), r.curve); };
  json rows = json::array();
  for (const RunGroup& g : grid.groups) {
    if (!g.llama) continue;
    std::vector<double> sat_c, sat_ok, val_ok, train_end;
    int n_c = 0;
    for (const ReportRun& r : g.runs) {
      const double s = r.rec.sat_screen.value_or(NAN);
      train_end.push_back(r.rec.train_end.value_or(NAN));
      if (run_collapsed(r))
        ++n_c, sat_c.push_back(s);
      else
        sat_ok.push_back(s), val_ok.push_back(r.val_end);
    }
    rows.push_back({{"size", size_label(g.size)},
                    {"arm", g.arm},
                    {"collapsed", of_n(n_c, g.runs.size())},
                    {"val_ok", range_text(val_ok, "%.4f")},
                    {"train_end", range_text(train_end, "%.3f")},
                    {"sat_collapsed", range_text(sat_c, "%.3f")},
                    {"sat_ok", range_text(sat_ok, "%.3f")}});
    findings.summary.push_back("Llama collapse, " + g.arm + " on " + size_label(g.size) + ": " +
                               of_n(n_c, g.runs.size()) + " seeds collapsed (paper, Llama + DyT 64M: 1 of 3)");
  }
  view["llama_rows"] = rows;
  view["llama"] = !rows.empty();
  // the paper's Llama claims per subset: SwiGLU + DyT collapses, a GELU MLP rescues it
  // (DyT's: the arms whose norm declares Verma's screen, fitted on DyT runs)
  std::map<std::string, bool> gelu_arm;  // label -> its flags name a GELU MLP
  for (const RegimeArm& a : grid.results.llama_arms)
    gelu_arm[a.label] = (" " + a.flags + " ").find(" --mlp gelu ") != std::string::npos;
  for (int64_t size : grid.sizes) {
    CollapseCount swiglu, gelu;
    for (const RunGroup& g : grid.groups) {
      if (!g.llama || g.size != size || !screened(g)) continue;
      CollapseCount& c = gelu_arm[g.arm] ? gelu : swiglu;
      for (const ReportRun& r : g.runs) c.runs += 1, c.collapsed += run_collapsed(r) ? 1 : 0;
    }
    for (const ClaimVerdict& v : llama_verdicts(size_label(size), swiglu, gelu, data_regime(grid.passes_of(size)))) {
      findings.file(v.verdict, v.text);
      const bool rescue = v.text.find("GELU") != std::string::npos;
      const std::string counts = std::to_string(swiglu.collapsed) + " of " + std::to_string(swiglu.runs);
      findings.claims.push_back(
          claim_row(std::string(rescue ? "a GELU MLP rescues Llama + DyT" : "Llama + DyT collapses in some seeds") +
                        " (" + size_label(size) + ")",
                    rescue ? "rescued (118M tokens)" : "1 of 3 seeds",
                    rescue ? "GELU " + std::to_string(gelu.collapsed) + " of " + std::to_string(gelu.runs) +
                                 ", SwiGLU " + counts + " collapsed"
                           : counts + " seeds",
                    status_of(v.verdict), v.text,
                    v.verdict != Verdict::Untestable                        ? ""
                    : v.text.find("nothing to rescue") != std::string::npos ? "SwiGLU + DyT never collapsed"
                    : rescue                                                ? "the paper tested it at 118M tokens only"
                             : "the paper tested it at 1M and 118M tokens only"));
    }
  }
}

double best_accuracy(const ReportRun& r) {
  double b = NAN;
  for (const CurvePoint& p : r.acc) b = std::isfinite(b) ? std::max(b, p.value) : p.value;
  return b;
}

namespace {

double end_accuracy(const ReportRun& r) { return r.acc.empty() ? NAN : r.acc.back().value; }

// A ViT arm's row: accuracy is higher-better, so the paired comparison is of the error
// rates; the verdict is on each run's best accuracy, as the paper takes the best of its
// evaluations.
json vit_row(const ReportGrid& grid, const RunGroup& g, const RunGroup* ln, int64_t images, ReportFindings& findings) {
  const std::string reference = grid.results.reference;
  json row = {
      {"images", images < 0 ? std::string("all") : std::to_string(images)},
      {"arm", g.arm},
      {"best", range_text(g.each(best_accuracy), "%.4f")},
      {"end", range_text(g.each(end_accuracy), "%.4f")},
      {"min_loss", range_text(g.each(min_loss), "%.4f")},
      {"end_loss", range_text(g.each([](const ReportRun& r) { return overfit_of(r.curve).end_value; }), "%.4f")},
      {"vs", "-"},
      {"vs_best", "-"},
      {"not_trained", "-"}};
  if (!ln || g.arm == reference) return row;
  auto err = [](std::vector<double> v) {
    for (double& x : v) x = 1.0 - x;
    return v;
  };
  auto vs = [&](double (*acc_of)(const ReportRun&)) {
    const PairedComparison c = compare_paired(g.seeds(), err(g.each(acc_of)), ln->seeds(), err(ln->each(acc_of)));
    const double points = 100.0 * (mean_of(g.each(acc_of)) - mean_of(ln->each(acc_of)));
    return std::make_pair(c, points);
  };
  const auto [ce, pe] = vs(end_accuracy);
  const auto [cb, pb] = vs(best_accuracy);
  auto text = [](const PairedComparison& c, double points) {
    return fmt(points, "%+.1f") + " points, " + std::to_string(c.wins) + "/" + std::to_string(c.n) +
           " seeds higher, p = " + fmt(c.p_sign, "%.3g") + ": " + paired_text(c.verdict);
  };
  row["vs"] = text(ce, pe);
  row["vs_best"] = text(cb, pb);
  constexpr double kChance = 0.1;  // Fashion-MNIST's 10 classes
  const double ln_best = mean_of(ln->each(best_accuracy));
  int not_trained = 0;
  for (const ReportRun& r : g.runs) not_trained += vit_did_not_train(r.failed, best_accuracy(r), kChance, ln_best);
  row["not_trained"] = of_n(not_trained, g.runs.size());
  const std::string n = row["images"].get<std::string>();
  const ClaimVerdict v =
      vit_claim("ViT " + g.arm + " against " + reference + " on " + n + " images, best validation accuracy",
                kPaperVitPoints, pb, cb, not_trained, (int)g.runs.size());
  findings.summary.push_back(v.text + " (at the end: " + text(ce, pe) +
                             "; the paper: CIFAR-10 ViT-Small, one seed, 81.2 % vs 72.4 %)");
  findings.file(v.verdict, v.text);
  findings.claims.push_back(
      claim_row("ViT " + g.arm + " against " + reference + ", best accuracy (" + n + " images)",
                fmt(kPaperVitPoints, "%+.1f") + " points", fmt(pb, "%+.1f") + " points", status_of(v.verdict), v.text,
                v.verdict == Verdict::Untestable ? untestable_why(not_trained, (int)g.runs.size(), cb) : ""));
  return row;
}

}  // namespace

void vit_rows(const ReportGrid& grid, json& view, ReportFindings& findings) {
  json rows = json::array();
  std::vector<int64_t> images;
  for (const RunGroup& g : grid.groups)
    if (g.model == "vit" && !std::count(images.begin(), images.end(), g.size)) images.push_back(g.size);
  std::sort(images.begin(), images.end(),
            [](int64_t a, int64_t b) { return (a < 0 ? INT64_MAX : a) < (b < 0 ? INT64_MAX : b); });
  for (int64_t n : images) {
    const RunGroup* ln = grid.find("vit", grid.results.reference, n, 0);
    for (const RunGroup& g : grid.groups)
      if (g.model == "vit" && g.size == n) rows.push_back(vit_row(grid, g, ln, n, findings));
  }
  view["vit_rows"] = rows;
  view["vit"] = !rows.empty();
  view["vit_plot"] = view.value("plotted", false) && !rows.empty();
}

}  // namespace nl
