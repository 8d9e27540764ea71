// regime_study: the DyT regime study of issue 7 at a scale two CPU cores can train.
// "When does removing LayerNorm help?" (Verma 2026; ../shared/NORMS.md, DyT) claims that
// DyT lowers the validation loss of a model that is large for its data and raises it
// when data is plentiful, that tanh saturation is the mechanism, and that the
// saturation at step 500 predicts the outcome (DyT helps iff |alpha x| > 2 for more
// than 43 % of the pre-tanh values). This runner trains the same small GPT with
// LayerNorm and with DyT (alpha0 2 and 0.5) on training subsets of several sizes for the
// same number of steps, measures each run on held-out batches (saturation at the
// screening step and at the end, effective rank and noise sensitivity of the residual
// stream per layer; studies/instruments/regime_metrics.h), and writes
//   DOC (docs/results/regime.md), its plot (regime.png next to it, by
//   scripts/plot_regime.sh), and OUT/<size>/<variant>/s<seed>/... (each run's files)
//   build/release/regime_study            # the whole study (about 15-20 minutes on an idle machine)
//   build/release/regime_study --reuse    # rewrite the report from the runs in --out
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tensor/threads.h"
#include "train/flags/args.h"
#include "train/gpt/gpt_run.h"
#include "studies/instruments/regime_metrics.h"
#include "studies/instruments/screening.h"
#include "studies/report/study.h"
#include "train/data/text_data.h"

using namespace nl;
namespace fs = std::filesystem;

namespace {

// One model variant of the study: a norm, DyT's alpha0, and the recipe options.
struct Variant {
  std::string label;  // ln, dyt@2, dyt@0.5, plain dyt@2, ln swiglu, ...
  std::string norm;
  float alpha0 = 0.5f;
  bool plain = false;   // dyt without the start-up fix (point 0 of the issue)
  std::string mlp = "gelu";
};

// "ln" or "dyt@ALPHA0"
Variant parse_variant(const std::string& spec) {
  Variant v;
  v.label = spec;
  const size_t at = spec.find('@');
  v.norm = spec.substr(0, at);
  check_norm_name(v.norm);
  if (at != std::string::npos) {
    NL_CHECK(v.norm == "dyt", "variant '", spec, "': only dyt takes @alpha0");
    char* end = nullptr;
    v.alpha0 = std::strtof(spec.c_str() + at + 1, &end);
    NL_CHECK(*end == '\0' && v.alpha0 > 0, "variant '", spec, "': alpha0 must be a positive number");
  }
  return v;
}

// What one finished run leaves for the report (OUT/.../study_summary.txt, for --reuse).
struct RunRecord {
  std::string variant, mlp = "gelu";
  int64_t size = 0;  // training bytes (-1: all)
  uint64_t seed = 0;
  bool plain = false;
  double train_loss = NAN, val_loss = NAN, val_at_screen = NAN, tok_s = NAN, wall_s = NAN, load = NAN;
  bool diverged = false;
  std::vector<double> sat_screen, sat_end;  // |u| > 1, 2, 3 averaged over tanh sites (dyt only)
  std::vector<double> rank, noise;          // per layer 0..L (noise: then the logits)
};

void save_record(const std::string& path, const RunRecord& r) {
  std::ofstream out(path);
  out.precision(9);
  auto list = [&](const char* key, const std::vector<double>& v) {
    out << key;
    for (double x : v) out << " " << x;
    out << "\n";
  };
  out << "variant " << r.variant << "\nmlp " << r.mlp << "\nsize " << r.size << "\nseed " << r.seed << "\nplain "
      << r.plain << "\ntrain_loss " << r.train_loss << "\nval_loss " << r.val_loss << "\nval_at_screen "
      << r.val_at_screen << "\ntok_s " << r.tok_s << "\nwall_s " << r.wall_s << "\nload " << r.load << "\ndiverged "
      << r.diverged << "\n";
  list("sat_screen", r.sat_screen);
  list("sat_end", r.sat_end);
  list("rank", r.rank);
  list("noise", r.noise);
}

bool load_record(const std::string& path, RunRecord& r) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  std::map<std::string, std::string> kv;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    kv[line.substr(0, sp)] = sp == std::string::npos ? "" : line.substr(sp + 1);
  }
  for (const char* key : {"variant", "val_loss", "sat_screen", "rank", "noise"})
    if (!kv.count(key)) return false;
  auto num = [&](const char* key) { return std::strtod(kv[key].c_str(), nullptr); };
  auto list = [&](const char* key) {
    std::vector<double> v;
    std::stringstream ss(kv[key]);
    double x;
    while (ss >> x) v.push_back(x);
    return v;
  };
  r.variant = kv["variant"];
  r.mlp = kv["mlp"];
  r.size = std::atoll(kv["size"].c_str());
  r.seed = std::strtoull(kv["seed"].c_str(), nullptr, 10);
  r.plain = kv["plain"] == "1";
  r.train_loss = num("train_loss");
  r.val_loss = num("val_loss");
  r.val_at_screen = num("val_at_screen");
  r.tok_s = num("tok_s");
  r.wall_s = num("wall_s");
  r.load = num("load");
  r.diverged = kv["diverged"] == "1";
  r.sat_screen = list("sat_screen");
  r.sat_end = list("sat_end");
  r.rank = list("rank");
  r.noise = list("noise");
  return true;
}

struct Study {
  GPTRunConfig base;
  std::vector<int64_t> sizes;
  std::vector<uint64_t> seeds;
  std::vector<Variant> variants;
  std::string dyt_emb_scale;  // the start-up fix applied to every non-plain dyt run
  std::string dyt_final_norm;
  int64_t plain_size = 0, swiglu_size = 0;  // 0: no such cell
  int64_t screen_step = kScreenSteps;
  int64_t params = 0;
  int64_t full_train_bytes = 0;
  std::string out, doc, plot_script, command, note;
};

std::string size_label(int64_t size, int64_t full) {
  const double b = size < 0 ? (double)full : (double)size;
  if (b >= 1e6) return fmt(b / 1e6, "%.2g") + " MB" + (size < 0 ? " (all)" : "");
  return fmt(b / 1e3, "%.3g") + " KB";
}

double bytes_of(int64_t size, int64_t full) { return size < 0 ? (double)full : (double)size; }

// Trains one run (or reuses its record) and measures it.
RunRecord train_one(const Study& s, const Variant& v, int64_t size, uint64_t seed, bool reuse,
                    const std::vector<Tensor>& held_out) {
  GPTRunConfig c = s.base;
  c.seed = seed;
  c.train_bytes = size;
  c.model.norm.name = v.norm;
  c.model.norm.dyt_alpha0 = v.alpha0;
  c.model.mlp = v.mlp;
  if (v.norm == "dyt" && !v.plain) {
    if (s.dyt_emb_scale == "sqrt")
      c.model.emb_scale0 = std::sqrt((float)c.model.dim);
    else if (s.dyt_emb_scale != "none")
      c.model.emb_scale0 = std::strtof(s.dyt_emb_scale.c_str(), nullptr);
    if (s.dyt_final_norm != "same") c.model.final_norm = s.dyt_final_norm;
  }
  std::string dir_label = v.label;
  std::replace(dir_label.begin(), dir_label.end(), '@', '_');
  std::replace(dir_label.begin(), dir_label.end(), ' ', '_');
  c.out_dir = s.out + "/" + (size < 0 ? std::string("all") : std::to_string(size)) + "/" + dir_label + "/s" +
              std::to_string(seed);
  const std::string summary = c.out_dir + "/study_summary.txt";
  RunRecord r;
  if (reuse && load_record(summary, r)) {
    std::printf(" (reused)");
    return r;
  }
  r.variant = v.label;
  r.mlp = v.mlp;
  r.size = size;
  r.seed = seed;
  r.plain = v.plain;
  r.load = load_average();
  c.after_step = [&](GPT& model, int64_t done) {
    const bool at_screen = done == s.screen_step, at_end = done == c.steps;
    if (!at_screen && !at_end) return;
    const SaturationReport sat = held_out_saturation(model, held_out);
    if (!sat.empty()) (at_end ? r.sat_end : r.sat_screen).assign(sat.mean.begin(), sat.mean.end());
    if (at_end) {
      r.rank = residual_effective_rank(model, held_out[0]);
      r.noise = residual_noise_sensitivity(model, held_out[0]);
    }
  };
  // the validation loss at the screening step: evaluations fall on multiples of eval_every
  NL_CHECK(s.screen_step % c.eval_every == 0, "--screen-step ", s.screen_step, " must be a multiple of --eval-every ",
           c.eval_every);
  const GPTRunResult res = run_gpt(c);
  r.train_loss = res.final_train_loss;
  r.val_loss = res.final_val_loss;
  r.tok_s = res.tokens_per_s;
  r.wall_s = res.wall_s;
  r.diverged = res.diverged;
  for (const auto& [step, val] : val_curve(c.out_dir + "/log.csv"))
    if (step == s.screen_step) r.val_at_screen = std::strtod(val.c_str(), nullptr);
  save_record(summary, r);
  return r;
}

// ---------------------------------------------------------------- the report

struct Spread {
  double mean = NAN, lo = NAN, hi = NAN;
  int n = 0;
};
Spread spread(const std::vector<double>& v) {
  Spread s;
  for (double x : v)
    if (std::isfinite(x)) {
      s.mean = s.n ? s.mean + x : x;
      s.lo = s.n ? std::min(s.lo, x) : x;
      s.hi = s.n ? std::max(s.hi, x) : x;
      ++s.n;
    }
  if (s.n) s.mean /= s.n;
  return s;
}
std::string show(const Spread& s, const char* f = "%.4f") {
  if (s.n == 0) return "-";
  if (s.n == 1) return fmt(s.mean, f);
  return fmt(s.mean, f) + " (" + fmt(s.lo, f) + "-" + fmt(s.hi, f) + ")";
}

std::vector<const RunRecord*> select(const std::vector<RunRecord>& runs, const std::string& variant, int64_t size,
                                     const std::string& mlp = "gelu", bool plain = false) {
  std::vector<const RunRecord*> out;
  for (const RunRecord& r : runs)
    if (r.variant == variant && r.size == size && r.mlp == mlp && r.plain == plain) out.push_back(&r);
  return out;
}

const RunRecord* select_seed(const std::vector<RunRecord>& runs, const std::string& variant, int64_t size,
                             uint64_t seed, const std::string& mlp = "gelu") {
  for (const RunRecord* r : select(runs, variant, size, mlp))
    if (r->seed == seed) return r;
  return nullptr;
}

template <typename F>
Spread over(const std::vector<const RunRecord*>& rs, F f) {
  std::vector<double> v;
  for (const RunRecord* r : rs) v.push_back(f(*r));
  return spread(v);
}

double at(const std::vector<double>& v, size_t i) { return i < v.size() ? v[i] : NAN; }
std::string cell(double v, const char* f) { return std::isfinite(v) ? fmt(v, f) : "-"; }
double rel(double dyt, double ln) { return 100.0 * (dyt - ln) / ln; }

// Relative difference of a DyT variant against LN, per seed (the same seed's LN run).
Spread relative_difference(const std::vector<RunRecord>& runs, const std::string& variant, int64_t size,
                           const std::string& mlp = "gelu", const std::string& ln_label = "ln") {
  std::vector<double> v;
  for (const RunRecord* d : select(runs, variant, size, mlp))
    if (const RunRecord* l = select_seed(runs, ln_label, size, d->seed, mlp)) v.push_back(rel(d->val_loss, l->val_loss));
  return spread(v);
}

const char* kPaperAndCaveats = R"(
  A claim that shows here is consistent with the paper; one that does not may still hold at
  scale. The data-size sweep here keeps the *number of steps* fixed and changes how often
  the model sees each byte, which is how a small training set makes a model
  over-parameterised for its data; at the largest size the model sees each byte less than
  once.
- **The DyT recipe is not the paper's plain one.** DyT as initialised by default in this
  project (GPT-2 weights, no embedding scale, DyT as the final norm too) does not train at
  this scale (point 0 above); the study therefore uses the start-up fix described in the
  setup for every DyT run and reports the plain recipe separately. The fix changes what is
  compared (see the setup): the DyT models are not norm-free.
- **Seeds and noise.** Differences smaller than the spread over seeds (the ranges in
  parentheses) are noise. Where only one seed was affordable, differences of a few
  hundredths of a nat are within what another seed changes.
- **Saturation** is measured on 4 fixed held-out batches of 32 sequences (8 192 tokens),
  in eval mode, without recording gradients, as the fraction of pre-tanh values
  |alpha x| > 2 averaged over the DyT sites (every block's two norms, and the final norm
  when it is DyT too). The paper's 0.43 threshold was fitted on its own models; nothing guarantees it
  transfers to a model of this size, so the verdict column is a test of the rule, not of
  DyT.
- **Effective rank** is exp of the entropy of the normalised singular values of the
  residual stream (one held-out batch of 32 sequences, tokens by width, not centred), per layer;
  **noise sensitivity** is the mean of ||f(e + d) - f(e)|| / ||d|| over 3 draws of
  uniform noise d in [-0.01, 0.01] added to the embedding sum e, for f = the residual
  stream at each layer and the logits.
)";

std::string write_report(const Study& s, const std::vector<RunRecord>& runs, double total_s,
                         const std::vector<double>& loads) {
  std::ostringstream md;
  const GPTRunConfig& b = s.base;
  const int64_t L = b.model.layers;
  const double tokens = (double)b.steps * (double)b.batch * (double)b.model.context;
  md << "# DyT regime study: when does removing LayerNorm help?\n\n"
     << "Generated by `regime_study` on " << today() << " (" << b.threads << " thread"
     << (b.threads == 1 ? "" : "s") << " on the 2-core machine of "
     << "`../shared/BENCHMARKS.md`). Whole study: " << fmt(total_s / 60.0, "%.1f") << " min of training runs";
  if (!loads.empty())
    md << "; the machine's 1-minute load average when runs started was between "
       << fmt(*std::min_element(loads.begin(), loads.end()), "%.1f") << " and "
       << fmt(*std::max_element(loads.begin(), loads.end()), "%.1f")
       << " (2 cores: above 2, other jobs shared them and the study ran slower than it would alone)";
  md << ".\n\nRegenerate: `make -j2 build/release/regime_study && " << s.command << "`\n\n";
  if (!s.note.empty()) md << "**Note.** " << s.note << "\n\n";
  md << "@SUMMARY@";

  md << "## Setup\n\n"
     << "A byte-level GPT on Debian's fortunes text: " << L << " pre-norm block(s), width " << b.model.dim << ", "
     << b.model.heads << " heads, context " << b.model.context << ", " << fmt((double)s.params / 1e6, "%.2f")
     << "M parameters (tied embedding and head). Every run: " << b.steps << " AdamW steps of batch " << b.batch
     << " (" << fmt(tokens / 1e6, "%.2f") << "M training tokens seen), lr " << fmt(b.lr) << " with " << b.warmup
     << " warmup steps and cosine decay to " << fmt(b.min_lr) << ", weight decay " << fmt(b.wd) << ", clip "
     << fmt(b.clip) << ". Training subsets: the first N bytes of the training split (the validation split, the "
     << "last 10 % of the text, is the same for every run); validation loss on " << b.eval_batches
     << " fixed batches of " << b.eval_batch_size << " sequences at the end. Seeds:";
  for (uint64_t seed : s.seeds) md << " " << seed;
  md << " (initialisation and batch order).\n\n"
     << "| training subset | bytes | passes over the subset | parameters per training byte |\n|---|---|---|---|\n";
  for (int64_t size : s.sizes) {
    const double bytes = bytes_of(size, s.full_train_bytes);
    md << "| " << size_label(size, s.full_train_bytes) << " | " << fmt(bytes, "%.0f") << " | "
       << fmt(tokens / bytes, "%.1f") << " | " << fmt((double)s.params / bytes, "%.2g") << " |\n";
  }
  md << "\nThe paper's two points for comparison: 64M parameters on 1M tokens (64 parameters per token) and on "
     << "118M tokens (0.54 per token).\n\n"
     << "DyT variants: `dyt@A` is DyT with alpha0 = A (the paper uses 2.0; DyT's default is 0.5) and the start-up "
     << "fix of point 0: ";
  if (s.dyt_emb_scale != "none")
    md << "the embedding sum multiplied by a learnable scalar initialised to "
       << (s.dyt_emb_scale == "sqrt" ? "sqrt(width) = " + fmt(std::sqrt((double)b.model.dim), "%.3g")
                                     : s.dyt_emb_scale);
  if (s.dyt_final_norm != "same")
    md << (s.dyt_emb_scale != "none" ? ", and " : "") << "a `" << s.dyt_final_norm << "` final norm";
  md << " (`train_gpt --emb-scale " << s.dyt_emb_scale;
  if (s.dyt_final_norm != "same") md << " --final-norm " << s.dyt_final_norm;
  md << "`). `ln` is the plain Pre-LN GPT.\n\n";

  // ---- point 0: plain DyT
  md << "## 0. Does DyT train at all here?\n\n"
     << "With the project's GPT-2 initialisation the residual stream starts with an RMS of about 0.03, so every "
     << "tanh(alpha x) starts deep in its linear range with a tiny output. What happens next is in "
     << "[`dyt_start.md`](dyt_start.md) (the investigation, with the commands of its runs). In this study:\n\n";
  if (s.plain_size != 0) {
    md << "| run (" << size_label(s.plain_size, s.full_train_bytes)
       << ") | val loss at step " << s.screen_step << " | val loss at the end | saturation |alpha x| > 2 at step "
       << s.screen_step << " | at the end | the screening rule would predict |\n"
       << "|---|---|---|---|---|---|\n";
    auto row = [&](const std::string& label, const std::vector<const RunRecord*>& rs) {
      if (rs.empty()) return;
      md << "| " << label << " | " << show(over(rs, [](const RunRecord& r) { return r.val_at_screen; })) << " | "
         << show(over(rs, [](const RunRecord& r) { return r.val_loss; })) << " | "
         << show(over(rs, [](const RunRecord& r) { return at(r.sat_screen, 1); }), "%.3f") << " | "
         << show(over(rs, [](const RunRecord& r) { return at(r.sat_end, 1); }), "%.3f") << " | ";
      const Spread sat = over(rs, [](const RunRecord& r) { return at(r.sat_screen, 1); });
      md << (sat.n == 0 ? "-" : sat.mean > kScreenThreshold ? "DyT helps" : "DyT does not help") << " |\n";
    };
    for (const Variant& v : s.variants)
      if (v.norm == "dyt") row("plain " + v.label + " (no fix)", select(runs, v.label, s.plain_size, "gelu", true));
    for (const Variant& v : s.variants) row(v.label, select(runs, v.label, s.plain_size));
    md << "\nA byte-level model that only knows byte frequencies sits at about 3.3-3.4 nats/byte.\n\n";
  }

  // ---- the phase table
  md << "## 1. The phase table: validation loss against training-set size\n\n"
     << "Validation loss (nats/byte) at the end of each run, mean over seeds with the range in parentheses; "
     << "the relative difference is (DyT - LN) / LN per seed, then averaged: negative means DyT is better.\n\n"
     << "| training subset | ln val |";
  std::vector<const Variant*> dyts;
  for (const Variant& v : s.variants)
    if (v.norm == "dyt") dyts.push_back(&v);
  for (const Variant* v : dyts) md << " " << v->label << " val | " << v->label << " vs ln |";
  md << " ln train |";
  for (const Variant* v : dyts) md << " " << v->label << " train |";
  md << "\n|---|---|";
  for (size_t i = 0; i < dyts.size(); ++i) md << "---|---|";
  md << "---|";
  for (size_t i = 0; i < dyts.size(); ++i) md << "---|";
  md << "\n";
  std::ofstream csv(s.out + "/regime_rel.csv");
  csv << "bytes";
  for (const Variant* v : dyts) csv << "," << v->label << "," << v->label << "_lo," << v->label << "_hi";
  csv << "\n";
  for (int64_t size : s.sizes) {
    md << "| " << size_label(size, s.full_train_bytes) << " | "
       << show(over(select(runs, "ln", size), [](const RunRecord& r) { return r.val_loss; })) << " |";
    csv << fmt(bytes_of(size, s.full_train_bytes), "%.0f");
    for (const Variant* v : dyts) {
      const Spread d = relative_difference(runs, v->label, size);
      md << " " << show(over(select(runs, v->label, size), [](const RunRecord& r) { return r.val_loss; })) << " | "
         << (d.n ? fmt(d.mean, "%+.1f") + " %" + (d.n > 1 ? " (" + fmt(d.lo, "%+.1f") + " to " + fmt(d.hi, "%+.1f") + ")" : "")
                 : "-")
         << " |";
      csv << "," << fmt(d.mean, "%.4f") << "," << fmt(d.lo, "%.4f") << "," << fmt(d.hi, "%.4f");
    }
    md << " " << show(over(select(runs, "ln", size), [](const RunRecord& r) { return r.train_loss; })) << " |";
    for (const Variant* v : dyts)
      md << " " << show(over(select(runs, v->label, size), [](const RunRecord& r) { return r.train_loss; })) << " |";
    md << "\n";
    csv << "\n";
  }
  csv.close();
  md << "\n`train`: the last step's training loss (one batch): far below the validation loss when a run "
     << "over-fits its subset.\n\n";
  const fs::path doc_dir = fs::path(s.doc).parent_path();
  const std::string png = (doc_dir / "regime.png").string();
  const std::string cmd = "bash " + s.plot_script + " '" + png + "' '" + s.out + "/regime_rel.csv' > /dev/null";
  if (!s.plot_script.empty() && std::system(cmd.c_str()) == 0)
    md << "![relative difference of DyT's validation loss against LN, per training-set size](regime.png)\n\n";
  else
    md << "(plot not made: `" << s.plot_script << "` failed or gnuplot is missing)\n\n";

  // ---- saturation and the screening rule
  md << "## 2. Saturation and the screening rule\n\n"
     << "Saturation: the fraction of pre-tanh values with |alpha x| > 2, averaged over the DyT sites, on held-out "
     << "batches, at step " << s.screen_step << " and at the end. The paper's rule: DyT helps iff the saturation at "
     << "step 500 exceeds 0.43. Outcome: *helped* when DyT's validation loss is below LN's (same seed).\n\n"
     << "| training subset | variant | seed | sat > 2 at step " << s.screen_step
     << " | sat > 2 at the end | (sat > 1, > 3 at the end) | rule predicts | outcome | rule right? |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  int right = 0, judged = 0;
  for (int64_t size : s.sizes)
    for (const Variant* v : dyts)
      for (const RunRecord* r : select(runs, v->label, size)) {
        const RunRecord* l = select_seed(runs, "ln", size, r->seed);
        const double sat = at(r->sat_screen, 1);
        const bool predicts = sat > kScreenThreshold;
        std::string outcome = "-", verdict = "-";
        if (l && std::isfinite(sat)) {
          const bool helped = r->val_loss < l->val_loss;
          outcome = helped ? "helped (" + fmt(rel(r->val_loss, l->val_loss), "%+.1f") + " %)"
                           : "hurt (" + fmt(rel(r->val_loss, l->val_loss), "%+.1f") + " %)";
          verdict = predicts == helped ? "yes" : "**no**";
          right += predicts == helped;
          ++judged;
        }
        md << "| " << size_label(size, s.full_train_bytes) << " | " << v->label << " | " << r->seed << " | "
           << fmt(sat, "%.3f") << " | " << fmt(at(r->sat_end, 1), "%.3f") << " | " << fmt(at(r->sat_end, 0), "%.3f")
           << ", " << fmt(at(r->sat_end, 2), "%.3f") << " | " << (predicts ? "helps" : "does not help") << " | "
           << outcome << " | " << verdict << " |\n";
      }
  md << "\nThe rule was right in " << right << " of " << judged << " cells.\n\n";

  // ---- representation metrics
  md << "## 3. Effective rank and noise sensitivity per layer\n\n"
     << "Effective rank of the residual stream (layer 0: entering block 1; layer " << L
     << ": leaving the last block), at the end, mean over seeds; and noise sensitivity of the stream leaving the last "
     << "block and of the logits.\n\n| training subset | variant |";
  for (int64_t l = 0; l <= L; ++l) md << " rank L" << l << " |";
  md << " noise L" << L << " | noise logits |\n|---|---|";
  for (int64_t l = 0; l <= L + 2; ++l) md << "---|";
  md << "\n";
  for (int64_t size : s.sizes)
    for (const Variant& v : s.variants) {
      const auto rs = select(runs, v.label, size);
      if (rs.empty()) continue;
      md << "| " << size_label(size, s.full_train_bytes) << " | " << v.label << " |";
      for (int64_t l = 0; l <= L; ++l)
        md << " " << fmt(over(rs, [&](const RunRecord& r) { return at(r.rank, l); }).mean, "%.1f") << " |";
      md << " " << fmt(over(rs, [&](const RunRecord& r) { return at(r.noise, L); }).mean, "%.3g") << " | "
         << fmt(over(rs, [&](const RunRecord& r) { return at(r.noise, L + 1); }).mean, "%.3g") << " |\n";
    }
  md << "\n";

  // ---- SwiGLU
  if (s.swiglu_size != 0) {
    md << "## 4. The SwiGLU cell\n\n"
       << "The paper reports that DyT can collapse with a SwiGLU MLP. Here: " << size_label(s.swiglu_size, s.full_train_bytes)
       << ", the same recipe with `--mlp swiglu` (hidden width round(8C/3), about the GELU MLP's parameters), "
       << "seed " << s.seeds.front() << ".\n\n"
       << "| MLP | variant | val loss | train loss | vs ln | sat > 2 at step " << s.screen_step
       << " | sat > 2 at the end | rank L" << L << " | status |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const char* mlp : {"gelu", "swiglu"})
      for (const Variant& v : s.variants) {
        const RunRecord* r = select_seed(runs, v.label, s.swiglu_size, s.seeds.front(), mlp);
        if (!r) continue;
        const RunRecord* l = select_seed(runs, "ln", s.swiglu_size, s.seeds.front(), mlp);
        const std::string status = r->diverged ? "DIVERGED" : r->val_loss > 3.2 ? "stuck near unigram loss" : "ok";
        md << "| " << mlp << " | " << v.label << " | " << fmt(r->val_loss, "%.4f") << " | " << fmt(r->train_loss, "%.4f")
           << " | " << (l && v.norm == "dyt" ? fmt(rel(r->val_loss, l->val_loss), "%+.1f") + " %" : "-") << " | "
           << cell(at(r->sat_screen, 1), "%.3f") << " | " << cell(at(r->sat_end, 1), "%.3f") << " | "
           << cell(at(r->rank, L), "%.1f") << " | " << status << " |\n";
      }
    md << "\n";
  }
  md << "## Caveats\n\n- **Scale.** The paper's numbers come from a 64M-parameter model trained on up to 118M "
     << "tokens; this study trains a model " << fmt(64e6 / (double)s.params, "%.0f")
     << " times smaller for a fixed, short budget." << kPaperAndCaveats;

  // ---- the summary at the top
  std::ostringstream sum;
  sum << "## Summary\n\n";
  for (const Variant* v : dyts) {
    std::vector<double> d;  // the relative difference per size, smallest size first
    for (int64_t size : s.sizes) d.push_back(relative_difference(runs, v->label, size).mean);
    const double lo = *std::min_element(d.begin(), d.end()), hi = *std::max_element(d.begin(), d.end());
    sum << "- **" << v->label << " against LN** (paper, 64M parameters: DyT -27.3 % at 1M tokens, +18.8 % at 118M): "
        << fmt(d.front(), "%+.1f") << " % on the smallest subset (" << size_label(s.sizes.front(), s.full_train_bytes)
        << "), " << fmt(d.back(), "%+.1f") << " % on the largest (" << size_label(s.sizes.back(), s.full_train_bytes)
        << "), between " << fmt(lo, "%+.1f") << " and " << fmt(hi, "%+.1f") << " % over the " << d.size() << " sizes. ";
    if (lo > 0)
      sum << "DyT is worse than LN at every size";
    else if (hi < 0)
      sum << "DyT is better than LN at every size";
    else
      sum << "DyT is better at some sizes and worse at others";
    const bool flips = d.front() < 0 && d.back() > 0;
    const bool rising = std::is_sorted(d.begin(), d.end());
    sum << (flips ? "; the sign flips from small to large data as in the paper"
                  : rising && d.back() - d.front() > 1.0 ? "; the gap widens with data size, the paper's direction, without its sign flip"
                                                         : "; no trend with data size beyond a point or so: the paper's regime dependence did **not** reproduce")
        << ".\n";
  }
  int predicted_help = 0;
  for (const RunRecord& r : runs)
    if (!r.plain && r.mlp == "gelu" && at(r.sat_screen, 1) > kScreenThreshold) ++predicted_help;
  sum << "- **Screening rule** (saturation |alpha x| > 2 above 0.43 at step " << s.screen_step
      << " predicts that DyT helps): right in " << right << " of " << judged << " cells; it predicted that DyT helps in "
      << predicted_help << " of them.";
  for (const RunRecord& r : runs)
    if (r.plain && at(r.sat_screen, 1) > kScreenThreshold)
      sum << " On the plain recipe, which does not learn (val loss " << fmt(r.val_loss, "%.2f") << "), the saturation is "
          << fmt(at(r.sat_screen, 1), "%.2f") << ": the rule would call that model a DyT success.";
  sum << "\n";
  sum << "\nDetails, tables and caveats below.\n\n";
  std::string out = md.str();
  out.replace(out.find("@SUMMARY@"), 9, sum.str());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  prefer_spinning_threads(argv);
  Args args("regime_study",
            "Train the same small GPT with LayerNorm and DyT on training subsets of several sizes and write the DyT "
            "regime report (phase table, saturation and the screening rule, effective rank, noise sensitivity).");
  args.add("--sizes", "30000,100000,300000,1000000,-1", "comma-separated training-subset sizes in bytes (-1: all)");
  args.add("--variants", "ln,dyt@2,dyt@0.5", "comma-separated variants: ln, or dyt@ALPHA0");
  args.add("--seeds", "1337", "comma-separated seeds (every size and variant is trained once per seed)");
  args.add("--dyt-emb-scale", "sqrt", "the start-up fix for dyt: embedding scale (sqrt: sqrt(dim); a number; none)");
  args.add("--dyt-final-norm", "ln", "the start-up fix for dyt: the final norm of the dyt runs (same: dyt)");
  args.add("--plain-size", "30000", "also train the first dyt variant without the fix at this size (0: no)");
  args.add("--swiglu-size", "30000", "also train ln and the first dyt variant with --mlp swiglu at this size (0: no)");
  args.add("--layers", "4", "transformer blocks");
  args.add("--dim", "128", "model width");
  args.add("--heads", "4", "attention heads");
  args.add("--seq", "64", "sequence length");
  args.add("--batch", "16", "sequences per step");
  args.add("--steps", "800", "training steps per run");
  args.add("--warmup", "50", "linear warmup steps");
  args.add("--lr", "1e-3", "peak learning rate");
  args.add("--eval-every", "250", "validate every N steps (the screening step must be a multiple)");
  args.add("--eval-batches", "10", "validation batches of 32 sequences");
  args.add("--screen-step", "500", "the step at which the saturation is measured for the screening rule");
  args.add("--threads", "2", "CPU threads");
  args.add("--data", "/usr/share/games/fortunes", "directory of the fortunes text");
  args.add("--out", "runs/regime", "directory for the runs and the plot data");
  args.add("--doc", "docs/results/regime.md", "the report to write (its plot goes next to it)");
  args.add("--plot-script", "scripts/plot_regime.sh", "gnuplot script for the relative-difference plot");
  args.add_switch("--reuse", "reuse the runs already in --out instead of training them again");
  args.add("--note", "", "a paragraph to print under the command in the report (why this grid, say)");
  try {
    if (!args.parse(argc, argv)) return 0;
    const auto start = StudyClock::now();
    Study s;
    s.sizes = integer_list(args.str("--sizes"), "--sizes");
    for (int64_t size : s.sizes) NL_CHECK(size == -1 || size > 0, "--sizes: ", size, " is neither -1 nor positive");
    for (int64_t seed : integer_list(args.str("--seeds"), "--seeds")) s.seeds.push_back((uint64_t)seed);
    for (const auto& v : split_list(args.str("--variants"))) s.variants.push_back(parse_variant(v));
    NL_CHECK(!s.variants.empty() && s.variants.front().norm == "ln",
             "--variants must start with ln: the DyT runs are compared with it");
    s.dyt_emb_scale = args.str("--dyt-emb-scale");
    if (s.dyt_emb_scale != "sqrt" && s.dyt_emb_scale != "none") {
      char* end = nullptr;
      const double v = std::strtod(s.dyt_emb_scale.c_str(), &end);
      NL_CHECK(*end == '\0' && v > 0, "--dyt-emb-scale must be sqrt, none or a positive number, got '",
               s.dyt_emb_scale, "'");
    }
    s.dyt_final_norm = args.str("--dyt-final-norm");
    if (s.dyt_final_norm != "same") check_norm_name(s.dyt_final_norm);
    s.plain_size = args.integer("--plain-size");
    s.swiglu_size = args.integer("--swiglu-size");
    s.screen_step = args.integer("--screen-step");
    GPTRunConfig& b = s.base;
    b.model.layers = args.integer("--layers");
    b.model.dim = args.integer("--dim");
    b.model.heads = args.integer("--heads");
    b.model.context = args.integer("--seq");
    b.batch = args.integer("--batch");
    b.steps = args.integer("--steps");
    b.warmup = args.integer("--warmup");
    b.lr = (float)args.real("--lr");
    b.eval_every = args.integer("--eval-every");
    b.eval_batches = args.integer("--eval-batches");
    b.threads = (int)args.integer("--threads");
    b.data_dir = args.str("--data");
    b.act_stats_every = b.eval_every;
    b.quiet = true;
    b.sample_bytes = 0;
    NL_CHECK(s.screen_step > 0 && s.screen_step <= b.steps, "--screen-step must lie in [1, --steps]");
    s.out = args.str("--out");
    s.doc = args.str("--doc");
    s.plot_script = args.str("--plot-script");
    s.note = args.str("--note");
    s.command = "build/release/regime_study";
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--note") ++i;  // the note is printed in the report, not repeated in its command
      else if (a != "--reuse" && a.rfind("--note=", 0) != 0) s.command += " " + a;
    }
    set_num_threads(b.threads);
    {
      Generator gen(0);
      GPT probe(b.model, gen);  // validates the model flags and counts the parameters
      s.params = probe.num_parameters();
    }
    const TextData data = load_fortunes(b.data_dir);
    s.full_train_bytes = (int64_t)data.train.size();
    for (int64_t size : s.sizes)
      NL_CHECK(size <= s.full_train_bytes, "--sizes: ", size, " bytes is more than the ", s.full_train_bytes,
               " of the training split");
    std::vector<Tensor> held_out;  // the saturation's and metrics' batches: the same for every run
    for (const auto& [ids, targets] : fixed_batches(data.val, b.model.context, 32, 4, 424242)) held_out.push_back(ids);
    fs::create_directories(s.out);
    if (fs::path(s.doc).has_parent_path()) fs::create_directories(fs::path(s.doc).parent_path());

    // the cells: every size x seed x variant, then the plain-DyT and SwiGLU cells
    struct Cell {
      Variant v;
      int64_t size;
      uint64_t seed;
    };
    std::vector<Cell> cells;
    for (int64_t size : s.sizes)
      for (uint64_t seed : s.seeds)
        for (const Variant& v : s.variants) cells.push_back({v, size, seed});
    const Variant& first_dyt = s.variants.size() > 1 ? s.variants[1] : s.variants[0];
    if (s.plain_size != 0 && first_dyt.norm == "dyt") {
      Variant p = first_dyt;
      p.plain = true;
      cells.push_back({p, s.plain_size, s.seeds.front()});
    }
    if (s.swiglu_size != 0)
      for (size_t i = 0; i < std::min<size_t>(2, s.variants.size()); ++i) {  // ln and the first dyt variant
        Variant g = s.variants[i];
        g.mlp = "swiglu";
        cells.push_back({g, s.swiglu_size, s.seeds.front()});
      }

    std::vector<RunRecord> runs;
    std::vector<double> loads;
    double total_s = 0;
    for (size_t i = 0; i < cells.size(); ++i) {
      Cell cell = cells[i];
      std::string label = cell.v.label + (cell.v.plain ? " plain" : "") + (cell.v.mlp != "gelu" ? " " + cell.v.mlp : "");
      std::printf("[%2zu/%zu] %-9s %-18s seed %llu ...", i + 1, cells.size(),
                  size_label(cell.size, s.full_train_bytes).c_str(), label.c_str(), (unsigned long long)cell.seed);
      std::fflush(stdout);
      // distinct directories for the plain and swiglu cells
      Variant dir_variant = cell.v;
      if (cell.v.plain) dir_variant.label += " plain";
      if (cell.v.mlp != "gelu") dir_variant.label += " " + cell.v.mlp;
      RunRecord r = train_one(s, dir_variant, cell.size, cell.seed, args.on("--reuse"), held_out);
      r.variant = cell.v.label;  // the record keeps the variant's own label; plain and mlp say the rest
      r.plain = cell.v.plain;
      r.mlp = cell.v.mlp;
      total_s += r.wall_s;
      loads.push_back(r.load);
      std::printf(" val %.4f (train %.4f), sat>2 at %lld: %s, %.0f s, ETA %.0f min\n", r.val_loss, r.train_loss,
                  (long long)s.screen_step, r.sat_screen.size() > 1 ? fmt(r.sat_screen[1], "%.3f").c_str() : "-",
                  r.wall_s, seconds_since(start) / (double)(i + 1) * (double)(cells.size() - i - 1) / 60.0);
      runs.push_back(r);
    }
    std::ofstream(s.doc) << write_report(s, runs, total_s, loads);
    std::printf("wrote %s (this invocation %.1f min, the study's runs %.1f min)\n", s.doc.c_str(),
                seconds_since(start) / 60.0, total_s / 60.0);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "regime_study: error: %s\n", e.what());
    return 2;
  }
}
