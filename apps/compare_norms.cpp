// compare_norms: the runner behind `make demo`. Trains the same GPT with each norm on
// the same data, seed and budget, then prints one table and writes
//   OUT/summary.csv, OUT/val_loss.csv (step, one column per norm), OUT/<norm>/...
// A norm whose loss stays at the unigram level (about 3.3 nats/byte here) or becomes
// NaN is shown as such in the table, never dropped.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "tensor/threads.h"
#include "train/flags/args.h"
#include "train/gpt/gpt_run.h"
#include "studies/report/study.h"

using namespace nl;

int main(int argc, char** argv) {
  prefer_spinning_threads(argv);
  Args args("compare_norms", "Train the demo GPT once per norm with one recipe and compare them.");
  args.add("--norms", "ln,rms,cbwc,dyt,bhyt", "comma-separated norms to compare");
  args.add("--steps", "500", "training steps per norm");
  args.add("--layers", "4", "transformer blocks");
  args.add("--dim", "128", "model width");
  args.add("--heads", "4", "attention heads");
  args.add("--seq", "64", "sequence length");
  args.add("--batch", "16", "sequences per step");
  args.add("--eval-every", "100", "validate every N steps");
  args.add("--seed", "1337", "one seed for every run");
  args.add("--threads", "2", "CPU threads");
  args.add("--out", "runs/demo", "output directory");
  try {
    if (!args.parse(argc, argv)) return 0;
    std::vector<std::string> norms = split_list(args.str("--norms"));
    NL_CHECK(!norms.empty(), "--norms is empty");
    GPTRunConfig base;
    base.model.layers = args.integer("--layers");
    base.model.dim = args.integer("--dim");
    base.model.heads = args.integer("--heads");
    base.model.context = args.integer("--seq");
    base.batch = args.integer("--batch");
    base.steps = args.integer("--steps");
    base.eval_every = args.integer("--eval-every");
    base.seed = (uint64_t)args.integer("--seed");
    base.threads = (int)args.integer("--threads");
    base.quiet = true;
    const std::string out = args.str("--out");
    for (const auto& n : norms) check_norm_name(n);  // every name checked before any run

    std::map<std::string, GPTRunResult> results;
    for (const auto& n : norms) {
      GPTRunConfig c = base;
      c.model.norm.name = n;
      c.out_dir = out + "/" + n;
      std::printf("training %-10s ...", n.c_str());
      std::fflush(stdout);
      results[n] = run_gpt(c);
      std::printf(" val loss %.4f, %.0f tok/s\n", results[n].final_val_loss, results[n].tokens_per_s);
    }

    std::ofstream summary(out + "/summary.csv");
    summary << "norm,train_loss,val_loss,tok_per_s,rms_last_over_first,status\n";
    std::printf("\n%-10s %11s %9s %9s %17s  %s\n", "norm", "train loss", "val loss", "tok/s", "resid RMS L/1",
                "status");
    for (const auto& n : norms) {
      const GPTRunResult& r = results[n];
      const float ratio = r.residual_rms.size() >= 2 ? r.residual_rms.back() / r.residual_rms.front() : NAN;
      // 3.3 nats/byte is the unigram loss of this text: a model still there learnt nothing beyond byte counts
      const char* status = r.diverged ? "DIVERGED (NaN/inf)" : (r.final_val_loss > 3.2f ? "stuck near unigram loss" : "ok");
      std::printf("%-10s %11.4f %9.4f %9.0f %17.2f  %s\n", n.c_str(), r.final_train_loss, r.final_val_loss,
                  r.tokens_per_s, ratio, status);
      summary << n << "," << r.final_train_loss << "," << r.final_val_loss << "," << (int64_t)r.tokens_per_s << ","
              << ratio << "," << status << "\n";
    }

    // one table of validation curves for plotting: step, then one column per norm
    std::map<int64_t, std::map<std::string, std::string>> curves;
    for (const auto& n : norms)
      for (const auto& [step, v] : val_curve(out + "/" + n + "/log.csv")) curves[step][n] = v;
    std::ofstream vl(out + "/val_loss.csv");
    vl << "step";
    for (const auto& n : norms) vl << "," << n;
    vl << "\n";
    for (const auto& [step, row] : curves) {
      vl << step;
      for (const auto& n : norms) vl << "," << (row.count(n) ? row.at(n) : "");
      vl << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compare_norms: error: %s\n", e.what());
    return 2;
  }
}
