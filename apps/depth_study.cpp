// depth_study: the BHyT depth study at a scale two CPU cores can train. Trains a
// deep-narrow GPT with each block/norm variant (pre+rms, pre+ln, peri+rms, lns+rms,
// pre+dyt, pre+bhyt-exact, pre+bhyt) on the same data, seed and budget at two depths,
// reads each run's activation statistics (studies/instruments/act_stats.h), times bhyt against
// bhyt-exact and rms on the `tiny` and `small` configurations, and writes the report:
//   DOC (docs/results/depth.md), its plots (depth_L<depth>.png next to it, by
//   scripts/plot_depth.sh), and OUT/L<depth>/<variant>/... (each run's files)
// The claims checked, from ../shared/NORMS.md: the residual stream's variance stays flat
// with depth under BHyT while Pre-LN lets it grow; with lambda/kappa < 1/sqrt(L) BHyT's
// per-layer output variance stays below LayerNorm Scaling's; the block-level
// approximation is cheaper than BHyT* and its site-2 variance tracks the exact one.
//   build/release/depth_study                  # the whole study (about 10-15 minutes)
//   build/release/depth_study --speed          # only the timing, printed
//   build/release/depth_study --reuse          # rewrite the report from the runs in --out
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "autograd/ops.h"
#include "tensor/threads.h"
#include "studies/instruments/act_stats.h"
#include "train/flags/args.h"
#include "train/gpt/gpt_run.h"
#include "train/optim/optim.h"
#include "train/io/safetensors.h"
#include "studies/report/study.h"

using namespace nl;
namespace fs = std::filesystem;

namespace {

using Clock = StudyClock;

struct Variant {
  std::string label, block, norm;  // "pre+bhyt", "pre", "bhyt"
};

Variant parse_variant(const std::string& label) {
  const size_t plus = label.find('+');
  NL_CHECK(plus != std::string::npos, "variant '", label, "' is not BLOCK+NORM (e.g. pre+rms, lns+rms, peri+ln)");
  Variant v{label, label.substr(0, plus), label.substr(plus + 1)};
  check_block_name(v.block);
  check_norm_name(v.norm);
  return v;
}

// What the report needs of one training run.
struct Run {
  Variant variant;
  int64_t depth = 0;
  GPTRunResult result;
  std::vector<double> var_init, var_end;  // residual-stream variance, layers 0..L
  std::vector<int64_t> steps;             // the logging points
  std::vector<double> approx, exact;      // site-2 variances, over layers and logging points
  std::vector<int64_t> pair_step;         // the logging point of each pair
  double sat_end[3] = {NAN, NAN, NAN};    // tanh saturation averaged over tanh sites, at the end
  double load = NAN;                      // the machine's load average when the run started
  double lambda_min = NAN, lambda_max = NAN;  // bhyt: the learnt lambdas of the blocks' sites at the end
};

// The smallest and largest lambda of the blocks' BHyT sites in a run's checkpoint.
void read_lambdas(Run& run, const std::string& checkpoint) {
  if (!fs::exists(checkpoint)) return;
  SafetensorsFile f = load_safetensors(checkpoint);
  for (const auto& [name, t] : f.tensors) {
    if (name.rfind("blocks.", 0) != 0 || name.size() < 7 || name.compare(name.size() - 7, 7, ".lambda") != 0) continue;
    const double v = t.item();
    run.lambda_min = std::isnan(run.lambda_min) ? v : std::min(run.lambda_min, v);
    run.lambda_max = std::isnan(run.lambda_max) ? v : std::max(run.lambda_max, v);
  }
}

void read_stats(Run& run, const std::string& path) {
  auto rows = read_act_stats(path);
  NL_CHECK(!rows.empty(), "no activation statistics in ", path);
  for (const auto& [step, r] : rows)
    if (run.steps.empty() || run.steps.back() != step) run.steps.push_back(step);
  const int64_t first = run.steps.front(), last = run.steps.back();
  run.var_init.assign(run.depth + 1, NAN);
  run.var_end.assign(run.depth + 1, NAN);
  std::map<std::pair<int64_t, int64_t>, double> approx;  // (step, layer) -> mean approximated variance
  for (const auto& [step, r] : rows) {
    if (r.site == "resid" && r.layer >= 0 && r.layer <= run.depth) {
      if (step == first) run.var_init[r.layer] = r.var;
      if (step == last) run.var_end[r.layer] = r.var;
    }
    if (r.site == "site2_var_approx") approx[{step, r.layer}] = r.mean;
    if (r.site == "site2_var_exact" && approx.count({step, r.layer})) {
      run.approx.push_back(approx[{step, r.layer}]);
      run.exact.push_back(r.mean);
      run.pair_step.push_back(step);
    }
    if (r.site == "tanh_all" && step == last)
      for (int k = 0; k < 3; ++k) run.sat_end[k] = r.saturation[k];
  }
}

// What a finished run left for the report beside its act_stats.csv (for --reuse):
//   train_loss val_loss tok_per_s diverged wall_s act_stats_s load_average
void save_summary(const std::string& path, const GPTRunResult& r, double load) {
  std::ofstream out(path);
  out.precision(9);
  out << r.final_train_loss << " " << r.final_val_loss << " " << r.tokens_per_s << " " << (int)r.diverged << " "
      << r.wall_s << " " << r.act_stats_s << " " << load << "\n";
}

bool load_summary(const std::string& path, GPTRunResult& r, double& load) {
  std::ifstream in(path);
  int diverged = 0;
  if (!(in >> r.final_train_loss >> r.final_val_loss >> r.tokens_per_s >> diverged >> r.wall_s >> r.act_stats_s >> load))
    return false;
  r.diverged = diverged != 0;
  return true;
}

// ---------------------------------------------------------------- speed

struct SpeedRow {
  std::string config, norm;
  double step_ms = 0, forward_ms = 0;
};

// Median ms of a training step (forward, backward, clip, AdamW) and of an inference
// forward (eval, no graph) per norm, measured round-robin over the norms so that a
// slower stretch of a shared machine affects them alike.
std::vector<SpeedRow> measure_speed(const std::string& name, GPTConfig model_config, int64_t batch, int reps,
                                    const std::vector<std::string>& norms, uint64_t seed) {
  struct Model {
    std::unique_ptr<GPT> gpt;
    FlatParameters flat;
    std::unique_ptr<AdamW> optim;
    std::vector<double> step_s, forward_s;
  };
  std::vector<Model> models(norms.size());
  Generator data_gen(seed + 7);
  const int64_t T = model_config.context;
  std::vector<int32_t> ids(batch * T), targets(batch * T);
  for (auto& v : ids) v = (int32_t)data_gen.below((uint32_t)model_config.vocab);
  for (auto& v : targets) v = (int32_t)data_gen.below((uint32_t)model_config.vocab);
  Tensor x = Tensor::from_ints(ids, {batch, T}), y = Tensor::from_ints(targets, {batch, T});
  for (size_t i = 0; i < norms.size(); ++i) {
    GPTConfig c = model_config;
    c.norm.name = norms[i];
    Generator gen(seed);
    models[i].gpt = std::make_unique<GPT>(c, gen);
    models[i].flat = flatten_parameters(*models[i].gpt);
    models[i].optim = std::make_unique<AdamW>(models[i].flat, AdamWConfig{0.9f, 0.99f, 1e-8f, 0.1f});
  }
  for (int r = -2; r < reps; ++r)  // two warm-up rounds fill the allocator's caches
    for (Model& m : models) {
      auto t0 = Clock::now();
      m.flat.grads.fill_(0.0f);
      Var loss = m.gpt->loss(x, y);
      loss.backward();
      clip_grad_norm(m.flat, 1.0f);
      m.optim->step(1e-4f);
      const double step_s = seconds_since(t0);
      m.gpt->eval();
      t0 = Clock::now();
      {
        NoGradGuard ng;
        m.gpt->forward(x);
      }
      const double fwd_s = seconds_since(t0);
      m.gpt->train();
      if (r >= 0) m.step_s.push_back(step_s), m.forward_s.push_back(fwd_s);
    }
  std::vector<SpeedRow> out;
  for (size_t i = 0; i < norms.size(); ++i)
    out.push_back({name, norms[i], 1e3 * median(models[i].step_s), 1e3 * median(models[i].forward_s)});
  return out;
}

std::vector<SpeedRow> speed_section(int reps, uint64_t seed) {
  const std::vector<std::string> norms = {"rms", "bhyt-exact", "bhyt"};
  GPTConfig tiny;  // ../shared/BENCHMARKS.md
  tiny.layers = 4, tiny.dim = 128, tiny.heads = 4, tiny.context = 64;
  GPTConfig small;
  small.layers = 6, small.dim = 384, small.heads = 6, small.context = 256;
  std::vector<SpeedRow> rows = measure_speed("tiny", tiny, 16, 4 * reps, norms, seed);
  for (const SpeedRow& r : measure_speed("small", small, 8, reps, norms, seed)) rows.push_back(r);
  return rows;
}

const SpeedRow* find_speed(const std::vector<SpeedRow>& rows, const std::string& config, const std::string& norm) {
  for (const SpeedRow& r : rows)
    if (r.config == config && r.norm == norm) return &r;
  return nullptr;
}

std::string speed_table(const std::vector<SpeedRow>& rows) {
  std::ostringstream os;
  char buf[256];
  os << "| config | norm | ms/step | forward ms | step vs rms | step: bhyt-exact / this | forward: bhyt-exact / this |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (const SpeedRow& r : rows) {
    const SpeedRow* rms = find_speed(rows, r.config, "rms");
    const SpeedRow* ex = find_speed(rows, r.config, "bhyt-exact");
    std::snprintf(buf, sizeof buf, "| %s | %s | %.1f | %.1f | %.3f | %.3f | %.3f |\n", r.config.c_str(),
                  r.norm.c_str(), r.step_ms, r.forward_ms, r.step_ms / rms->step_ms, ex->step_ms / r.step_ms,
                  ex->forward_ms / r.forward_ms);
    os << buf;
  }
  return os.str();
}

// ---------------------------------------------------------------- the report

const Run* find_run(const std::vector<Run>& runs, int64_t depth, const std::string& label) {
  for (const Run& r : runs)
    if (r.depth == depth && r.variant.label == label) return &r;
  return nullptr;
}

// variance leaving block L over variance leaving block 1
double growth(const std::vector<double>& var) { return var.size() > 2 ? var.back() / var[1] : NAN; }
// variance leaving block L over variance leaving block L/2: the second half's growth,
// free of what the first block does to the embedding
double half_growth(const std::vector<double>& var) {
  const size_t L = var.size() - 1;
  return L >= 2 ? var[L] / var[L / 2] : NAN;
}

const char* status_of(const GPTRunResult& r) {
  return r.diverged ? "DIVERGED" : r.final_val_loss > 3.2f ? "stuck near unigram loss" : "ok";
}

void write_variance_csv(const std::string& path, const std::vector<const Run*>& runs, bool end) {
  std::ofstream out(path);
  out << "layer";
  for (const Run* r : runs) out << "," << r->variant.label;
  out << "\n";
  const size_t n = runs.front()->var_init.size();
  for (size_t l = 0; l < n; ++l) {
    out << l;
    for (const Run* r : runs) out << "," << fmt((end ? r->var_end : r->var_init)[l], "%.6g");
    out << "\n";
  }
}

std::string variance_table(const std::vector<const Run*>& runs, bool end) {
  std::ostringstream os;
  os << "| layer |";
  for (const Run* r : runs) os << " " << r->variant.label << " |";
  os << "\n|---|";
  for (size_t i = 0; i < runs.size(); ++i) os << "---|";
  os << "\n";
  const size_t n = runs.front()->var_init.size();
  for (size_t l = 0; l < n; ++l) {
    os << "| " << l << " |";
    for (const Run* r : runs) os << " " << fmt((end ? r->var_end : r->var_init)[l], "%.3g") << " |";
    os << "\n";
  }
  return os.str();
}

// Pearson's r of the approximated against the exact site-2 variance, raw and of the logs.
struct Correlation {
  double r = NAN, r_log = NAN, mean_ratio = NAN, min_ratio = NAN, max_ratio = NAN;
  size_t n = 0;
};
Correlation correlate(const Run& run) {
  Correlation c;
  c.n = run.approx.size();
  if (c.n < 2) return c;
  std::vector<double> la, le;
  double sum = 0;
  c.min_ratio = INFINITY, c.max_ratio = 0;
  for (size_t i = 0; i < c.n; ++i) {
    la.push_back(std::log(run.approx[i]));
    le.push_back(std::log(run.exact[i]));
    const double q = run.approx[i] / run.exact[i];
    sum += q;
    c.min_ratio = std::min(c.min_ratio, q);
    c.max_ratio = std::max(c.max_ratio, q);
  }
  c.r = pearson(run.approx, run.exact);
  c.r_log = pearson(la, le);
  c.mean_ratio = sum / (double)c.n;
  return c;
}

struct StudyConfig {
  std::vector<int64_t> depths;
  std::vector<Variant> variants;
  GPTRunConfig base;
  std::string out, doc, plot_script, command;
  int speed_reps = 5;
  bool reuse = false;
  std::vector<double> loads;  // load averages sampled before each run and at the end
};

// What the numbers cannot show, and what the approximation's error is made of; fixed
// text, true of every run of this study.
const char* kNotes = R"(## What this study does and does not show

- **Scale.** One seed, a few hundred steps, widths of 128: the paper trains far larger
  models for far longer. A claim that holds here is consistent with the paper, one that does
  not may still hold at scale; neither is settled by this run. Differences of a few hundredths
  in loss are within what another seed would change.
- **Where the approximation errs.** Its derivation assumes uniform attention over T tokens,
  an attention output uncorrelated with the stream, and a tanh in its linear range; then the
  attention branch adds c_attn lambda^2/kappa^2 to the variance. In a causal model position i averages
  only i + 1 tokens, so under the same assumptions the added variance averaged over positions
  is c_attn lambda^2/kappa^2 times the harmonic number H_T (4.7 at T = 64);
  `tests/nn/test_bhyt_block.cpp` checks both cases (non-causal: the formula within 5 %;
  causal: the H_T factor), an underestimate. An attention output correlated with the stream
  adds 2 cov(x, attn) to the exact variance, which the approximation ignores: positive
  correlation makes it run low, negative high (the max column above). At initialisation the
  attention branch adds almost nothing, so approximated and exact agree; the gap opens as
  training makes that branch matter (the per-step table above).
- **What r measures.** The pairs pool layers and steps whose variances differ by up to two
  orders of magnitude, so a high r mostly says that approximated and exact follow the same
  trend over depth and training; the approx/exact ratios of single pairs are the stricter
  measure (the min and max columns).
- **Why the approximation is not faster here.** On this CPU the exact second site is one
  fused kernel (`tensor/cpu/bhyt.cpp`) whose two row reductions over h cost little next to the
  matmuls. The approximation replaces them by reductions over x done with separate ops (mean,
  variance, square root, absolute value and their backward) plus the C x C x C product for
  c_attn in every block and step (under 1 % of a step's FLOPs; `--bhyt-refresh N` computes it
  every N steps). The paper's +13.7 % comes from GPU training, where a reduction over h is
  a synchronisation the approximation avoids.
- **Small branch inputs.** BHyT's norm outputs have RMS of about lambda/kappa (0.1 with the
  defaults), against about 1 for LayerNorm and RMSNorm. At initialisation (GPT-2 weights,
  N(0, 0.02)) its branches therefore write almost nothing into the stream, which is flat by
  construction; in training the same small inputs slow learning, which is why a BHyT model at
  this budget is compared with Pre-LN models that have learnt far more. The condition
  lambda/kappa < 1/sqrt(L) asks for these small inputs.
- **Speed of the training runs.** The tok/s column of each run depends on what else ran on
  the machine at the time (its load column); only the round-robin speed section compares norms.
)";

// The study's time on a machine of its own, estimated from the fastest run of each
// depth (the one that shared the machine least) times the number of variants.
std::string idle_estimate(const StudyConfig& s, const std::vector<Run>& runs, double speed_s) {
  double total = speed_s;
  for (int64_t d : s.depths) {
    double fastest = INFINITY;
    for (const Run& r : runs)
      if (r.depth == d) fastest = std::min(fastest, r.result.wall_s);
    if (std::isfinite(fastest)) total += fastest * (double)s.variants.size();
  }
  return "On an otherwise idle machine the study would take about " + fmt(total / 60.0, "%.0f") +
         " min (estimated from the fastest run at each depth times the number of variants).";
}

std::string write_report(const StudyConfig& s, const std::vector<Run>& runs, const std::vector<SpeedRow>& speed,
                         double total_s, double speed_s) {
  const fs::path doc_dir = fs::path(s.doc).parent_path();
  std::ostringstream md;
  const GPTRunConfig& b = s.base;
  const double kappa = b.model.norm.kappa(), lambda = b.model.norm.bhyt_lambda0;
  const std::string date = today();

  md << "# Depth study: BHyT exact and approximated, Peri-LN, LayerNorm Scaling\n\n"
     << "Generated by `depth_study` on " << date << " (2 threads, the 2-core machine of "
     << "`../shared/BENCHMARKS.md`, shared with other jobs: times are noisy, ±10 % and worse; "
     << "compare them as ratios within one run). Whole study: " << fmt(total_s / 60.0, "%.1f")
     << " min (the training runs and " << fmt(speed_s, "%.0f") << " s of speed section).\n\n"
     << "Regenerate: `make -j2 build/release/depth_study && " << s.command << "`\n\n"
     << "The machine's 1-minute load average during the run (2 cores; above 2 means other jobs competed "
     << "for them): min " << fmt(*std::min_element(s.loads.begin(), s.loads.end()), "%.1f") << ", max "
     << fmt(*std::max_element(s.loads.begin(), s.loads.end()), "%.1f") << ". " << idle_estimate(s, runs, speed_s)
     << "\n\n"
     << "@SUMMARY@"
     << "**Setup.** A deep-narrow byte-level GPT on the fortunes text: width " << b.model.dim << ", "
     << b.model.heads << " heads, context " << b.model.context << ", batch " << b.batch << ", at depths";
  for (int64_t d : s.depths) md << " " << d;
  md << "; " << b.steps << " AdamW steps (lr " << fmt(b.lr) << ", warmup " << b.warmup << ", cosine to "
     << fmt(b.min_lr) << ", weight decay " << fmt(b.wd) << ", clip " << fmt(b.clip) << "), seed " << b.seed
     << ", the same batches for every variant. That is fewer steps than the demo's 500 so that "
     << s.variants.size() * s.depths.size()
     << " runs fit in about a quarter of an hour; the losses are therefore early-training losses. "
     << "Validation: " << b.eval_batches << " fixed batches of " << b.eval_batch_size
     << " sequences. Activation statistics (`act_stats.csv` of each run) every " << b.act_stats_every
     << " steps on one fixed validation batch of " << b.act_stats_batch << " sequences. BHyT: lambda0 = "
     << fmt(lambda) << ", p = " << fmt(b.model.norm.bhyt_p) << " (kappa = " << fmt(kappa) << "), c_attn refreshed every "
     << b.model.norm.bhyt_refresh << " step(s). DyT: alpha0 = " << fmt(b.model.norm.dyt_alpha0) << ".\n\n"
     << "Variants: `pre` is the Pre-LN block, `peri` Peri-LN (a norm on each branch's input *and* output, "
     << "and on the embedding output), `lns` LayerNorm Scaling (Pre-LN with the norm outputs of layer l scaled "
     << "by 1/sqrt(l)); `bhyt` is BHyT with the block-level variance approximation at each block's second "
     << "site, `bhyt-exact` BHyT* everywhere (`nn/block.h`).\n\n"
     << "Residual-stream variance is the variance over all (sequence, position, channel) values of the "
     << "stream, on the fixed batch; layer 0 is the embedding output entering block 1 (for `peri` after its "
     << "embedding norm), layer l the stream leaving block l.\n\n";

  std::vector<std::string> summary;  // one line per claim, for the top of the report

  // ---- results table
  md << "## Losses and speed\n\n"
     << "| depth | variant | train loss | val loss | tok/s | load | resid var L/1 at init | resid var L/1 at end | "
        "tanh saturation (>1, >2, >3) at end | status |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Run& r : runs) {
    std::string sat = std::isnan(r.sat_end[0]) ? "-"
                                               : fmt(r.sat_end[0], "%.3f") + ", " + fmt(r.sat_end[1], "%.3f") + ", " +
                                                     fmt(r.sat_end[2], "%.3f");
    md << "| " << r.depth << " | " << r.variant.label << " | " << fmt(r.result.final_train_loss, "%.4f") << " | "
       << fmt(r.result.final_val_loss, "%.4f") << " | " << fmt(r.result.tokens_per_s, "%.0f") << " | "
       << fmt(r.load, "%.1f") << " | " << fmt(growth(r.var_init), "%.3g") << " | " << fmt(growth(r.var_end), "%.3g") << " | " << sat << " | "
       << status_of(r.result) << " |\n";
  }
  md << "\n`resid var L/1`: variance of the stream leaving the last block over that leaving the first. "
     << "Losses in nats per byte (about 3.3 is the unigram level of this text). tok/s: median training "
     << "throughput of each run; load: the machine's 1-minute load average when the run started (2 cores: "
     << "above 2, other jobs shared them and the run's tok/s says more about them than about the variant; "
     << "the speed section below compares the norms round-robin in one process instead).\n\n";

  // ---- per-layer variance, tables and plots
  md << "## Residual-stream variance per layer\n\n";
  for (int64_t d : s.depths) {
    std::vector<const Run*> at;
    for (const Run& r : runs)
      if (r.depth == d) at.push_back(&r);
    if (at.empty()) continue;
    const std::string stem = "depth_L" + std::to_string(d);
    const std::string init_csv = s.out + "/" + stem + "_init.csv", end_csv = s.out + "/" + stem + "_end.csv";
    write_variance_csv(init_csv, at, false);
    write_variance_csv(end_csv, at, true);
    const std::string png = (doc_dir / (stem + ".png")).string();
    const std::string cmd = "bash " + s.plot_script + " '" + png + "' 'Residual-stream variance per layer, " +
                            std::to_string(d) + " layers' '" + init_csv + "' '" + end_csv + "' > /dev/null";
    const bool plotted = !s.plot_script.empty() && std::system(cmd.c_str()) == 0;
    md << "### " << d << " layers\n\n";
    if (plotted)
      md << "![residual-stream variance per layer, " << d << " layers](" << stem << ".png)\n\n";
    else
      md << "(plot not made: `" << s.plot_script << "` failed or gnuplot is missing)\n\n";
    md << "At initialisation:\n\n" << variance_table(at, false) << "\nAfter " << b.steps << " steps:\n\n"
       << variance_table(at, true) << "\n";
  }

  // ---- claim 1: flat with depth
  md << "## The claims, at this scale\n\n"
     << "### 1. The residual stream stays flat with depth under BHyT; Pre-LN lets it grow\n\n"
     << "Three measures of the stream after training: its variance leaving the last block over that leaving "
     << "block 1 (L/1), over that leaving block L/2 (L/(L/2): the second half's growth, free of what the first "
     << "block does to the embedding), and the variance leaving the last block itself.\n\n"
     << "| depth | variant | L/1 at init | L/1 at end | L/(L/2) at end | variance at layer L, end | val loss |\n"
     << "|---|---|---|---|---|---|---|\n";
  std::vector<std::string> verdict1;
  for (int64_t d : s.depths) {
    const Run *ln = find_run(runs, d, "pre+ln"), *rms = find_run(runs, d, "pre+rms");
    const Run *ex = find_run(runs, d, "pre+bhyt-exact"), *ap = find_run(runs, d, "pre+bhyt");
    const Run* lns = find_run(runs, d, "lns+rms");
    for (const Run* r : {ln, rms, lns, ex, ap})
      if (r)
        md << "| " << d << " | " << r->variant.label << " | " << fmt(growth(r->var_init), "%.3g") << "x | "
           << fmt(growth(r->var_end), "%.3g") << "x | " << fmt(half_growth(r->var_end), "%.3g") << "x | "
           << fmt(r->var_end.back(), "%.3g") << " | " << fmt(r->result.final_val_loss, "%.3f") << " |\n";
    if (!(ln && rms && ap)) continue;
    auto worse = [](double a, double b) { return std::max(a, b); };
    const double g_pre = std::min(growth(ln->var_end), growth(rms->var_end));
    const double h_pre = std::min(half_growth(ln->var_end), half_growth(rms->var_end));
    const double g_b = ex ? worse(growth(ap->var_end), growth(ex->var_end)) : growth(ap->var_end);
    const double h_b = ex ? worse(half_growth(ap->var_end), half_growth(ex->var_end)) : half_growth(ap->var_end);
    const double v_pre = std::min(ln->var_end.back(), rms->var_end.back());
    const double v_b = ex ? worse(ap->var_end.back(), ex->var_end.back()) : ap->var_end.back();
    const bool relative = g_b < g_pre && h_b < h_pre;
    const std::string verdict = relative ? "**held**" : "**did not hold**";
    std::string v = "at " + std::to_string(d) + " layers: " + verdict + " as relative growth (BHyT's stream grows " +
                    fmt(g_b, "%.3g") + "x from block 1 and " + fmt(h_b, "%.3g") + "x over the second half, " +
                    "Pre-LN's " + fmt(g_pre, "%.3g") + "x and " + fmt(h_pre, "%.3g") + "x; the worse of bhyt and " +
                    "bhyt-exact against the better Pre-LN run)";
    v += std::string("; in absolute terms BHyT's last-layer variance is ") + fmt(v_b, "%.3g") +
         (v_b < v_pre ? " against " : " and not below ") + fmt(v_pre, "%.3g") + " for Pre-LN";
    const double pre_val = std::min(ln->result.final_val_loss, rms->result.final_val_loss);
    const double b_val = std::min(ap->result.final_val_loss, ex ? ex->result.final_val_loss : INFINITY);
    if (b_val > pre_val + 0.05)
      v += ". BHyT learnt much less in this budget (val loss " + fmt(b_val, "%.3f") + " against " +
           fmt(pre_val, "%.3f") + (b_val > 3.2 ? ", still near the unigram level" : "") +
           "), so its stream is that of a model that has barely started to use its blocks; a comparison at "
           "matched loss would need a longer run";
    verdict1.push_back(v);
    summary.push_back("Flat residual stream with depth (" + std::to_string(d) + " layers): " + verdict +
                      " as relative growth (BHyT " + fmt(g_b, "%.3g") + "x from block 1, " + fmt(h_b, "%.3g") +
                      "x over the second half; Pre-LN " + fmt(g_pre, "%.3g") + "x, " + fmt(h_pre, "%.3g") +
                      "x), while BHyT's absolute variance stays " + fmt(v_pre / v_b, "%.2g") + "x " +
                      (v_b < v_pre ? "lower" : "higher") + (b_val > pre_val + 0.05 ? "; BHyT barely learnt (val " +
                      fmt(b_val, "%.2f") + " vs " + fmt(pre_val, "%.2f") + ")" : ""));
  }
  md << "\n";
  for (const auto& v : verdict1) md << "- " << v << ".\n";
  md << "\n";

  // ---- claim 2: below LNS
  md << "### 2. With lambda/kappa < 1/sqrt(L), BHyT's per-layer output variance stays below LayerNorm Scaling's\n\n"
     << "lambda/kappa at initialisation = " << fmt(lambda / kappa, "%.3g") << "; 1/sqrt(L) =";
  for (int64_t d : s.depths) md << " " << fmt(1.0 / std::sqrt((double)d), "%.3g") << " (L = " << d << ")";
  md << ": the condition holds at initialisation at every depth studied. lambda is learnt; at the end of "
     << "training the blocks' lambdas were:\n\n| depth | run | lambda min | lambda max | max lambda/kappa | "
     << "1/sqrt(L) | condition at the end |\n|---|---|---|---|---|---|---|\n";
  for (int64_t d : s.depths)
    for (const char* label : {"pre+bhyt", "pre+bhyt-exact"})
      if (const Run* r = find_run(runs, d, label))
        md << "| " << d << " | " << label << " | " << fmt(r->lambda_min, "%.3f") << " | " << fmt(r->lambda_max, "%.3f")
           << " | " << fmt(r->lambda_max / kappa, "%.3f") << " | " << fmt(1.0 / std::sqrt((double)d), "%.3f")
           << " | " << (r->lambda_max / kappa < 1.0 / std::sqrt((double)d) ? "holds" : "violated") << " |\n";
  md << "\n"
     << "Compared: the variance of each block's output (the stream leaving block l, l = 1..L) of pre+bhyt and "
     << "pre+bhyt-exact against lns+rms.\n\n";
  for (int64_t d : s.depths) {
    const Run* lns = find_run(runs, d, "lns+rms");
    if (!lns) continue;
    for (const char* label : {"pre+bhyt", "pre+bhyt-exact"}) {
      const Run* bh = find_run(runs, d, label);
      if (!bh) continue;
      for (bool end : {false, true}) {
        const auto& vb = end ? bh->var_end : bh->var_init;
        const auto& vl = end ? lns->var_end : lns->var_init;
        std::vector<std::string> above;
        double worst = 0;
        for (int64_t l = 1; l <= d; ++l) {
          if (!(vb[l] < vl[l])) above.push_back(std::to_string(l));
          worst = std::max(worst, vb[l] / vl[l]);
        }
        md << "- " << d << " layers, " << label << " vs lns+rms " << (end ? "after training" : "at initialisation")
           << ": ";
        if (end)
          summary.push_back("Below LayerNorm Scaling (" + std::to_string(d) + " layers, " + label + ", after training): " +
                            (above.empty() ? std::string("**held** at every layer")
                                           : "**did not hold** at " + std::to_string(above.size()) + " of " +
                                                 std::to_string(d) + " layers") +
                            ", largest ratio " + fmt(worst, "%.3g"));
        if (above.empty()) {
          md << "**held** at all " << d << " layers (largest ratio bhyt/lns " << fmt(worst, "%.3g") << ")";
        } else {
          md << "**did not hold** at " << above.size() << " of " << d << " layers (";
          for (size_t i = 0; i < above.size(); ++i) md << (i ? ", " : "") << above[i];
          md << "; largest ratio bhyt/lns " << fmt(worst, "%.3g") << ")";
        }
        md << ".\n";
      }
    }
  }
  {
    const Run *ap = find_run(runs, s.depths.back(), "pre+bhyt"), *lns = find_run(runs, s.depths.back(), "lns+rms");
    if (ap && lns && ap->result.final_val_loss > lns->result.final_val_loss + 0.05)
      md << "\nThe same caveat as for claim 1: BHyT learnt much less in this budget than LNS (val loss "
         << fmt(ap->result.final_val_loss, "%.3f") << " against " << fmt(lns->result.final_val_loss, "%.3f")
         << " at " << s.depths.back() << " layers), and a model whose blocks write little keeps a small stream; "
         << "the bound holding here says little about it holding for a BHyT model that has learnt as much.\n";
  }
  md << "\n";

  // ---- claim 3: the approximation
  md << "### 3. The block-level approximation is cheaper than BHyT* and tracks it\n\n"
     << "Site-2 variance, approximated (s1^2 + c_attn lambda1^2/kappa^2 from the block input) against exact "
     << "(the variance of h), each averaged over the tokens of the fixed batch, paired over layers and "
     << "logging points. Paper: Pearson r > 0.99.\n\n"
     << "| depth | run | pairs | Pearson r | r of the logs | approx/exact mean (min, max) |\n|---|---|---|---|---|---|\n";
  std::vector<std::string> verdict3;
  for (int64_t d : s.depths)
    for (const char* label : {"pre+bhyt", "pre+bhyt-exact"}) {
      const Run* r = find_run(runs, d, label);
      if (!r) continue;
      Correlation c = correlate(*r);
      md << "| " << d << " | " << label << " | " << c.n << " | " << fmt(c.r, "%.4f") << " | " << fmt(c.r_log, "%.4f")
         << " | " << fmt(c.mean_ratio, "%.3f") << " (" << fmt(c.min_ratio, "%.3f") << ", " << fmt(c.max_ratio, "%.3f")
         << ") |\n";
      if (std::string(label) == "pre+bhyt") {
        const std::string verdict = c.r > 0.99 ? "**held**" : "**did not hold**";
        verdict3.push_back("correlation at " + std::to_string(d) + " layers: r = " + fmt(c.r, "%.4f") + ": " + verdict +
                           " (paper: r > 0.99); r of the logs " + fmt(c.r_log, "%.4f") +
                           "; approx/exact " + fmt(c.mean_ratio, "%.2f") + " on average, from " +
                           fmt(c.min_ratio, "%.2f") + " to " + fmt(c.max_ratio, "%.2f") +
                           " for single (layer, step) pairs");
        summary.push_back("Approximated vs exact site-2 variance (" + std::to_string(d) + " layers): " + verdict +
                          ", Pearson r = " + fmt(c.r, "%.4f") + " (paper: > 0.99); r of the logs " +
                          fmt(c.r_log, "%.4f") + "; approx/exact " + fmt(c.mean_ratio, "%.2f") + " on average");
      }
    }
  md << "\n(In the bhyt-exact run the approximation is computed alongside, not used.)\n\n"
     << "How far the approximation is off as training goes on: approx/exact averaged over the layers of the "
     << "pre+bhyt run, per logging point.\n\n| step |";
  for (int64_t d : s.depths) md << " " << d << " layers |";
  md << "\n|---|";
  for (size_t i = 0; i < s.depths.size(); ++i) md << "---|";
  md << "\n";
  {
    std::map<int64_t, std::map<int64_t, std::pair<double, int>>> by_step;  // step -> depth -> (sum, n)
    for (int64_t d : s.depths)
      if (const Run* r = find_run(runs, d, "pre+bhyt"))
        for (size_t i = 0; i < r->approx.size(); ++i) {
          auto& acc = by_step[r->pair_step[i]][d];
          acc.first += r->approx[i] / r->exact[i];
          acc.second += 1;
        }
    for (const auto& [step, per_depth] : by_step) {
      md << "| " << step << " |";
      for (int64_t d : s.depths) {
        auto it = per_depth.find(d);
        md << " " << (it == per_depth.end() ? "-" : fmt(it->second.first / it->second.second, "%.3f")) << " |";
      }
      md << "\n";
    }
  }
  md << "\n";

  if (!speed.empty()) {
    md << "Speed, measured in one run, round-robin over the norms (median of " << 4 * s.speed_reps << " (tiny) and "
       << s.speed_reps << " (small) steps after two warm-up rounds; forward = one inference forward, no graph). "
       << "`tiny`: 4 layers, width 128, T 64, B 16; `small`: 6 layers, width 384, T 256, B 8 "
       << "(`../shared/BENCHMARKS.md`).\n\n"
       << speed_table(speed) << "\n";
    for (const char* cfg : {"tiny", "small"}) {
      const SpeedRow *ap = find_speed(speed, cfg, "bhyt"), *ex = find_speed(speed, cfg, "bhyt-exact");
      const double gain = ex->step_ms / ap->step_ms - 1.0;
      const std::string verdict = gain > 0.02    ? "**held** (faster)"
                                  : gain < -0.02 ? "**did not hold** (slower)"
                                                 : "**did not hold** (no difference beyond 2 %)";
      verdict3.push_back(std::string("steps/s of bhyt over bhyt-exact, ") + cfg + ": " + fmt(100.0 * gain, "%+.1f") +
                         " % (paper: +13.7 %): " + verdict);
      summary.push_back(std::string("Approximation cheaper than BHyT* (") + cfg + "): " + verdict + ", " +
                        fmt(100.0 * gain, "%+.1f") + " % steps/s (paper: +13.7 %)");
    }
  }
  for (int64_t d : s.depths) {
    const Run *ap = find_run(runs, d, "pre+bhyt"), *ex = find_run(runs, d, "pre+bhyt-exact");
    if (!ap || !ex) continue;
    verdict3.push_back("training runs at " + std::to_string(d) + " layers: bhyt " +
                       fmt(ap->result.tokens_per_s, "%.0f") + " tok/s vs bhyt-exact " +
                       fmt(ex->result.tokens_per_s, "%.0f") + " (" +
                       fmt(100.0 * (ap->result.tokens_per_s / ex->result.tokens_per_s - 1.0), "%+.1f") +
                       " %); val loss " + fmt(ap->result.final_val_loss, "%.4f") + " vs " +
                       fmt(ex->result.final_val_loss, "%.4f"));
  }
  for (const auto& v : verdict3) md << "- " << v << ".\n";
  md << "\n" << kNotes;

  std::string summary_md = "## Summary: the paper's claims at this scale\n\n";
  for (const auto& line : summary) summary_md += "- " + line + ".\n";
  summary_md += "\nDetails, tables and caveats below.\n\n";
  std::string out = md.str();
  out.replace(out.find("@SUMMARY@"), 9, summary_md);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  prefer_spinning_threads(argv);
  Args args("depth_study",
            "Train deep-narrow GPTs with each block/norm variant at two depths and write the BHyT depth report.");
  args.add("--depths", "8,16", "comma-separated numbers of layers");
  args.add("--variants", "pre+rms,pre+ln,peri+rms,lns+rms,pre+dyt,pre+bhyt-exact,pre+bhyt",
           "comma-separated BLOCK+NORM variants (block: pre|peri|lns)");
  args.add("--dim", "128", "model width");
  args.add("--heads", "4", "attention heads");
  args.add("--seq", "64", "sequence length");
  args.add("--batch", "16", "sequences per step");
  args.add("--steps", "300", "training steps per run");
  args.add("--warmup", "30", "linear warmup steps");
  args.add("--lr", "1e-3", "peak learning rate");
  args.add("--eval-every", "100", "validate every N steps");
  args.add("--eval-batches", "10", "validation batches of 32 sequences");
  args.add("--act-stats-every", "50", "activation statistics every N steps");
  args.add("--seed", "1337", "one seed for every run");
  args.add("--bhyt-lambda", "1.0", "BHyT's initial lambda (kappa = 10): lambda/kappa < 1/sqrt(L) is the claim's condition");
  args.add("--threads", "2", "CPU threads");
  args.add("--speed-steps", "5", "timed steps per norm of `small` in the speed section (tiny: 4x); 0: no section");
  args.add_switch("--speed", "only time bhyt, bhyt-exact and rms on tiny and small, print the table, and stop");
  args.add("--out", "runs/depth", "directory for the runs and the plot data");
  args.add("--doc", "docs/results/depth.md", "the report to write (its plots go next to it)");
  args.add("--plot-script", "scripts/plot_depth.sh", "gnuplot script for the per-layer plots");
  args.add_switch("--reuse", "reuse the runs (and speed section) already in --out instead of training them again");
  try {
    if (!args.parse(argc, argv)) return 0;
    const auto start = Clock::now();
    StudyConfig s;
    s.speed_reps = (int)args.integer("--speed-steps");
    NL_CHECK(s.speed_reps >= 0, "--speed-steps must be >= 0");
    const int threads = (int)args.integer("--threads");
    NL_CHECK(threads > 0, "--threads must be positive");
    set_num_threads(threads);
    const uint64_t seed = (uint64_t)args.integer("--seed");
    if (args.on("--speed")) {
      NL_CHECK(s.speed_reps > 0, "--speed needs --speed-steps > 0");
      std::printf("%s", speed_table(speed_section(s.speed_reps, seed)).c_str());
      return 0;
    }
    for (int64_t d : integer_list(args.str("--depths"), "--depths")) {
      NL_CHECK(d > 0, "--depths: '", d, "' is not a positive integer");
      s.depths.push_back(d);
    }
    for (const auto& v : split_list(args.str("--variants"))) s.variants.push_back(parse_variant(v));
    NL_CHECK(!s.variants.empty(), "--variants is empty");
    GPTRunConfig& b = s.base;
    b.model.dim = args.integer("--dim");
    b.model.heads = args.integer("--heads");
    b.model.context = args.integer("--seq");
    b.batch = args.integer("--batch");
    b.steps = args.integer("--steps");
    b.warmup = args.integer("--warmup");
    b.lr = (float)args.real("--lr");
    b.eval_every = args.integer("--eval-every");
    b.eval_batches = args.integer("--eval-batches");
    b.act_stats_every = args.integer("--act-stats-every");
    NL_CHECK(b.act_stats_every > 0, "--act-stats-every must be positive: the study reads the statistics");
    b.model.norm.bhyt_lambda0 = (float)args.real("--bhyt-lambda");
    b.seed = seed;
    b.threads = threads;
    b.quiet = true;
    b.sample_bytes = 0;
    s.out = args.str("--out");
    s.doc = args.str("--doc");
    s.plot_script = args.str("--plot-script");
    s.reuse = args.on("--reuse");
    s.command = "build/release/depth_study";
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]) != "--reuse") s.command += std::string(" ") + argv[i];
    // every setting checked before the first run
    for (int64_t d : s.depths) {
      GPTRunConfig c = b;
      c.model.layers = d;
      c.model.validate();
    }
    fs::create_directories(s.out);
    if (fs::path(s.doc).has_parent_path()) fs::create_directories(fs::path(s.doc).parent_path());

    std::vector<Run> runs;
    double total_s = 0;  // the runs' own times (also when reused) plus the speed section's
    for (int64_t d : s.depths)
      for (const Variant& v : s.variants) {
        GPTRunConfig c = b;
        c.model.layers = d;
        c.model.block = v.block;
        c.model.norm.name = v.norm;
        c.out_dir = s.out + "/L" + std::to_string(d) + "/" + v.label;
        std::printf("L %2lld  %-16s ...", (long long)d, v.label.c_str());
        std::fflush(stdout);
        Run run;
        run.variant = v;
        run.depth = d;
        const std::string summary = c.out_dir + "/study_summary.txt";
        double load = NAN;
        if (!(s.reuse && load_summary(summary, run.result, load) && fs::exists(c.out_dir + "/act_stats.csv"))) {
          load = load_average();
          run.result = run_gpt(c);
          save_summary(summary, run.result, load);
        } else {
          std::printf(" (reused)");
        }
        s.loads.push_back(load);
        run.load = load;
        total_s += run.result.wall_s;
        read_stats(run, c.out_dir + "/act_stats.csv");
        if (v.norm == "bhyt" || v.norm == "bhyt-exact") read_lambdas(run, c.out_dir + "/checkpoint.safetensors");
        std::printf(" val loss %.4f, %.0f tok/s, %.0f s (%.1f s act stats), resid var L/1 %.3g -> %.3g\n",
                    run.result.final_val_loss, run.result.tokens_per_s, run.result.wall_s, run.result.act_stats_s,
                    growth(run.var_init), growth(run.var_end));
        runs.push_back(std::move(run));
      }
    std::vector<SpeedRow> speed;
    double speed_s = 0;
    if (s.speed_reps > 0) {
      const std::string cache = s.out + "/speed.csv";
      std::ifstream in(cache);
      std::string header;
      SpeedRow row;
      if (s.reuse && std::getline(in, header) && header == "seconds," + std::to_string(s.speed_reps)) {
        double load = NAN;
        in >> speed_s >> load;
        s.loads.push_back(load);
        while (in >> row.config >> row.norm >> row.step_ms >> row.forward_ms) speed.push_back(row);
        std::printf("speed section (reused)\n");
      }
      if (speed.empty()) {
        std::printf("speed section ...\n");
        const auto speed_start = Clock::now();
        s.loads.push_back(load_average());
        speed = speed_section(s.speed_reps, seed);
        speed_s = seconds_since(speed_start);
        std::ofstream out(cache);
        out << "seconds," << s.speed_reps << "\n" << speed_s << " " << s.loads.back() << "\n";
        for (const SpeedRow& r : speed) out << r.config << " " << r.norm << " " << r.step_ms << " " << r.forward_ms << "\n";
      }
      std::printf("%s", speed_table(speed).c_str());
    }
    total_s += speed_s;
    const std::string report = write_report(s, runs, speed, total_s, speed_s);
    std::ofstream(s.doc) << report;
    std::printf("wrote %s (this invocation %.1f min, the study's runs %.1f min)\n", s.doc.c_str(),
                seconds_since(start) / 60.0, total_s / 60.0);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "depth_study: error: %s\n", e.what());
    return 2;
  }
}
