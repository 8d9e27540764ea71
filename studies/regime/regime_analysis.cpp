#include "studies/regime/regime_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "studies/instruments/act_stats.h"  // pearson
#include "studies/report/study.h"         // fmt
#include "studies/report/verdicts.h"      // kStuckLoss

namespace nl {

double passes(int64_t steps, int64_t batch, int64_t seq, int64_t train_bytes) {
  return train_bytes > 0 ? (double)steps * (double)batch * (double)seq / (double)train_bytes : NAN;
}

DataRegime data_regime(double passes) {
  if (passes >= kScarcePasses) return DataRegime::Scarce;
  if (passes <= kRichPasses) return DataRegime::Rich;
  if (passes >= kMidPasses / kMidMatch && passes <= kMidPasses * kMidMatch) return DataRegime::Mid;
  return DataRegime::Between;  // also NaN: no subset
}

const char* regime_name(DataRegime r) {
  switch (r) {
    case DataRegime::Scarce: return "data-scarce";
    case DataRegime::Mid: return "10M-token cell";
    case DataRegime::Rich: return "data-rich";
    default: return "between";
  }
}

Overfit overfit_of(const Curve& curve, double margin) {
  Overfit o;
  o.min_value = o.end_value = NAN;
  for (const CurvePoint& p : curve) {
    if (!std::isfinite(p.value)) continue;
    if (o.min_step < 0 || p.value < o.min_value) o.min_value = p.value, o.min_step = p.step;
    o.end_value = p.value, o.end_step = p.step;
  }
  o.overfits = o.min_step >= 0 && o.end_value - o.min_value > margin;
  return o;
}

double value_at(const Curve& curve, int64_t step) {
  double v = NAN;
  for (const CurvePoint& p : curve)
    if (p.step <= step) v = p.value;
  return v;
}

double sign_test_p(int64_t wins, int64_t losses) {
  const int64_t n = wins + losses, k = std::min(wins, losses);
  if (n == 0) return 1.0;
  // sum_{i <= k} C(n, i) / 2^n, each term from the last by C(n, i) = C(n, i - 1) (n - i + 1) / i,
  // in logs so that large n cannot overflow
  double tail = 0, log_term = -(double)n * std::log(2.0);
  for (int64_t i = 0; i <= k; ++i) {
    if (i > 0) log_term += std::log((double)(n - i + 1)) - std::log((double)i);
    tail += std::exp(log_term);
  }
  return std::min(1.0, 2.0 * tail);
}

PairedComparison compare_paired(const std::vector<int64_t>& seeds_a, const std::vector<double>& values_a,
                                const std::vector<int64_t>& seeds_ref, const std::vector<double>& values_ref) {
  std::map<int64_t, double> ref;
  for (size_t i = 0; i < seeds_ref.size(); ++i)
    if (std::isfinite(values_ref[i])) ref[seeds_ref[i]] = values_ref[i];
  PairedComparison c;
  double sum = 0, ref_sum = 0;
  c.min_diff = INFINITY, c.max_diff = -INFINITY;
  for (size_t i = 0; i < seeds_a.size(); ++i) {
    const auto it = ref.find(seeds_a[i]);
    if (it == ref.end() || !std::isfinite(values_a[i])) continue;
    const double d = values_a[i] - it->second;
    ++c.n;
    c.wins += d < 0, c.losses += d > 0, c.ties += d == 0;
    sum += d, ref_sum += it->second;
    c.min_diff = std::min(c.min_diff, d), c.max_diff = std::max(c.max_diff, d);
  }
  if (c.n == 0) {
    c.mean_diff = c.min_diff = c.max_diff = c.percent = NAN;
    return c;
  }
  c.mean_diff = sum / (double)c.n;
  c.percent = 100.0 * sum / ref_sum;
  c.p_sign = sign_test_p(c.wins, c.losses);
  c.verdict = c.wins == c.n ? Paired::Helps : c.losses == c.n ? Paired::Hurts : Paired::Mixed;
  return c;
}

std::string paired_text(Paired v) {
  return v == Paired::Helps ? "**helps**" : v == Paired::Hurts ? "**hurts**" : "mixed";
}

std::string pct(double percent) { return std::isfinite(percent) ? fmt(percent, "%+.1f") + " %" : "-"; }

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

Interval wilson_interval(int64_t k, int64_t n, double z) {
  if (n <= 0) return {0.0, 1.0};
  // the p whose normal-approximation interval p +- z sqrt(p (1 - p) / n) reaches k / n:
  // centre (p^ + z^2 / 2n) / (1 + z^2 / n), half-width z sqrt(p^ (1 - p^) / n + z^2 / 4n^2) / (1 + z^2 / n)
  const double nn = (double)n, p = (double)k / nn, z2 = z * z;
  const double denom = 1.0 + z2 / nn;
  const double centre = (p + z2 / (2.0 * nn)) / denom;
  const double half = z * std::sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = 0.5 * (double)(i + j) + 1.0;  // the mean of ranks i + 1 .. j + 1
    for (size_t m = i; m <= j; ++m) ranks[order[m]] = rank;
    i = j + 1;
  }
  return ranks;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return NAN;
  return pearson(average_ranks(x), average_ranks(y));
}

ScreenJudgement judge_screen(const std::vector<ScreenCell>& cells, double threshold) {
  ScreenJudgement j;
  std::vector<double> sat, pct;
  for (const ScreenCell& c : cells) {
    if (!std::isfinite(c.saturation) || !std::isfinite(c.percent)) continue;
    const bool predicts = c.saturation > threshold;
    ++j.cells;
    j.predicted_help += predicts;
    j.helped += c.helped;
    j.correct += predicts == c.helped;
    sat.push_back(c.saturation), pct.push_back(c.percent);
  }
  j.accuracy_ci = wilson_interval(j.correct, j.cells);
  j.spearman = spearman(sat, pct);
  return j;
}

std::string regime_row_status(const std::vector<bool>& failed, const std::vector<Curve>& curves) {
  int n_failed = 0, n_stuck = 0, n_overfit = 0;
  for (size_t i = 0; i < curves.size(); ++i) {
    if (i < failed.size() && failed[i]) {
      ++n_failed;
      continue;
    }
    const Overfit o = overfit_of(curves[i]);
    if (!(o.min_value <= kStuckLoss)) ++n_stuck;  // NaN (no point) counts as stuck
    else if (o.overfits) ++n_overfit;
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

double tail_mean(const std::vector<double>& values, size_t n) {
  const size_t k = std::min(n, values.size());
  if (k == 0) return NAN;
  double sum = 0;
  for (size_t i = values.size() - k; i < values.size(); ++i) sum += values[i];
  return sum / (double)k;
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
                                               of(swiglu) + " seeds collapsed (paper: 1 of 3)"});
  else
    out.push_back({swiglu.collapsed > 0 ? Verdict::Reproduced : Verdict::NotReproduced,
                   "Llama + DyT (SwiGLU) collapses in some seeds, " + size + ": " + of(swiglu) +
                       " seeds collapsed (paper: 1 of 3)"});
  if (gelu.runs == 0) return out;
  const std::string counts = "GELU " + of(gelu) + " collapsed against SwiGLU's " + of(swiglu);
  if (regime != DataRegime::Rich)
    out.push_back({Verdict::Untestable, "A GELU MLP rescuing Llama + DyT, " + size + ": the paper tested the rescue "
                                        "only with much data (118M tokens, 1.4 passes), and " + size + " is " +
                                        regime_name(regime) + " (" + counts + ")"});
  else if (swiglu.collapsed == 0)
    out.push_back({Verdict::Untestable, "A GELU MLP rescuing Llama + DyT, " + size + ": SwiGLU + DyT never collapsed, "
                                        "so there was nothing to rescue (" + counts + ")"});
  else
    out.push_back({gelu.collapsed < swiglu.collapsed ? Verdict::Reproduced : Verdict::NotReproduced,
                   "A GELU MLP in place of SwiGLU rescues Llama + DyT, " + size + ": " + counts +
                       " (paper: rescued)"});
  return out;
}

bool did_not_train(bool failed, const Curve& val_curve, double unigram, double ln_best) {
  if (failed) return true;
  const double best = overfit_of(val_curve).min_value;
  if (!std::isfinite(best)) return true;
  return unigram - best < kTrainedShare * (unigram - ln_best);
}

ClaimVerdict arm_claim(const std::string& what, double paper_percent, const PairedComparison& primary,
                       int not_trained, int seeds) {
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

ClaimVerdict vit_claim(const std::string& what, double paper_points, double points,
                       const PairedComparison& best_error, int not_trained, int seeds) {
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

}  // namespace nl
