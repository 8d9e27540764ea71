// The DyT regime study's report (studies/regime/regime_report.h): results.json grouped
// by cell, the paper's numbers beside the measured ones, the verdicts of verdicts.h, the
// template regime.md.in filled in; and the CSVs its plots draw.
#include "studies/regime/regime_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "nn/norms/registry.h"
#include "studies/instruments/screening.h"
#include "studies/regime/regime_analysis.h"
#include "studies/regime/regime_study.h"
#include "studies/report/claims.h"
#include "studies/report/study.h"
#include "studies/report/template.h"
#include "studies/report/verdicts.h"
#include "tensor/error.h"
#include "train/io/files.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;

const char kTemplate[] =
#include "studies/regime/regime.md.in.h"
    ;

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
     "HardTanh control: 1M 6.246 vs 9.384; 10M 4.660 vs 4.260; 118M 4.562 vs 3.631 (no alpha)", NAN},
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


double mean_of(const std::vector<double>& v) {
  double s = 0;
  size_t n = 0;
  for (double x : v)
    if (std::isfinite(x)) s += x, ++n;
  return n ? s / (double)n : NAN;
}

// ---------------------------------------------------------------- the report's view

struct Run {
  std::string model, arm;
  int64_t size, width, seed;
  bool llama, failed;
  double val_end;
  Curve curve, acc;
  RegimeRun rec;  // the whole record: its instruments
};

struct Group {  // the runs of one (model, width, size, arm) over the seeds
  std::string model, arm;
  int64_t size, width;
  bool llama;
  std::vector<Run> runs;
  std::vector<int64_t> seeds() const {
    std::vector<int64_t> s;
    for (const Run& r : runs) s.push_back(r.seed);
    return s;
  }
  template <class F>
  std::vector<double> each(F f) const {
    std::vector<double> v;
    for (const Run& r : runs) v.push_back(f(r));
    return v;
  }
};

std::vector<Group> groups_of(const RegimeResults& results) {
  std::vector<Group> groups;
  for (const RegimeRun& j : results.runs) {
    Run r{j.model,  j.arm,   j.size,  j.width, j.seed, j.llama, j.failed(), j.val_end,
          j.curve, j.acc_curve.value_or(Curve{}), j};
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.model == r.model && g.arm == r.arm && g.size == r.size && g.width == r.width;
    });
    if (it == groups.end()) {
      groups.push_back({r.model, r.arm, r.size, r.width, r.llama, {}});
      it = groups.end() - 1;
    }
    it->runs.push_back(r);
  }
  return groups;
}

const Group* find_group(const std::vector<Group>& gs, const std::string& model, const std::string& arm, int64_t size,
                        int64_t width) {
  for (const Group& g : gs)
    if (g.model == model && g.arm == arm && g.size == size && g.width == width) return &g;
  return nullptr;
}

// LayerNorm's best evaluation step in a cell: the step of the minimum of its
// seed-mean validation curve.
int64_t best_step(const Group& ln) {
  std::map<int64_t, std::vector<double>> at;
  for (const Run& r : ln.runs)
    for (const CurvePoint& p : r.curve) at[p.step].push_back(p.value);
  Curve mean;
  for (const auto& [step, v] : at) mean.push_back({step, mean_of(v)});
  return overfit_of(mean).min_step;
}

// How many of g's seeds did not train (regime_analysis.h: did_not_train) against LN's
// best loss in the same cell (the mean of its seeds' minima); 0 without a unigram loss
// or an LN group to measure against.
int seeds_not_trained(const Group& g, const Group* ln, double unigram) {
  if (!ln || !std::isfinite(unigram)) return 0;
  const double ln_best = mean_of(ln->each([](const Run& r) { return overfit_of(r.curve).min_value; }));
  if (!std::isfinite(ln_best)) return 0;
  int k = 0;
  for (const Run& r : g.runs) k += did_not_train(r.failed, r.curve, unigram, ln_best);
  return k;
}

// A cell the saturation screen judges: an arm whose norm declares the screen
// (NormKind::screened), named by its first run. The report's screen table and the
// screen plot's CSV both take their cells from here.
bool screened(const Run& first) { return norm_kind(first.rec.norm).screened; }

std::string comparison_text(const PairedComparison& c) {
  if (c.n == 0) return "-";
  return pct(c.percent) + ", " + std::to_string(c.wins) + "/" + std::to_string(c.n) + " seeds lower, p = " +
         fmt(c.p_sign, "%.3g") + ": " + paired_text(c.verdict);
}

}  // namespace

// The Setup paragraph's words for the recipe the grid ran (results.json's "recipe": the
// flags' values), so that the page says which schedule and biases its numbers come from;
// a results file from before --schedule and --norm-bias existed had their defaults.
json setup_view(const json& recipe) {
  auto text = [&](const char* key, const char* missing) {
    return recipe.contains(key) && recipe[key].is_string() ? recipe[key].get<std::string>() : std::string(missing);
  };
  const std::string name = text("recipe", "");
  json v = json::object();
  v["recipe_text"] = name.empty() ? std::string("the study's own (the demo's optimizer and schedule), not the paper's")
                     : name == "verma" ? std::string("`--recipe verma`, Verma's released schedule and bias-free model")
                                       : "`--recipe " + name + "`";
  const bool linear_bias = text("bias", "on") == "on", norm_bias = text("norm_bias", "on") == "on";
  v["bias_text"] = linear_bias && norm_bias   ? "linears and norms with biases"
                   : !linear_bias && !norm_bias ? "no bias in any linear or norm (`--bias off --norm-bias off`)"
                   : linear_bias                 ? "linears with biases, norms without a beta"
                                                 : "linears without biases, norms with a beta";
  v["head_text"] = text("tied_head", "on") == "on" ? "tied embedding and head" : "a head of its own";
  v["schedule_flat"] = text("schedule", "cosine") == "flat";
  v["bias_free"] = !linear_bias && !norm_bias;
  return v;
}

namespace {

// Why an arm's claim is untestable, from the same counts arm_claim reads.
std::string untestable_why(int not_trained, int seeds, const PairedComparison& c) {
  if (not_trained > 0)
    return "did not train in " + std::to_string(not_trained) + " of " + std::to_string(seeds) + " seeds";
  if (c.n < kMinSeeds) return std::to_string(c.n) + " paired seed(s)";
  return "";
}

std::string status_of(Verdict v) { return claim_status(v, false, PairedComparison{}, NAN); }

json regime_view(const RegimeResults& results, bool plotted, const std::string& plot_stem) {
  json view = json::object();
  json claims = json::array();
  for (const auto& [key, value] : results.header.recipe.items()) view[key] = value;
  const StudyHeader& h = results.header;
  json header = h;  // date, command, out, jobs, threads, cores over the recipe's values of the same names
  header.erase("loads"), header.erase("recipe");
  view.update(header);
  view.update(json{{"cells_run", results.cells_run}, {"cells_kept", results.cells_kept}, {"grid", results.grid},
                   {"screen_step", results.screen_step}, {"vit_steps", results.vit_steps},
                   {"estimate_minutes", results.estimate_minutes}});
  view["grid_replaced"] = results.grid_replaced;
  view["minutes"] = fmt(results.seconds / 60.0, "%.1f");
  double kept_seconds = 0;  // the kept runs' own wall times, when they were trained
  for (const RegimeRun& run : results.runs)
    if (run.kept) kept_seconds += run.seconds;
  view["kept_run_minutes"] = fmt(kept_seconds / 60.0, "%.1f");
  view["runs"] = results.runs.size();
  view["load_min"] = fmt(spread_of(h.loads).min, "%.1f");
  view["load_max"] = fmt(spread_of(h.loads).max, "%.1f");
  view["threshold"] = fmt(kScreenThreshold, "%.2f");
  view["margin"] = fmt(kOverfitMargin, "%.2f");
  view["scarce_passes"] = fmt(kScarcePasses, "%g");
  view["rich_passes"] = fmt(kRichPasses, "%g");
  view["mid_match"] = fmt(kMidMatch, "%g");
  view["plotted"] = plotted;
  view["loss_png"] = plot_stem + "_loss.png";
  view["screen_png"] = plot_stem + "_screen.png";
  view["vit_png"] = plot_stem + "_vit.png";
  view["results_file"] = plot_stem + ".json";
  view["plot_script"] = results.plot_script;
  view["arms"] = results.arms;
  view["vit_arms"] = results.vit_arms;
  view["llama_arms"] = results.llama_arms;
  const std::string reference = results.reference;
  view["reference"] = reference;
  view.update(setup_view(h.recipe));
  // the loss of a model that knows only byte frequencies (regime_study computes it from
  // the validation split): a seed that did not close a tenth of the gap below it to LN's
  // best did not train (regime_analysis.h: did_not_train)
  const double unigram = results.unigram_loss.value_or(NAN);
  view["unigram"] = fmt(unigram, "%.4f");
  view["trained_share"] = fmt(kTrainedShare, "%g");
  const int64_t steps = results.steps, batch = results.batch, seq = results.seq;
  const int64_t total_bytes = results.train_bytes_all;
  std::string seeds;
  for (int64_t s : results.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  view["seeds"] = seeds;
  view["seed_count"] = results.seeds.size();

  const std::vector<Group> groups = groups_of(results);
  std::vector<int64_t> widths, sizes;
  for (const Group& g : groups)
    if (g.model == "gpt") {
      if (!std::count(widths.begin(), widths.end(), g.width)) widths.push_back(g.width);
      if (!std::count(sizes.begin(), sizes.end(), g.size)) sizes.push_back(g.size);
    }
  std::sort(widths.begin(), widths.end());
  auto bytes_of = [&](int64_t size) { return size < 0 ? total_bytes : size; };
  std::sort(sizes.begin(), sizes.end(), [&](int64_t a, int64_t b) { return bytes_of(a) < bytes_of(b); });
  const int64_t smallest = sizes.empty() ? 0 : sizes.front();
  const int64_t base_width = results.dim;

  json size_rows = json::array(), phase = json::array(), overfit_rows = json::array(), summary = json::array();
  json screen_rows = json::array(), instrument_rows = json::array(), paper_rows = json::array();
  json reproduced = json::array(), not_reproduced = json::array(), untestable = json::array();
  std::vector<ScreenCell> screen;
  int64_t dyt_cells = 0, dyt_helped = 0;
  for (int64_t size : sizes)
    size_rows.push_back({{"size", size_label(size)},
                         {"bytes", bytes_of(size)},
                         {"passes", fmt(passes(steps, batch, seq, bytes_of(size)), "%.1f")}});

  for (int64_t w : widths) {
    json tables = json::array();
    for (int64_t size : sizes) {
      const Group* ln = find_group(groups, "gpt", reference, size, w);
      const int64_t ln_best = ln ? best_step(*ln) : -1;
      json rows = json::array();
      if (ln) {
        const auto o = [](const Run& r) { return overfit_of(r.curve); };
        int over = 0;
        for (const Run& r : ln->runs) over += o(r).overfits;
        overfit_rows.push_back(
            {{"width", w},
             {"size", size_label(size)},
             {"passes", fmt(passes(steps, batch, seq, bytes_of(size)), "%.1f")},
             {"min", range_text(ln->each([&](const Run& r) { return o(r).min_value; }), "%.4f")},
             {"min_step", range_text(ln->each([&](const Run& r) { return (double)o(r).min_step; }), "%.0f")},
             {"end", range_text(ln->each([&](const Run& r) { return o(r).end_value; }), "%.4f")},
             {"rise", range_text(ln->each([&](const Run& r) { return o(r).rise(); }), "%.4f")},
             {"overfits", std::to_string(over) + " of " + std::to_string(ln->runs.size())}});
      }
      for (const Group& g : groups) {
        if (g.model != "gpt" || g.llama || g.width != w || g.size != size) continue;
        const auto end = g.each([](const Run& r) { return r.val_end; });
        const auto at_best = g.each([&](const Run& r) { return value_at(r.curve, ln_best); });
        const auto mins = g.each([](const Run& r) { return overfit_of(r.curve).min_value; });
        json row = {{"arm", g.arm},
                    {"end", range_text(end, "%.4f")},
                    {"min", range_text(mins, "%.4f")},
                    {"at_best", range_text(at_best, "%.4f")},
                    {"sat", range_text(g.each([](const Run& r) { return r.rec.sat_screen.value_or(NAN); }), "%.3f")},
                    {"vs_end", "-"},
                    {"vs_best", "-"}};
        std::vector<bool> failed;
        std::vector<Curve> curves;
        for (const Run& r : g.runs) failed.push_back(r.failed), curves.push_back(r.curve);
        row["status"] = regime_row_status(failed, curves);
        const int not_trained = seeds_not_trained(g, ln, unigram);
        row["not_trained"] = ln && std::isfinite(unigram)
                                 ? std::to_string(not_trained) + " of " + std::to_string(g.runs.size())
                                 : std::string("-");
        if (ln && g.arm != reference) {
          const auto ln_end = ln->each([](const Run& r) { return r.val_end; });
          const auto ln_at = ln->each([&](const Run& r) { return value_at(r.curve, ln_best); });
          const PairedComparison ce = compare_paired(g.seeds(), end, ln->seeds(), ln_end);
          const PairedComparison cb = compare_paired(g.seeds(), at_best, ln->seeds(), ln_at);
          // each model at its own best validation step, as early stopping would keep it
          const PairedComparison cown = compare_paired(
              g.seeds(), mins, ln->seeds(), ln->each([](const Run& r) { return overfit_of(r.curve).min_value; }));
          row["vs_end"] = comparison_text(ce);
          row["vs_best"] = comparison_text(cb);
          if (screened(g.runs.front()) && ce.n > 0) {
            ++dyt_cells;
            dyt_helped += ce.mean_diff < 0;
            const double sat = mean_of(g.each([](const Run& r) { return r.rec.sat_screen.value_or(NAN); }));
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
          // the paper's number beside the measured one, in the paper's two regimes (by passes)
          const PaperArm* pa = paper_arm(g.arm);
          const DataRegime regime = data_regime(passes(steps, batch, seq, bytes_of(size)));
          // the paper's 10M-token cell has three arms (DyT alpha0 2, HardTanh, DiffAttn): no row for the others
          const bool paper_has_cell = regime != DataRegime::Mid || (pa && std::isfinite(pa->mid));
          if (pa && w == base_width && regime != DataRegime::Between && paper_has_cell) {
            const bool scarce = regime == DataRegime::Scarce;
            const double paper = pa->in(regime);
            // the 50M-token cell beside the 118M one: both are data-rich, all of fortunes lies between them
            const std::string paper_text =
                pct(paper) +
                (regime == DataRegime::Rich && std::isfinite(pa->rich50) ? " (50M: " + pct(pa->rich50) + ")" : "");
            // the data-scarce verdict rests on each model at its own best step; the
            // end of the run, which the paper reports, stands beside it
            const std::string caveat = scarce ? "; at each model's own best step " + comparison_text(cown) : "";
            json prow = {{"arm", g.arm},
                         {"regime", regime_name(regime)},
                         {"size", size_label(size)},
                         {"paper", paper_text},
                         {"here", comparison_text(ce)},
                         {"source", pa->source},
                         {"caveat", caveat}};
            paper_rows.push_back(prow);
            const ClaimVerdict v =
                arm_claim(g.arm + " at " + size_label(size) + " (" + regime_name(regime) +
                              (scarce ? ", at each model's own best step" : ", at the end") + ")",
                          paper, scarce ? cown : ce, not_trained, (int)g.runs.size());
            prow["verdict"] = v.verdict == Verdict::Reproduced      ? "reproduced"
                              : v.verdict == Verdict::NotReproduced ? "not reproduced"
                                                                    : "untestable";
            paper_rows.back() = prow;
            (v.verdict == Verdict::Reproduced ? reproduced : v.verdict == Verdict::NotReproduced ? not_reproduced
                                                                                                 : untestable)
                .push_back(v.text + (scarce ? " (at the end: " + comparison_text(ce) + ")" : ""));
            if (std::isfinite(paper))  // an arm the paper has no number for here makes no claim
              claims.push_back(claim_row(
                  g.arm + " against " + reference + ", " + regime_name(regime) + " (" + size_label(size) + ", " +
                      fmt(passes(steps, batch, seq, bytes_of(size)), "%.0f") + " passes)",
                  paper_text,
                  scarce ? "own best step " + pct(cown.percent) + ", end " + pct(ce.percent) : pct(ce.percent),
                  claim_status(v.verdict, scarce, ce, paper), v.text,
                  v.verdict == Verdict::Untestable ? untestable_why(not_trained, (int)g.runs.size(), scarce ? cown : ce)
                                                   : ""));
          }
        }
        rows.push_back(row);
        if (g.arm != reference) continue;
        if (size == smallest) {  // every width's line: a width-256 block is about width 256
          int over = 0;
          for (const Run& r : g.runs) over += overfit_of(r.curve).overfits;
          const std::string width = widths.size() > 1 || w != base_width ? " (width " + std::to_string(w) + ")" : "";
          const std::string line = "LayerNorm" + width + " over-fits on the smallest subset (" + size_label(size) +
                                   ", " + fmt(passes(steps, batch, seq, bytes_of(size)), "%.0f") + " passes) in " +
                                   std::to_string(over) + " of " + std::to_string(g.runs.size()) + " seeds: minimum " +
                                   range_text(mins, "%.4f") + ", end " + range_text(end, "%.4f");
          summary.push_back(line);
          // a verdict only where the subset is seen as often as the paper's scarce cells: a
          // grid whose smallest subset is 300 KB (17 passes) says nothing of that regime
          if (data_regime(passes(steps, batch, seq, bytes_of(size))) == DataRegime::Scarce) {
            (over == (int)g.runs.size() ? reproduced : not_reproduced)
                .push_back("the data-scarce regime exists (LN's validation loss rises after a minimum): " + line);
            if (w == base_width)
              claims.push_back(claim_row("LN over-fits when data is scarce (" + size_label(size) + ")",
                                         "over-fits at 1M tokens", std::to_string(over) + " of " +
                                             std::to_string(g.runs.size()) + " seeds over-fit",
                                         over == (int)g.runs.size() ? "reproduced" : "not reproduced", line));
          }
          else if (w == widths.front())
            untestable.push_back("The data-scarce regime: no subset of this grid is seen " + fmt(kScarcePasses, "%g") +
                                 "+ times (the smallest, " + size_label(size) + ", " +
                                 fmt(passes(steps, batch, seq, bytes_of(size)), "%.0f") + " passes)");
        }
      }
      tables.push_back({{"size", size_label(size)},
                        {"passes", fmt(passes(steps, batch, seq, bytes_of(size)), "%.1f")},
                        {"ln_best", ln_best},
                        {"rows", rows}});
    }
    phase.push_back({{"width", w}, {"tables", tables}});
  }
  // the paper's alpha0 sweep at the base width: each alpha0's change against LN per
  // subset, and the paper's direction judged by the largest alpha0 against the smallest
  json sweep_rows = json::array(), sweep_lines = json::array();
  // the paper's sweep, in alpha0 order
  std::vector<const PaperArm*> paper_sweep;
  for (const PaperArm& pa : kPaperArms)
    if (std::isfinite(pa.alpha0)) paper_sweep.push_back(&pa);
  std::sort(paper_sweep.begin(), paper_sweep.end(),
            [](const PaperArm* a, const PaperArm* b) { return a->alpha0 < b->alpha0; });
  auto ends = [](const Group& g) { return g.each([](const Run& r) { return r.val_end; }); };
  for (int64_t size : sizes) {
    const Group* ln = find_group(groups, "gpt", reference, size, base_width);
    std::vector<std::pair<const PaperArm*, const Group*>> swept;
    for (const PaperArm* pa : paper_sweep)
      if (const Group* g = find_group(groups, "gpt", pa->label, size, base_width)) swept.push_back({pa, g});
    if (!ln || swept.size() < 2) continue;
    const DataRegime regime = data_regime(passes(steps, batch, seq, bytes_of(size)));
    // the sweep's numbers are the paper's 1M and 118M cells only
    auto paper_of = [&](const PaperArm& pa) {
      return regime == DataRegime::Scarce || regime == DataRegime::Rich ? pa.in(regime) : NAN;
    };
    for (const auto& [pa, g] : swept)
      sweep_rows.push_back({{"size", size_label(size)},
                            {"passes", fmt(passes(steps, batch, seq, bytes_of(size)), "%.1f")},
                            {"alpha0", fmt(pa->alpha0, "%g")},
                            {"here", comparison_text(compare_paired(g->seeds(), ends(*g), ln->seeds(), ends(*ln)))},
                            {"paper", pct(paper_of(*pa))}});
    const auto& [low, low_g] = swept.front();
    const auto& [high, high_g] = swept.back();
    const ClaimVerdict v = alpha0_direction(size_label(size), low->alpha0, high->alpha0, paper_of(*low),
                                            paper_of(*high), compare_paired(high_g->seeds(), ends(*high_g),
                                                                            low_g->seeds(), ends(*low_g)),
                                            seeds_not_trained(*low_g, ln, unigram) +
                                                seeds_not_trained(*high_g, ln, unigram));
    sweep_lines.push_back(v.text);
    if (regime != DataRegime::Scarce && regime != DataRegime::Rich) continue;  // no sweep number there
    summary.push_back("alpha0 sweep: " + v.text);
    (v.verdict == Verdict::Reproduced ? reproduced : v.verdict == Verdict::NotReproduced ? not_reproduced : untestable)
        .push_back("the alpha0 sweep's direction: " + v.text);
    claims.push_back(claim_row(
        "alpha0 " + fmt(high->alpha0, "%g") + " against " + fmt(low->alpha0, "%g") + ", " + regime_name(regime) + " (" +
            size_label(size) + ")",
        pct(paper_of(*high)) + " vs " + pct(paper_of(*low)),
        comparison_text(compare_paired(high_g->seeds(), ends(*high_g), low_g->seeds(), ends(*low_g))),
        status_of(v.verdict), v.text,
        v.verdict == Verdict::Untestable
            ? "a seed did not train in " +
                  std::to_string(seeds_not_trained(*low_g, ln, unigram) + seeds_not_trained(*high_g, ln, unigram)) +
                  " of " + std::to_string(low_g->runs.size() + high_g->runs.size()) + " runs"
            : ""));
  }
  view["sweep_rows"] = sweep_rows;
  view["sweep_lines"] = sweep_lines;
  view["sweep"] = !sweep_rows.empty();
  // the section only where the grid has an arm of the sweep; its sentence quotes the
  // paper's sweep from kPaperArms, so the table and the prose cannot disagree
  bool any_swept = false;
  for (const Group& g : groups)
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

  for (const Group& g : groups) {
    if (g.model != "gpt") continue;
    auto at = [&](std::optional<double> RegimeRun::*figure) {
      return range_text(g.each([&](const Run& r) { return (r.rec.*figure).value_or(NAN); }), "%.3g");
    };
    auto noise = [&](const char* eps) {
      return range_text(g.each([&](const Run& r) {
                          const auto& n = r.rec.noise_end;
                          return n && n->count(eps) ? n->at(eps) : NAN;
                        }),
                        "%.3g");
    };
    instrument_rows.push_back({{"width", g.width},
                               {"size", size_label(g.size)},
                               {"arm", g.arm},
                               {"sat_end", at(&RegimeRun::sat_end)},
                               {"erank", at(&RegimeRun::erank_end)},
                               {"noise01", noise("0.01")},
                               {"noise1", noise("0.1")},
                               {"logit_var", at(&RegimeRun::logit_variance_end)},
                               {"alpha", at(&RegimeRun::alpha_end)}});
  }
  const ScreenJudgement sj = judge_screen(screen, kScreenThreshold);
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
  view["screen_plot"] = plotted && std::any_of(screen.begin(), screen.end(),
                                               [](const ScreenCell& c) { return std::isfinite(c.saturation); });
  view["screen_any"] = !screen_rows.empty();
  view["no_help"] = dyt_cells > 0 && dyt_helped == 0;
  // the rule is judged only where its prediction differs between cells; and its cells
  // share arms and LN baselines, so they are not independent trials
  const std::string screen_untested = screen_untestable(screen, kScreenThreshold);
  view["screen_untestable"] = screen_untested;
  if (dyt_cells > 0 && !screen_untested.empty()) {
    const std::string line = "Screening rule (saturation > " + fmt(kScreenThreshold, "%.2f") + " at step " +
                             std::to_string(results.screen_step) +
                             " predicts that DyT helps): " + screen_untested + " of " + std::to_string(sj.cells) +
                             " (DyT helped in " + std::to_string(sj.helped) +
                             "), so its accuracy measures how often DyT helped, not the rule";
    summary.push_back(line);
    untestable.push_back(line);
    claims.push_back(claim_row("the step-500 saturation screen predicts when DyT helps", "saturation > 0.43", "-",
                               "untestable here", line, screen_untested.substr(std::string("untestable: ").size())));
  } else if (dyt_cells > 0) {
    // the rule is reproduced only when its right calls are more than chance would give
    claims.push_back(claim_row("the step-500 saturation screen predicts when DyT helps", "saturation > 0.43",
                               "right in " + std::to_string(sj.correct) + " of " + std::to_string(sj.cells) +
                                   " cells (Wilson 95 % " + fmt(100.0 * sj.accuracy_ci.lo, "%.0f") + "-" +
                                   fmt(100.0 * sj.accuracy_ci.hi, "%.0f") + " %)",
                               sj.accuracy_ci.lo > 0.5 ? "reproduced" : "not reproduced",
                               "cells share arms and LN baselines: the interval treats them as independent"));
    summary.push_back(
        "Screening rule (saturation > " + fmt(kScreenThreshold, "%.2f") + " at step " +
        std::to_string(results.screen_step) + " predicts that DyT helps): right in " +
        std::to_string(sj.correct) + " of " + std::to_string(sj.cells) + " DyT cells (" +
        fmt(100.0 * sj.accuracy(), "%.0f") + " %, Wilson 95 % interval " + fmt(100.0 * sj.accuracy_ci.lo, "%.0f") +
        "-" + fmt(100.0 * sj.accuracy_ci.hi, "%.0f") +
        " %, an interval that treats the cells as independent, which they are not: they share arms and LN "
        "baselines); Spearman rank correlation of saturation with DyT's change against LN: " +
        sv["spearman"].get<std::string>());
    if (dyt_helped == 0)
      summary.push_back("**DyT helped in no cell** (its mean over seeds was above LN's everywhere), so the rule's "
                        "claim that saturation predicts help cannot be judged here: it can only be right by "
                        "predicting no help.");
  }
  for (const json& row : paper_rows) summary.push_back(row["arm"].get<std::string>() + " against " + reference + ", " +
                                                       row["regime"].get<std::string>() + " (" +
                                                       row["size"].get<std::string>() + "): paper " +
                                                       row["paper"].get<std::string>() + ", here " +
                                                       row["here"].get<std::string>() +
                                                       row["caveat"].get<std::string>());

  // the Llama collapse arms: a run collapsed when it failed or its training loss ended
  // above kStuckLoss (regime_analysis.h: collapsed; over-fitting is not collapse)
  json llama_rows = json::array();
  auto run_collapsed = [](const Run& r) {
    return collapsed(r.failed, r.rec.train_end.value_or(NAN), r.curve);
  };
  for (const Group& g : groups) {
    if (!g.llama) continue;
    std::vector<double> sat_c, sat_ok, val_ok, train_end;
    int n_c = 0;
    for (const Run& r : g.runs) {
      const double s = r.rec.sat_screen.value_or(NAN);
      train_end.push_back(r.rec.train_end.value_or(NAN));
      if (run_collapsed(r)) ++n_c, sat_c.push_back(s);
      else sat_ok.push_back(s), val_ok.push_back(r.val_end);
    }
    llama_rows.push_back({{"size", size_label(g.size)},
                          {"arm", g.arm},
                          {"collapsed", std::to_string(n_c) + " of " + std::to_string(g.runs.size())},
                          {"val_ok", range_text(val_ok, "%.4f")},
                          {"train_end", range_text(train_end, "%.3f")},
                          {"sat_collapsed", range_text(sat_c, "%.3f")},
                          {"sat_ok", range_text(sat_ok, "%.3f")}});
    summary.push_back("Llama collapse, " + g.arm + " on " + size_label(g.size) + ": " + std::to_string(n_c) + " of " +
                      std::to_string(g.runs.size()) + " seeds collapsed (paper, Llama + DyT 64M: 1 of 3)");
  }
  // the paper's Llama claims per subset: SwiGLU + DyT collapses, a GELU MLP rescues it
  // (DyT's: the arms whose norm declares Verma's screen, fitted on DyT runs)
  {
    std::map<std::string, bool> gelu_arm;  // label -> its flags name a GELU MLP
    for (const RegimeArm& a : results.llama_arms)
      gelu_arm[a.label] = (" " + a.flags + " ").find(" --mlp gelu ") != std::string::npos;
    for (int64_t size : sizes) {
      CollapseCount swiglu, gelu;
      for (const Group& g : groups) {
        if (!g.llama || g.size != size || g.runs.empty() || !screened(g.runs.front())) continue;
        CollapseCount& c = gelu_arm[g.arm] ? gelu : swiglu;
        for (const Run& r : g.runs) c.runs += 1, c.collapsed += run_collapsed(r) ? 1 : 0;
      }
      const DataRegime regime = data_regime(passes(steps, batch, seq, bytes_of(size)));
      for (const ClaimVerdict& v : llama_verdicts(size_label(size), swiglu, gelu, regime)) {
        (v.verdict == Verdict::Reproduced      ? reproduced
         : v.verdict == Verdict::NotReproduced ? not_reproduced
                                               : untestable)
            .push_back(v.text);
        const bool rescue = v.text.find("GELU") != std::string::npos;
        claims.push_back(claim_row(
            std::string(rescue ? "a GELU MLP rescues Llama + DyT" : "Llama + DyT collapses in some seeds") + " (" +
                size_label(size) + ")",
            rescue ? "rescued (118M tokens)" : "1 of 3 seeds",
            rescue ? "GELU " + std::to_string(gelu.collapsed) + " of " + std::to_string(gelu.runs) + ", SwiGLU " +
                         std::to_string(swiglu.collapsed) + " of " + std::to_string(swiglu.runs) + " collapsed"
                   : std::to_string(swiglu.collapsed) + " of " + std::to_string(swiglu.runs) + " seeds",
            status_of(v.verdict), v.text,
            v.verdict != Verdict::Untestable                        ? ""
            : v.text.find("nothing to rescue") != std::string::npos ? "SwiGLU + DyT never collapsed"
            : rescue                                                ? "the paper tested it at 118M tokens only"
                     : "the paper tested it at 1M and 118M tokens only"));
      }
    }
  }
  view["untestable"] = untestable;
  view["llama_rows"] = llama_rows;
  view["llama"] = !llama_rows.empty();
  view["llama_note"] = results.llama_note;
  // --kept-only: the grid's cells no results file had, one line per kind with its seeds
  std::vector<std::pair<std::string, std::string>> missing;  // kind, its seeds
  const std::vector<NotRunCell> not_run_cells = results.not_run.value_or(std::vector<NotRunCell>{});
  for (const NotRunCell& cell : not_run_cells) {
    const std::string kind = cell.cell, seed = std::to_string(cell.seed);
    auto it = std::find_if(missing.begin(), missing.end(), [&](const auto& m) { return m.first == kind; });
    if (it == missing.end()) missing.push_back({kind, seed});
    else it->second += ", " + seed;
  }
  json not_run = json::array();
  for (const auto& [kind, seeds] : missing) not_run.push_back(kind + " (seeds " + seeds + ")");
  view["not_run"] = not_run;
  view["not_run_count"] = not_run_cells.size();
  view["stuck"] = fmt(kStuckLoss, "%.1f");
  view["train_end_steps"] = std::to_string(kTrainEndSteps);

  // the ViT arm: accuracy (higher is better): the paired comparison of the error rates
  json vit_rows = json::array();
  std::vector<int64_t> images;
  for (const Group& g : groups)
    if (g.model == "vit" && !std::count(images.begin(), images.end(), g.size)) images.push_back(g.size);
  std::sort(images.begin(), images.end(),
            [](int64_t a, int64_t b) { return (a < 0 ? INT64_MAX : a) < (b < 0 ? INT64_MAX : b); });
  for (int64_t n : images) {
    const Group* ln = find_group(groups, "vit", reference, n, 0);
    for (const Group& g : groups) {
      if (g.model != "vit" || g.size != n) continue;
      auto best_acc = [](const Run& r) {
        double b = NAN;
        for (const CurvePoint& p : r.acc) b = std::isfinite(b) ? std::max(b, p.value) : p.value;
        return b;
      };
      auto end_acc = [](const Run& r) { return r.acc.empty() ? NAN : r.acc.back().value; };
      auto err = [](std::vector<double> v) {
        for (double& x : v) x = 1.0 - x;
        return v;
      };
      json row = {{"images", n < 0 ? std::string("all") : std::to_string(n)},
                  {"arm", g.arm},
                  {"best", range_text(g.each(best_acc), "%.4f")},
                  {"end", range_text(g.each(end_acc), "%.4f")},
                  {"min_loss", range_text(g.each([](const Run& r) { return overfit_of(r.curve).min_value; }), "%.4f")},
                  {"end_loss", range_text(g.each([](const Run& r) { return overfit_of(r.curve).end_value; }), "%.4f")},
                  {"vs", "-"},
                  {"vs_best", "-"},
                  {"not_trained", "-"}};
      if (ln && g.arm != reference) {
        auto vs = [&](auto acc_of) {
          const PairedComparison c = compare_paired(g.seeds(), err(g.each(acc_of)), ln->seeds(), err(ln->each(acc_of)));
          const double pp = 100.0 * (mean_of(g.each(acc_of)) - mean_of(ln->each(acc_of)));
          return std::make_pair(c, pp);
        };
        const auto [ce, pe] = vs(end_acc);
        const auto [cb, pb] = vs(best_acc);
        auto text = [](const PairedComparison& c, double pp) {
          return fmt(pp, "%+.1f") + " points, " + std::to_string(c.wins) + "/" + std::to_string(c.n) +
                 " seeds higher, p = " + fmt(c.p_sign, "%.3g") + ": " + paired_text(c.verdict);
        };
        row["vs"] = text(ce, pe);
        row["vs_best"] = text(cb, pb);
        // the paper takes the best of its evaluations: the verdict is on each run's best accuracy
        constexpr double kChance = 0.1;  // Fashion-MNIST's 10 classes
        const double ln_best = mean_of(ln->each(best_acc));
        int not_trained = 0;
        for (const Run& r : g.runs) not_trained += vit_did_not_train(r.failed, best_acc(r), kChance, ln_best);
        row["not_trained"] = std::to_string(not_trained) + " of " + std::to_string(g.runs.size());
        const ClaimVerdict v = vit_claim("ViT " + g.arm + " against " + reference + " on " +
                                             row["images"].get<std::string>() + " images, best validation accuracy",
                                         kPaperVitPoints, pb, cb, not_trained, (int)g.runs.size());
        summary.push_back(v.text + " (at the end: " + text(ce, pe) + "; the paper: CIFAR-10 ViT-Small, one seed, "
                          "81.2 % vs 72.4 %)");
        (v.verdict == Verdict::Reproduced ? reproduced : v.verdict == Verdict::NotReproduced ? not_reproduced
                                                                                             : untestable)
            .push_back(v.text);
        claims.push_back(claim_row(
            "ViT " + g.arm + " against " + reference + ", best accuracy (" + row["images"].get<std::string>() +
                " images)",
            fmt(kPaperVitPoints, "%+.1f") + " points", fmt(pb, "%+.1f") + " points", status_of(v.verdict), v.text,
            v.verdict == Verdict::Untestable ? untestable_why(not_trained, (int)g.runs.size(), cb) : ""));
      }
      vit_rows.push_back(row);
    }
  }
  view["size_rows"] = size_rows;
  view["phase"] = phase;
  view["overfit_rows"] = overfit_rows;
  view["instrument_rows"] = instrument_rows;
  view["paper_rows"] = paper_rows;
  view["paper_table"] = !paper_rows.empty();
  // the arms of --grid full this grid has no run of, named (none on the full grid)
  std::string absent_arms;
  for (const std::string& label : full_grid_gpt_labels()) {
    const bool present = std::any_of(groups.begin(), groups.end(),
                                     [&](const Group& g) { return g.model == "gpt" && g.arm == label; });
    if (!present) absent_arms += (absent_arms.empty() ? "" : ", ") + ("`" + label + "`");
  }
  view["absent_arms"] = absent_arms;
  view["vit_rows"] = vit_rows;
  view["vit"] = !vit_rows.empty();
  view["vit_plot"] = plotted && !vit_rows.empty();
  view["summary"] = summary;
  view["reproduced"] = reproduced;
  view["not_reproduced"] = not_reproduced;
  view["total_bytes"] = total_bytes;
  view["claims"] = claims;
  return view;
}

}  // namespace

std::string render_regime_report(const RegimeResults& results, bool plotted, const std::string& plot_stem) {
  return render_template(kTemplate, regime_view(results, plotted, plot_stem), "studies/regime/regime.md.in");
}

json regime_claims(const RegimeResults& results) { return regime_view(results, false, "regime")["claims"]; }


// The plots' data: the end validation loss (mean over seeds) per size of every GPT arm of
// the page, each width and the Llama arms included (a page's plot draws its own cells:
// the width pages' curves are their widths'), each DyT cell's screen saturation against
// its outcome, and the ViT arms' best validation accuracy per training-set size.
std::string plot_label(const Group& g, int64_t base_width) {
  return g.width == base_width ? g.arm : g.arm + " w" + std::to_string(g.width);
}

void write_plot_csvs(const std::string& out, const RegimeResults& results) {
  const std::vector<Group> groups = groups_of(results);
  const int64_t base = results.dim, total = results.train_bytes_all;
  std::vector<const Group*> curves;  // first appearance order: the grid's arm order
  std::set<int64_t> sizes;
  for (const Group& g : groups)
    if (g.model == "gpt") {
      if (std::none_of(curves.begin(), curves.end(),
                       [&](const Group* c) { return plot_label(*c, base) == plot_label(g, base); }))
        curves.push_back(&g);
      sizes.insert(g.size < 0 ? total : g.size);
    }
  std::string text = "bytes";
  for (const Group* c : curves) text += "," + plot_label(*c, base);
  text += "\n";
  for (int64_t s : sizes) {
    text += std::to_string(s);
    for (const Group* c : curves) {
      const Group* g = find_group(groups, "gpt", c->arm, s == total ? -1 : s, c->width);
      if (!g) g = find_group(groups, "gpt", c->arm, s, c->width);
      text += "," + (g ? fmt(mean_of(g->each([](const Run& r) { return r.val_end; })), "%.6g") : std::string("NaN"));
    }
    text += "\n";
  }
  write_text_file(out + "/regime_loss.csv", text);
  // the ViT arms: best validation accuracy per training-set size ("all": Fashion-MNIST's
  // 60 000 training images less the 5 000 train_vit holds out)
  constexpr int64_t kVitAllImages = 55000;
  std::vector<std::string> vit_arms;
  std::set<int64_t> images;
  for (const Group& g : groups)
    if (g.model == "vit") {
      if (!std::count(vit_arms.begin(), vit_arms.end(), g.arm)) vit_arms.push_back(g.arm);
      images.insert(g.size < 0 ? kVitAllImages : g.size);
    }
  std::string vit = "images";
  for (const std::string& a : vit_arms) vit += "," + a;
  vit += "\n";
  for (int64_t n : images) {
    vit += std::to_string(n);
    for (const std::string& a : vit_arms) {
      const Group* g = find_group(groups, "vit", a, n == kVitAllImages ? -1 : n, 0);
      if (!g) g = find_group(groups, "vit", a, n, 0);
      const double best = g ? mean_of(g->each([](const Run& r) {
        double b = NAN;
        for (const CurvePoint& p : r.acc) b = std::isfinite(b) ? std::max(b, p.value) : p.value;
        return b;
      }))
                            : NAN;
      vit += "," + fmt(100.0 * best, "%.6g");
    }
    vit += "\n";
  }
  write_text_file(out + "/regime_vit.csv", vit);
  std::string sat = "saturation,percent\n";
  const std::string reference = results.reference;
  for (const Group& g : groups) {
    if (g.model != "gpt" || g.llama || g.arm == reference) continue;
    const Group* ln = find_group(groups, "gpt", reference, g.size, g.width);
    const double s = mean_of(g.each([](const Run& r) { return r.rec.sat_screen.value_or(NAN); }));
    if (!ln || !std::isfinite(s) || !screened(g.runs.front())) continue;
    const PairedComparison c = compare_paired(g.seeds(), g.each([](const Run& r) { return r.val_end; }), ln->seeds(),
                                              ln->each([](const Run& r) { return r.val_end; }));
    if (std::isfinite(c.percent)) sat += fmt(s, "%.6g") + "," + fmt(c.percent, "%.6g") + "\n";
  }
  write_text_file(out + "/regime_screen.csv", sat);
}

}  // namespace nl
