#include "studies/regime/regime_flags.h"

#include <algorithm>

#include "nn/block.h"
#include "studies/instruments/screening.h"
#include "studies/report/study.h"
#include "tensor/error.h"
#include "train/flags/flag_parser.h"
#include "train/flags/gpt_flags.h"
#include "train/io/text_fields.h"

namespace nl {

namespace {

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

}  // namespace

std::vector<std::string> full_grid_gpt_labels() {
  std::vector<std::string> labels;
  for (const auto* arms : {&kFullArms, &kLlamaArms})
    for (const RunSpec& spec : parse_run_specs(*arms)) labels.push_back(spec.label);
  return labels;
}

bool parse_regime_flags(const std::vector<std::string>& args, RegimeFlags& f) {
  FlagParser p("regime_study",
               "Train the GPT arms of the DyT regime study at each training-subset size, width and seed (and the ViT "
               "arm), measure them at step 500 and at the end, and write the report. Every train_gpt flag but those "
               "the grid sets (--seed, --train-bytes, --dim, and what an arm sets) is the recipe of every GPT run.");
  GPTRunConfig& base = f.base;
  base.batch = 16, base.steps = 5000, base.warmup = 100, base.eval_every = 250, base.eval_batches = 10;
  add_study_recipe_flags(p, base, add_gpt_run_flags, "runs/regime", {"--seed", "--train-bytes"});
  // the lists' defaults are --grid small's (a list flag cannot be empty); --grid full
  // replaces those not given
  std::vector<std::string> arm_texts = kSmallArms, width_arms = {"ln", "dyt-a2"}, vit_arm_texts = kVitArms,
                           llama_arm_texts = {"none"};
  std::vector<int64_t> sizes = {30000, -1}, seeds = {1337, 1338, 1339}, widths = {0}, vit_images = {1000},
                       llama_seeds = {1337, 1338, 1339, 1340, 1341, 1342};
  int64_t vit_steps = 3000;
  p.choice("--grid", f.grid, {"small", "full"},
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
  p.integer("--screen-step", f.screen_step, 1, 10000000, "the step of the screen's saturation (the paper's 500)");
  p.text("--reference", f.reference, "the label of the arm every other arm is compared with");
  add_study_run_flags(p, f.jobs, f.reuse);
  // the defaults' measurements: docs/regime-study.md (the default grid's cells, two at a time)
  p.real("--gpt-step-ms", f.gpt_step_ms, 0.001, 1e7,
         "--dry-run's ms per step of the width-128 GPT on one thread, two runs at a time", FlagRole::Control);
  p.real("--vit-step-ms", f.vit_step_ms, 0.001, 1e7, "--dry-run's ms per ViT step on one thread, two runs at a time",
         FlagRole::Control);
  p.text("--cells-from", f.cells_from,
         "earlier invocations' results, FILE,FILE,... (OUT/results.json, or the .json beside a report): their "
         "finished cells of the same recipe are kept, not trained again (a cell in two files: the first)",
         FlagRole::Control);
  p.toggle("--kept-only", f.kept_only,
           "train nothing: the report of this grid from the cells --cells-from's files have, the others listed as "
           "not run (a grid grown a block at a time, each block its own invocation)",
           FlagRole::Control);
  add_dry_run_flag(p, f.dry_run);
  add_report_flags(p, f.doc, f.plot_script, "the plots");
  RegimePlan& plan = f.plan;
  p.check([&] {
    const bool full = f.grid == "full";
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
      f.llama_note = "The Llama collapse arms (" + std::to_string(kLlamaArms.size()) +
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
    for (const RunSpec& a : plan.arms) has_reference = has_reference || a.label == f.reference;
    NL_CHECK(has_reference, "--reference ", f.reference, ": no arm has that label");
  });
  if (!p.parse(args)) return false;
  f.recipe = p.values();
  // the study's own flags, and what it sets on each cell (the width axis's --dim, the
  // grid runner's --threads): never passed on as the recipe, never compared by --cells-from
  f.own = gpt_study_own_keys(p, {"dim", "threads"});
  for (const std::string& k : p.recipe_keys())
    if (std::find(f.own.begin(), f.own.end(), k) == f.own.end()) f.compared.push_back(k);
  for (const auto& [key, value] : f.recipe.items())
    if (key != "program" && p.given(flag_of_key(key))) f.named.push_back(key);  // "program" is no flag
  // the flags that replace a part of the named grid: the header says the grid was not run as named
  for (const char* flag : {"--arms", "--sizes", "--seeds", "--widths", "--width-arms", "--vit-arms", "--vit-images",
                           "--llama-arms", "--llama-seeds"})
    f.grid_replaced = f.grid_replaced || p.given(flag);
  f.command = study_command("build/release/regime_study", args);
  return true;
}

}  // namespace nl
