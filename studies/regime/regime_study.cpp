#include "studies/regime/regime_study.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "nn/block.h"
#include "nn/norms/registry.h"
#include "studies/grid/grid.h"
#include "studies/instruments/screening.h"
#include "studies/grid/commands.h"
#include "studies/regime/regime_analysis.h"
#include "studies/regime/regime_records.h"
#include "studies/regime/regime_report.h"
#include "studies/report/study.h"
#include "studies/report/template.h"
#include "studies/report/verdicts.h"
#include "tensor/error.h"
#include "train/data/text_data.h"
#include "train/flags/gpt_flags.h"
#include "train/io/files.h"
#include "train/io/run_dir.h"
#include "train/io/run_log.h"
#include "train/loop/result_record.h"
#include "train/safety/distributed.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;


// The arms of issue 17, item 2. All-DyT is the paper's form: DyT at every site, the
// final norm included, the paper's alpha0 sweep. The hybrid is this project's earlier
// recipe (DyT blocks, a LayerNorm final norm, the embedding scale sqrt(width) of
// docs/results/dyt_start.md), labelled as such. The paper's HardTanh has no alpha
// (gamma clip(x, -1, 1)); ours learns an alpha, started at 1 so that it begins as the
// paper's clip.
const std::vector<std::string> kFullArms = {
    "ln=--norm ln",
    "dyt-a0.5=--norm dyt --dyt-alpha0 0.5",
    "dyt-a1=--norm dyt --dyt-alpha0 1",
    "dyt-a2=--norm dyt --dyt-alpha0 2",
    "dyt-a3=--norm dyt --dyt-alpha0 3",
    "hybrid-a2=--norm dyt --dyt-alpha0 2 --final-norm ln --emb-scale sqrt",
    "hardtanh-a1=--norm hardtanh --hardtanh-alpha0 1",
    "ln-drop0.1=--norm ln --dropout 0.1",
    "ln-drop0.3=--norm ln --dropout 0.3",
    "ln-drop0.5=--norm ln --dropout 0.5",
    "diff=--norm ln --attn diff",
};
// The default grid's arms: LN, all-DyT at alpha0 2 (the paper's model), and Differential
// Attention (the paper's contrast case, alpha-independent); the hybrid and the rest are
// --grid full's, so that the default grid fits 90 minutes on 2 cores.
const std::vector<std::string> kSmallArms = {kFullArms[0], kFullArms[3], kFullArms[10]};
// The paper's Llama collapse (Verma 2026: Llama + DyT, 1 of 3 seeds fails to converge;
// a GELU MLP in place of SwiGLU rescues it): the recipe branch's Llama block with RMSNorm,
// with all-DyT at the paper's alpha0 2, and the same without SwiGLU. These need
// `train_gpt --block llama`; a build without it leaves them out of --grid full.
const std::vector<std::string> kLlamaArms = {
    "llama-rms=--block llama --norm rms",
    "llama-dyt-a2=--block llama --norm dyt --dyt-alpha0 2",
    "llama-dyt-a2-gelu=--block llama --norm dyt --dyt-alpha0 2 --mlp gelu",
};
const std::vector<std::string> kVitArms = {"ln=--norm ln", "dyt-a0.5=--norm dyt --dyt-alpha0 0.5"};

// ---------------------------------------------------------------- a cell's files

// a cell's log.csv; none for a run refused before its first write (its curves are empty)
std::optional<LogTable> cell_log(const std::string& dir) {
  const std::string path = dir + "/log.csv";
  if (!fs::exists(path)) return std::nullopt;
  return read_log(path);
}

Curve points(const std::optional<LogTable>& log, const std::string& column) {
  Curve out;
  if (log)
    for (const auto& [step, value] : log->column(column)) out.push_back({step, value});
  return out;
}

// a figure of measurements.json (null, or absent: NaN)
double figure_of(const json& v) { return v.is_number() ? v.get<double>() : NAN; }

// What the report needs of a finished GPT cell: the validation curve and the
// instruments' summaries at step 500 and at the end (measurements.json).
void summarize_gpt(const std::string& dir, int64_t steps, int64_t screen_step, RegimeRun& run) {
  const std::optional<LogTable> log = cell_log(dir);
  run.curve = points(log, kValLoss);
  // the training loss at the end, for the Llama collapse criterion (regime_analysis.h: collapsed)
  std::vector<double> train;
  for (const CurvePoint& p : points(log, kTrainLoss)) train.push_back(p.value);
  run.train_end = tail_mean(train, kTrainEndSteps);
  const std::string path = dir + "/measurements.json";
  json m = fs::exists(path) ? json::parse(read_text_file(path, "measurements"), nullptr, false) : json();
  auto summary_at = [&](int64_t step) -> json {
    const std::string key = std::to_string(step);
    return m.is_object() && m.contains(key) ? m[key]["summary"] : json();
  };
  const json s500 = summary_at(screen_step), end = summary_at(steps);
  auto sat = [](const json& s) {
    return s.is_object() && s.contains("saturation") && s["saturation"].is_object()
               ? figure_of(s["saturation"].value("gt2", json()))
               : NAN;
  };
  run.sat_screen = sat(s500);
  run.sat_end = sat(end);
  // every instrument of the end, NaN where it was not measured (RegimeRun: a finished
  // GPT cell's record has them all)
  const json& e = end.is_object() ? end : json::object();
  run.erank_end = figure_of(e.value("effective_rank_mean", json()));
  run.logit_variance_end = figure_of(e.value("logit_variance", json()));
  run.alpha_end = figure_of(e.value("alpha_mean", json()));
  run.noise_end.emplace();
  for (const auto& n : e.value("noise_stability", json::array()))
    (*run.noise_end)[fmt(n.value("eps", NAN), "%g")] = figure_of(n.value("mean", json()));
}

// The finished cells of an earlier invocation (--cells-from: its results.json, or the
// copy beside its report) that this grid would train again: for each planned cell, the
// index of the earlier run of the same cell (model, arm label and flags, subset, width,
// seed) that ended without a fault, or -1. The earlier invocation must have had this
// one's recipe (every train_gpt flag the grid does not set, the ViT steps, the screen
// step): it throws naming the first difference, since its cells then measure something
// else. runs/ is not kept between machines or sessions; this file is, so a grid too long
// for one sitting grows a block at a time from the committed results.
std::vector<int> earlier_cells(const RegimeResults& earlier, const std::string& path,
                               const std::vector<RegimeCell>& plan_cells, const nlohmann::ordered_json& recipe,
                               const std::vector<std::string>& recipe_keys, int64_t vit_steps, int64_t screen_step) {
  const nlohmann::ordered_json there = nlohmann::ordered_json::parse(earlier.header.recipe.dump());
  // flags added after results files were committed: a file without one ran its default
  const std::string difference =
      first_recipe_difference(there, recipe, recipe_keys, later_flag_defaults(), "there", "here");
  NL_CHECK(difference.empty(), "--cells-from ", path, ": its runs have another recipe (", difference, ")");
  NL_CHECK(earlier.vit_steps == vit_steps, "--cells-from ", path, ": its ViT cells trained --vit-steps ",
           earlier.vit_steps, ", here ", vit_steps);
  NL_CHECK(earlier.screen_step == screen_step, "--cells-from ", path, ": its screen step is ", earlier.screen_step,
           ", here ", screen_step);
  std::map<std::string, std::string> flags;  // "gpt ln" -> its flags there
  for (const auto& [list, model] : {std::pair<const std::vector<RegimeArm>*, const char*>{&earlier.arms, "gpt"},
                                    {&earlier.llama_arms, "gpt"}, {&earlier.vit_arms, "vit"}})
    for (const RegimeArm& a : *list) flags[std::string(model) + " " + a.label] = a.flags;
  std::vector<int> found(plan_cells.size(), -1);
  for (size_t i = 0; i < plan_cells.size(); ++i) {
    const RegimeCell& c = plan_cells[i];
    const std::string text = spec_text(c.arm);
    const std::string key = c.model + " " + c.arm.label;
    if (!flags.count(key) || flags[key] != text.substr(text.find('=') + 1)) continue;
    for (size_t r = 0; r < earlier.runs.size(); ++r) {
      const RegimeRun& run = earlier.runs[r];
      if (run.model == c.model && run.arm == c.arm.label && run.size == c.size && run.width == c.width &&
          run.seed == c.seed && run.llama == c.llama && run.finished()) {
        found[i] = (int)r;
        break;
      }
    }
  }
  return found;
}

}  // namespace

std::vector<std::string> full_grid_gpt_labels() {
  std::vector<std::string> labels;
  for (const auto* arms : {&kFullArms, &kLlamaArms})
    for (const RunSpec& spec : parse_run_specs(*arms)) labels.push_back(spec.label);
  return labels;
}

std::string size_label(int64_t size) {
  if (size < 0) return "all";
  if (size >= 1000000 && size % 100000 == 0) return fmt((double)size / 1e6, "%g") + "M";
  if (size >= 1000 && size % 1000 == 0 && size < 1000000) return std::to_string(size / 1000) + "K";
  return std::to_string(size);
}

std::string cell_kind(const RegimeCell& c) {
  if (c.model == "vit") return "vit " + c.arm.label + " " + size_label(c.size) + " images";
  return "gpt w" + std::to_string(c.width) + " " + size_label(c.size) + " " + c.arm.label;
}

std::string RegimeCell::folder() const {
  if (model == "vit") return "vit/" + (size < 0 ? std::string("all") : std::to_string(size)) + "/" + arm.label + "/s" +
                             std::to_string(seed);
  return "gpt/w" + std::to_string(width) + "/" + size_label(size) + "/" + arm.label + "/s" + std::to_string(seed);
}

std::vector<RegimeCell> regime_cells(const RegimePlan& plan) {
  std::vector<RegimeCell> cells;
  for (int64_t seed : plan.seeds)
    for (int64_t size : plan.sizes)
      for (const RunSpec& arm : plan.arms) cells.push_back({"gpt", arm, size, plan.width, seed});
  // the width axis and the Llama arms on the smallest and the largest subset (-1, all, is the largest)
  std::vector<int64_t> ends;
  if (!plan.sizes.empty()) {
    const bool has_all = std::count(plan.sizes.begin(), plan.sizes.end(), -1) > 0;
    std::vector<int64_t> finite;
    for (int64_t s : plan.sizes)
      if (s > 0) finite.push_back(s);
    if (!finite.empty()) ends.push_back(*std::min_element(finite.begin(), finite.end()));
    const int64_t largest = has_all ? -1 : *std::max_element(finite.begin(), finite.end());
    if (ends.empty() || ends[0] != largest) ends.push_back(largest);
    for (int64_t seed : plan.seeds)
      for (int64_t w : plan.widths) {
        if (w == plan.width) continue;
        for (int64_t size : ends)
          for (const RunSpec& arm : plan.arms)
            if (std::count(plan.width_arms.begin(), plan.width_arms.end(), arm.label))
              cells.push_back({"gpt", arm, size, w, seed});
      }
  }
  for (int64_t seed : plan.llama_seeds)
    for (int64_t size : ends)
      for (const RunSpec& arm : plan.llama_arms) cells.push_back({"gpt", arm, size, plan.width, seed, true});
  for (int64_t seed : plan.seeds)
    for (int64_t images : plan.vit_images)
      for (const RunSpec& arm : plan.vit_arms) cells.push_back({"vit", arm, images, 0, seed});
  return cells;
}

double cell_seconds(const RegimeCell& cell, int64_t steps, double gpt_step_ms, double vit_step_ms) {
  if (cell.model == "vit") {
    // an evaluation of the 5000 held-out images every 250 steps: about 13 steps' worth
    const double evals = (double)steps / 250.0 * 13.0;
    return ((double)steps + evals) * vit_step_ms / 1000.0;
  }
  // per token, the matrix products of L blocks of width d (12 d^2 weights each), the
  // attention maps (2 T d per block) and the head (256 d): relative to width 128; the
  // rest of a step grows as d (kMatmulShare)
  auto flops = [](double d) { return 4.0 * (12.0 * d * d + 2.0 * 64.0 * d) + 256.0 * d; };
  const double d = (double)cell.width;
  double scale = kMatmulShare * flops(d) / flops(128.0) + (1.0 - kMatmulShare) * d / 128.0;
  // Differential Attention's two softmax maps per head: its cells of the default grid on
  // 2026-12-02 took 609 s (median of 6) against 397-413 s for ln and dyt-a2
  for (size_t i = 0; i + 1 < cell.arm.args.size(); ++i)
    if (cell.arm.args[i] == "--attn" && cell.arm.args[i + 1] == "diff") scale *= kDiffAttentionCost;
  // evaluations of 10 batches of 32 every 250 steps (a forward is a third of a step),
  // and two measurements of about 4 s (studies/instruments/measurement.h)
  const double evals = (double)steps / 250.0 * 10.0 * 2.0 / 3.0;
  return ((double)steps + evals) * gpt_step_ms * scale / 1000.0 + 8.0 * scale;
}


int regime_study_main(const std::vector<std::string>& args) {
  FlagParser p("regime_study",
               "Train the GPT arms of the DyT regime study at each training-subset size, width and seed (and the ViT "
               "arm), measure them at step 500 and at the end, and write the report. Every train_gpt flag but those "
               "the grid sets (--seed, --train-bytes, --dim, and what an arm sets) is the recipe of every GPT run.");
  GPTRunConfig base;
  base.batch = 16, base.steps = 5000, base.warmup = 100, base.eval_every = 250, base.eval_batches = 10;
  add_study_recipe_flags(p, base, add_gpt_run_flags, "runs/regime", {"--seed", "--train-bytes"});
  std::string grid = "small", reference = "ln";
  // the lists' defaults are --grid small's (a list flag cannot be empty); --grid full
  // replaces those not given
  std::vector<std::string> arm_texts = kSmallArms, width_arms = {"ln", "dyt-a2"}, vit_arm_texts = kVitArms,
                           llama_arm_texts = {"none"};
  std::vector<int64_t> sizes = {30000, -1}, seeds = {1337, 1338, 1339}, widths = {0}, vit_images = {1000},
                       llama_seeds = {1337, 1338, 1339, 1340, 1341, 1342};
  int64_t vit_steps = 3000, screen_step = kScreenSteps;
  int jobs = 0;
  bool reuse = false, dry_run = false, kept_only = false;
  double gpt_step_ms = 75, vit_step_ms = 42;
  std::string doc = "docs/results/regime.md", plot_script = "scripts/plot_regime.sh", cells_from;
  p.choice("--grid", grid, {"small", "full"},
           "small: ln, dyt-a2, diff on 30 KB and all, 3 seeds, the ViT arm on 1000 images (the default, 24 cells); "
           "full: every arm of issue 17 on 30K,100K,300K,1M,all, widths 64 and 256, the ViT arm on 1000, 5000, all. "
           "The flags below replace a part of it",
           FlagRole::Control);
  p.list("--arms", arm_texts, "the GPT arms, LABEL=FLAGS (flags separated by spaces)");
  p.integer_list("--sizes", sizes, -1, INT64_MAX, "training subsets in bytes (-1: all)");
  add_seeds_flag(p, seeds, "cell");
  p.integer_list("--widths", widths, 0, 4096,
                 "the width axis: other widths for --width-arms on the smallest and largest subset (0: none)");
  p.list("--width-arms", width_arms, "labels of the arms the width axis trains");
  p.list("--vit-arms", vit_arm_texts, "the ViT arms, LABEL=FLAGS");
  p.integer_list("--vit-images", vit_images, -1, INT64_MAX, "ViT training images (-1: all); 0 alone: no ViT arm");
  p.list(
      "--llama-arms", llama_arm_texts,
      "the Llama collapse arms, LABEL=FLAGS (--grid full: llama-rms, llama-dyt-a2, llama-dyt-a2-gelu where train_gpt "
      "has --block llama); none: no Llama arm");
  p.integer_list("--llama-seeds", llama_seeds, 0, INT64_MAX, "the Llama arms' seeds (6: 1337-1342)");
  p.integer("--vit-steps", vit_steps, 1, 10000000, "ViT steps of batch 128 (3000: 384 passes over 1000 images)");
  p.integer("--screen-step", screen_step, 1, 10000000, "the step of the screen's saturation (the paper's 500)");
  p.text("--reference", reference, "the label of the arm every other arm is compared with");
  add_study_run_flags(p, jobs, reuse);
  // the defaults' measurements: docs/regime-study.md (the default grid's cells, two at a time)
  p.real("--gpt-step-ms", gpt_step_ms, 0.001, 1e7,
         "--dry-run's ms per step of the width-128 GPT on one thread, two runs at a time", FlagRole::Control);
  p.real("--vit-step-ms", vit_step_ms, 0.001, 1e7, "--dry-run's ms per ViT step on one thread, two runs at a time",
         FlagRole::Control);
  p.text("--cells-from", cells_from,
         "earlier invocations' results, FILE,FILE,... (an OUT/results.json, or the copy beside its report: "
         "docs/results/regime.json): their finished cells of the same recipe are kept, not trained again (a cell in "
         "two files: the first)",
         FlagRole::Control);
  p.toggle("--kept-only", kept_only,
           "train nothing: the report of this grid from the cells --cells-from's files have, the others listed as "
           "not run (a grid grown a block at a time, each block its own invocation)",
           FlagRole::Control);
  add_dry_run_flag(p, dry_run);
  add_report_flags(p, doc, plot_script, "the plots");
  RegimePlan plan;
  std::string llama_note;
  p.check([&] {
    const bool full = grid == "full";
    plan.arms = parse_run_specs(full && !p.given("--arms") ? kFullArms : arm_texts);
    plan.sizes = full && !p.given("--sizes") ? std::vector<int64_t>{30000, 100000, 300000, 1000000, -1} : sizes;
    plan.seeds = seeds;
    plan.widths = full && !p.given("--widths") ? std::vector<int64_t>{64, 256} : widths;
    plan.widths.erase(std::remove(plan.widths.begin(), plan.widths.end(), 0), plan.widths.end());
    for (int64_t w : plan.widths) NL_CHECK(w >= 8, "--widths: a width must be at least 8 (or 0: none), got ", w);
    plan.width_arms = width_arms;
    plan.vit_arms = parse_run_specs(vit_arm_texts);
    plan.vit_images = full && !p.given("--vit-images") ? std::vector<int64_t>{1000, 5000, -1} : vit_images;
    if (plan.vit_images == std::vector<int64_t>{0}) plan.vit_images.clear();
    const auto& blocks = block_names();
    const bool has_llama = std::count(blocks.begin(), blocks.end(), "llama") > 0;
    if (p.given("--llama-arms")) {
      if (llama_arm_texts != std::vector<std::string>{"none"}) plan.llama_arms = parse_run_specs(llama_arm_texts);
    } else if (full && has_llama) {
      plan.llama_arms = parse_run_specs(kLlamaArms);
    } else if (full) {
      llama_note = "The Llama collapse arms (" + std::to_string(kLlamaArms.size()) +
                   " arms x 2 subsets x 6 seeds) were left out: this build's train_gpt has no --block llama.";
    }
    plan.llama_seeds = llama_seeds;
    // a label names one arm: its cells' folders, its rows in the report, its entry in the
    // results file that --cells-from matches
    for (const RunSpec& l : plan.llama_arms)
      for (const RunSpec& a : plan.arms)
        NL_CHECK(l.label != a.label, "--llama-arms: the label '", l.label,
                 "' is also one of --arms; give the Llama arm another label");
    for (int64_t n : plan.vit_images) NL_CHECK(n != 0, "--vit-images: 0 only alone (no ViT arm)");
    for (int64_t s : plan.sizes) NL_CHECK(s != 0, "--sizes: 0 bytes cannot be trained on");
    plan.steps = base.steps;
    plan.width = base.model.dim;
    plan.vit_steps = vit_steps;
    bool has_reference = false;
    for (const RunSpec& a : plan.arms) has_reference = has_reference || a.label == reference;
    NL_CHECK(has_reference, "--reference ", reference, ": no arm has that label");
  });
  if (!p.parse(args)) return 0;
  const std::string out = base.out_dir;
  const fs::path doc_dir = fs::path(doc).has_parent_path() ? fs::path(doc).parent_path() : fs::path(".");
  const std::vector<RegimeCell> plan_cells = regime_cells(plan);

  // the cells an earlier invocation finished with this recipe (--cells-from): kept
  const auto recipe = p.values();
  // the study's own flags, and what it sets on each cell (the width axis's --dim, the
  // grid runner's --threads): never passed on as the recipe, never compared by --cells-from
  const std::vector<std::string> own = gpt_study_own_keys(p, {"dim", "threads"});
  const int64_t measure_first = std::min(screen_step, base.steps);
  // each planned cell's summary from the first --cells-from file that finished it
  std::vector<std::optional<RegimeRun>> kept_runs(plan_cells.size());
  const std::vector<std::string> cells_from_files = split_list(cells_from);
  NL_CHECK(!kept_only || !cells_from_files.empty(), "--kept-only: name the earlier results with --cells-from");
  std::vector<std::string> keys;
  for (const std::string& k : p.recipe_keys())
    if (std::find(own.begin(), own.end(), k) == own.end()) keys.push_back(k);
  for (const std::string& file : cells_from_files) {
    const RegimeResults earlier = read_regime_results(file, "--cells-from");
    const std::vector<int> found =
        earlier_cells(earlier, file, plan_cells, recipe, keys, plan.vit_steps, measure_first);
    for (size_t i = 0; i < plan_cells.size(); ++i)
      if (!kept_runs[i] && found[i] >= 0) kept_runs[i] = earlier.runs[found[i]];
  }
  const auto kept = [&](size_t i) { return kept_runs[i].has_value(); };
  // --kept-only: the grid's cells no file has, left out of the report and listed in it
  std::vector<NotRunCell> not_run;
  if (kept_only)
    for (size_t i = 0; i < plan_cells.size(); ++i)
      if (!kept(i)) not_run.push_back({cell_kind(plan_cells[i]), plan_cells[i].seed});
  const size_t n_earlier = (size_t)std::count_if(kept_runs.begin(), kept_runs.end(), [](const auto& r) { return r; });

  if (dry_run) {
    double total = 0;
    std::map<std::string, std::pair<int, double>> by_kind;
    for (size_t i = 0; i < plan_cells.size(); ++i) {
      const RegimeCell& c = plan_cells[i];
      if (kept(i)) continue;
      const double s = cell_seconds(c, c.model == "vit" ? plan.vit_steps : plan.steps, gpt_step_ms, vit_step_ms);
      total += s;
      const std::string key = cell_kind(c);
      by_kind[key].first += 1;
      by_kind[key].second += s;
    }
    const int j = effective_jobs(jobs);
    for (const auto& [key, v] : by_kind)
      std::printf("  %-40s %d seed(s), %.1f min each\n", key.c_str(), v.first, v.second / v.first / 60.0);
    if (!llama_note.empty()) std::printf("%s\n", llama_note.c_str());
    if (!cells_from.empty()) std::printf("%zu of the cells are kept from %s\n", n_earlier, cells_from.c_str());
    if (kept_only) std::printf("--kept-only: none of the %zu cells above is trained; the report has the kept ones\n",
                               plan_cells.size() - n_earlier);
    std::printf(
        "regime study (--grid %s): %zu cells to train, %.0f CPU minutes at %.1f ms/step (GPT width 128) and %.1f "
        "ms/step "
        "(ViT), about %.0f minutes at %d at a time on an idle machine\n",
        grid.c_str(), plan_cells.size() - n_earlier, total / 60.0, gpt_step_ms, vit_step_ms, total / 60.0 / j, j);
    return 0;
  }
  check_doc_folder(doc);

  RegimeResults results;
  if (reuse) {
    results = regime_results_of(read_study_results(out, {}), "--reuse", out + "/results.json");
    // results written before the unigram loss was recorded: the same validation split's
    if (!results.unigram_loss) results.unigram_loss = unigram_loss(load_fortunes(base.data_dir).val);
  } else {
    const auto start = StudyClock::now();
    std::vector<double> loads = {load_average()};
    std::vector<GridCell> cells;
    std::vector<size_t> plan_of;  // a grid cell's index in plan_cells
    double estimate = 0;
    for (size_t i = 0; i < plan_cells.size(); ++i) {
      const RegimeCell& c = plan_cells[i];
      if (kept(i) || kept_only) continue;
      plan_of.push_back(i);
      GridCell cell;
      cell.label = c.model + " " + (c.model == "gpt" ? "w" + std::to_string(c.width) + " " : std::string()) +
                   size_label(c.size) + " " + c.arm.label + " s" + std::to_string(c.seed);
      cell.out_dir = out + "/" + c.folder();
      const std::string seed = std::to_string(c.seed);
      if (c.model == "gpt") {
        cell.program = "train_gpt";
        std::vector<std::string> skip = own;
        for (const std::string& a : c.arm.args)
          if (a.rfind("--", 0) == 0) skip.push_back(flag_key(a));
        // what the arm's flags imply (--block llama: SwiGLU, no biases, an untied head)
        // stays implied, unless this command line named it
        for (const std::string& k : implied_keys("train_gpt", c.arm.args))
          if (!p.given(flag_of_key(k))) skip.push_back(k);
        cell.args = flags_from_values(recipe, skip);
        cell.args.insert(cell.args.end(), c.arm.args.begin(), c.arm.args.end());
        std::string measure = std::to_string(measure_first);
        if (base.steps != measure_first) measure += "," + std::to_string(base.steps);
        for (const std::string& a : {std::string("--dim"), std::to_string(c.width), std::string("--seed"), seed,
                                     std::string("--train-bytes"), std::to_string(c.size), std::string("--measure-at"),
                                     measure})
          cell.args.push_back(a);
      } else {
        cell.program = "train_vit";
        cell.args = c.arm.args;
        for (const std::string& a :
             {std::string("--steps"), std::to_string(plan.vit_steps), std::string("--eval-every"), std::string("250"),
              std::string("--seed"), seed, std::string("--train-images"), std::to_string(c.size)})
          cell.args.push_back(a);
      }
      cell.cost = cell_seconds(c, c.model == "vit" ? plan.vit_steps : plan.steps, gpt_step_ms, vit_step_ms);
      estimate += cell.cost;
      cells.push_back(cell);
    }
    const auto summarize = [&](size_t i, const CellOutcome& outcome, const nlohmann::ordered_json& config) {
      const RegimeCell& c = plan_cells[plan_of[i]];
      const json& res = outcome.result;
      RegimeRun run;
      run.model = c.model, run.arm = c.arm.label, run.size = c.size, run.width = c.width, run.seed = c.seed;
      run.exit_code = outcome.exit_code, run.kept = outcome.kept, run.llama = c.llama;
      run.norm = config["norm"].get<std::string>();
      run.bounded = norm_kind(run.norm).bounded.name;
      const bool done = outcome.exit_code == 0 && res.is_object();
      if (done) {
        const ResultRecord result = result_record_of(res, cells[i].out_dir + "/result.json");
        run.val_end = result.figure(kValLoss);
        run.seconds = result.seconds;
      }
      if (c.model == "gpt") {
        summarize_gpt(cells[i].out_dir, base.steps, measure_first, run);
      } else {
        const std::optional<LogTable> log = cell_log(cells[i].out_dir);
        run.curve = points(log, kValLoss);
        run.acc_curve = points(log, kValAcc);
      }
      return json(run);
    };
    std::string note = " (estimate " + fmt(estimate / 60.0, "%.0f") + " CPU minutes)";
    if (!cells_from.empty()) note += "; " + std::to_string(n_earlier) + " more kept from " + cells_from;
    const std::vector<CellOutcome> trained = run_study_grid("regime study", cells, jobs, base.threads, summarize, note);
    if (!dist::is_lead()) return 0;  // the lead rank has every cell's summary and writes the report
    std::vector<CellOutcome> outcomes(plan_cells.size());
    for (size_t i = 0; i < trained.size(); ++i) outcomes[plan_of[i]] = trained[i];
    for (size_t i = 0; i < plan_cells.size(); ++i)
      if (kept(i)) {
        outcomes[i].kept = true;
        outcomes[i].exit_code = 0;
        kept_runs[i]->kept = true;
        outcomes[i].summary = *kept_runs[i];
      }
    if (kept_only)  // the cells not run are not outcomes: the report lists them instead
      outcomes.erase(std::remove_if(outcomes.begin(), outcomes.end(), [](const CellOutcome& o) { return !o.kept; }),
                     outcomes.end());
    loads.push_back(load_average());
    RegimeResults& r = results;
    for (const CellOutcome& o : outcomes) r.runs.push_back(o.summary.get<RegimeRun>()), r.cells_kept += o.kept;
    r.cells_run = (int64_t)outcomes.size() - r.cells_kept;
    r.header = study_header(study_command("build/release/regime_study", args), out, jobs, base.threads, loads, recipe);
    r.seconds = seconds_since(start);
    r.estimate_minutes = fmt(estimate / 60.0, "%.0f");
    // the flags that replace a part of the named grid: the header says the grid was not run as named
    for (const char* flag : {"--arms", "--sizes", "--seeds", "--widths", "--width-arms", "--vit-arms", "--vit-images",
                             "--llama-arms", "--llama-seeds"})
      r.grid_replaced = r.grid_replaced || p.given(flag);
    const TextData text = load_fortunes(base.data_dir);
    r.grid = grid, r.seeds = plan.seeds, r.reference = reference;
    r.screen_step = measure_first, r.vit_steps = plan.vit_steps, r.llama_note = llama_note, r.not_run = not_run;
    r.train_bytes_all = (int64_t)text.train.size(), r.unigram_loss = unigram_loss(text.val);
    r.arms = run_specs_json(plan.arms).get<std::vector<RegimeArm>>();
    r.vit_arms = run_specs_json(plan.vit_arms).get<std::vector<RegimeArm>>();
    r.llama_arms = run_specs_json(plan.llama_arms).get<std::vector<RegimeArm>>();
    r.plot_script = plot_script;
    fs::create_directories(out);  // --kept-only trained nothing into it
    const json written = results;
    write_text_file(out + "/results.json", written.dump(1) + "\n");
    // read back as --reuse will read it (the recipe's steps, batch, seq and dim come from
    // the header's recipe there); written first, so that a file this refuses is there to see
    results = regime_results_of(written, "", out + "/results.json");
  }
  write_plot_csvs(out, results);
  const std::string plot_stem = fs::path(doc).stem().string();  // regime.md: regime_loss.png, regime_screen.png
  bool plotted = !plot_script.empty();
  if (plotted) {
    const std::string cmd = "bash '" + plot_script + "' '" + (doc_dir / (plot_stem + "_loss.png")).string() + "' '" +
                            out + "/regime_loss.csv' '" + (doc_dir / (plot_stem + "_screen.png")).string() + "' '" +
                            out + "/regime_screen.csv' '" + (doc_dir / (plot_stem + "_vit.png")).string() + "' '" +
                            out + "/regime_vit.csv' > /dev/null 2>&1";
    plotted = std::system(cmd.c_str()) == 0;
  }
  write_text_file(doc, render_regime_report(results, plotted, plot_stem));
  // the results beside the report, kept with it: a later --cells-from continues from them
  write_text_file((doc_dir / (plot_stem + ".json")).string(), json(results).dump(1) + "\n");
  std::printf("wrote %s\n", doc.c_str());
  return 0;
}

}  // namespace nl
