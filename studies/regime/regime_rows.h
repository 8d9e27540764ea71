// The regime report's rows and the verdict on each: a cell's runs grouped over their
// seeds, each group's row of the phase table (studies/regime/regime.md.in words it), the
// paper's number beside it and the rule that judges the pair. A cell's path to its
// report line is regime_run.cpp (the cell's record), this file's phase_tables (its row and
// verdict), regime.md.in (the row's words); regime_report.cpp only joins the sections.
// The rules are small functions with their own tests (tests/studies/test_regime_study.cpp)
// on made-up cells; the statistics they call are regime_analysis.h's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/regime/regime_analysis.h"
#include "studies/regime/regime_records.h"

namespace nl {

// ---------------------------------------------------------------- the verdict rules

// A phase-table row's status over its seeds' runs: "N failed" (no finished run), "N
// stuck near unigram" (its best validation loss stayed above kStuckLoss: it never
// learnt more than byte frequencies), "N over-fit" (it learnt, then its validation loss
// rose by more than kOverfitMargin: the data-scarce regime), joined by ", "; "ok" when
// none. A run that learnt and then over-fitted past the unigram loss is over-fit, not stuck.
std::string regime_row_status(const std::vector<bool>& failed, const std::vector<Curve>& curves);

// The paper's Llama collapse ("fails to converge") judged on training loss, so that the
// data-scarce regime's over-fitting (validation loss rising far above the unigram level
// while the training loss keeps falling) is not counted: a run collapsed when it failed,
// or its training loss at the end (`train_end`, the mean of its last logged steps) is above
// kStuckLoss. Without a training loss (NaN: a summary from before it was recorded) the
// validation curve decides: collapsed when its best value stayed above kStuckLoss.
bool collapsed(bool failed, double train_end, const Curve& val_curve);

// The paper's two Llama claims on one subset (Verma 2026: Llama + DyT fails to converge
// in 1 of 3 seeds; a GELU MLP in place of SwiGLU rescues it), from the collapse counts of
// the SwiGLU + DyT arm and of the GELU + DyT arm (gelu.runs == 0: no such arm). A collapse
// in every seed is not the paper's "in some seeds": not reproduced. Each
// verdict is reproduced, not reproduced, or untestable: the rescue cannot be judged when
// SwiGLU + DyT never collapsed.
struct CollapseCount {
  int collapsed = 0, runs = 0;
};
enum class Verdict { Reproduced, NotReproduced, Untestable };
struct ClaimVerdict {  // one claim of the paper judged, and the sentence that says so
  Verdict verdict;
  std::string text;
};
// The paper ran the collapse at 1M and 118M tokens and the GELU rescue at 118M only
// (its r5 ablation): a collapse verdict needs `regime` Scarce or Rich, a rescue verdict
// Rich; elsewhere the claim is untestable here, said as such.
// A collapse count of none or all, weighed against the paper's rate (1 of 3 seeds): ";
// at that rate no collapse in 6 seeds happens 8.8 % of the time", so that a "not
// reproduced" on few seeds says how weak it is; "" for any other count.
constexpr double kPaperCollapseRate = 1.0 / 3.0;
std::string chance_at_paper_rate(CollapseCount c);
std::vector<ClaimVerdict> llama_verdicts(const std::string& size, CollapseCount swiglu, CollapseCount gelu,
                                         DataRegime regime);

// The paper's alpha0 claim on one subset (Verma 2026's sweep: from alpha0 0.5 to 3, DyT's
// change against LN falls on all the data, +42.0 % to +15.5 %, and rises on 1M tokens,
// -33.6 % to -20.5 %, though not at every step): the largest alpha0 of the sweep against the smallest,
// paired by seed (`high_vs_low`: compare_paired of the largest's end losses against the
// smallest's). The paper's direction is the sign of paper_high - paper_low (its changes
// against LN at the two alpha0s). Reproduced when every seed goes the paper's way; not
// reproduced when every seed goes the other way or the seeds disagree; untestable when
// the paper has no number there, its two numbers are equal, no seed ran both, or a seed
// of either arm did not train (`not_trained`, did_not_train's count over both arms).
ClaimVerdict alpha0_direction(const std::string& size, double alpha_low, double alpha_high, double paper_low,
                              double paper_high, const PairedComparison& high_vs_low, int not_trained = 0);

// An arm's change against LayerNorm judged against the paper's number in one of the
// paper's regimes. `primary` is the comparison the verdict rests on (in the data-scarce
// regime each model at its own best validation step, as early stopping would keep it;
// in the data-rich regime the end of the run, as the paper reports). Untestable, saying
// "did not train in k of n seeds", when any seed of the arm did not train; untestable
// without a paper number or a paired seed; reproduced when every seed moves the paper's
// way; not reproduced otherwise. Fewer than kMinSeeds paired seeds: untestable (one
// seed cannot tell an effect from noise).
constexpr int kMinSeeds = 3;
ClaimVerdict arm_claim(const std::string& what, double paper_percent, const PairedComparison& primary, int not_trained,
                       int seeds);

// The ViT claim (Verma 2026: DyT +8.8 points of validation accuracy over LN, CIFAR-10
// ViT-Small, one seed, the best of its evaluations), judged on each run's best validation
// accuracy: `best_error` is compare_paired of the arm's 1 - best accuracy against LN's
// (wins: seeds where the arm's best accuracy is higher), `points` the mean change in
// accuracy points. Untestable when a seed did not train (vit_did_not_train), with fewer
// than kMinSeeds paired seeds, or without a paper number; reproduced when every seed moves
// the paper's way; not reproduced otherwise.
ClaimVerdict vit_claim(const std::string& what, double paper_points, double points, const PairedComparison& best_error,
                       int not_trained, int seeds);

// A ViT seed that did not train: it failed, or its best validation accuracy closed less
// than kTrainedShare of the gap from chance (1 / classes) up to LN's best accuracy.
bool vit_did_not_train(bool failed, double best_accuracy, double chance, double ln_best);

// A claim's status in the "what reproduces" table: "reproduced", "not reproduced",
// "untestable here", or "artefact": a data-scarce claim not reproduced at each model's
// own best step whose end-of-run comparison (`end`) goes the paper's way in every seed,
// so that LN's over-fitting, not the arm, made the paper's sign.
std::string claim_status(Verdict v, bool scarce, const PairedComparison& end, double paper_percent);

// The screening rule can only be judged where its prediction differs between cells: ""
// when it does, else "untestable: it predicted <helps | does not help> in every cell".
std::string screen_untestable(const std::vector<ScreenCell>& cells, double threshold);

// ---------------------------------------------------------------- the rows

// One run of the grid as the report reads it, and the runs of one (model, width, size,
// arm) over their seeds.
struct ReportRun {
  std::string model, arm;
  int64_t size, width, seed;
  bool llama, failed;
  double val_end;
  Curve curve, acc;  // validation loss; validation accuracy (ViT runs)
  RegimeRun rec;     // the whole record: its instruments
};
struct RunGroup {
  std::string model, arm;
  int64_t size, width;
  bool llama;
  std::vector<ReportRun> runs;
  std::vector<int64_t> seeds() const;
  template <class F>
  std::vector<double> each(F f) const {
    std::vector<double> v;
    for (const ReportRun& r : runs) v.push_back(f(r));
    return v;
  }
};

// The grid as the sections read it: its groups in the order of the results file, the GPT
// widths (ascending) and sizes (by bytes), and the validation split's unigram loss.
struct ReportGrid {
  const RegimeResults& results;
  std::vector<RunGroup> groups;
  std::vector<int64_t> widths, sizes;
  double unigram;
  explicit ReportGrid(const RegimeResults& r);
  int64_t bytes_of(int64_t size) const;  // a size of -1 is all the data
  double passes_of(int64_t size) const;
  const RunGroup* find(const std::string& model, const std::string& arm, int64_t size, int64_t width) const;
};

// What the sections add to the page's lists, in page order: summary lines, verdict
// sentences by kind, and the rows of the "what reproduces" table.
struct ReportFindings {
  nlohmann::json summary = nlohmann::json::array(), reproduced = nlohmann::json::array(),
                 not_reproduced = nlohmann::json::array(), untestable = nlohmann::json::array(),
                 claims = nlohmann::json::array();
  void file(Verdict v, const std::string& sentence);  // into the list of its kind
};

// The mean of the finite values; NaN for none.
double mean_of(const std::vector<double>& v);
// A ViT run's best validation accuracy over its evaluations (the paper's figure); NaN for none.
double best_accuracy(const ReportRun& r);

// The sections, each filling its keys of the report's view (regime.md.in names them).
// phase_tables: per width and size, LN's over-fitting and each arm's row against LN, the
// paper's row and verdict beside it; screen_judgement: the screen's cells (each arm of a
// screened norm against LN at the end) and the rule judged on them.
void phase_tables(const ReportGrid& grid, nlohmann::json& view, ReportFindings& findings);
void alpha0_sweep(const ReportGrid& grid, nlohmann::json& view, ReportFindings& findings);
void instrument_rows(const ReportGrid& grid, nlohmann::json& view);
void screen_judgement(const ReportGrid& grid, nlohmann::json& view, ReportFindings& findings);
void llama_rows(const ReportGrid& grid, nlohmann::json& view, ReportFindings& findings);
void vit_rows(const ReportGrid& grid, nlohmann::json& view, ReportFindings& findings);

// The arms of a screened norm (NormKind::screened) are those the saturation screen judges.
bool screened(const RunGroup& g);

}  // namespace nl
