// train_gpt: trains a byte-level GPT on the fortunes text with one of the five norms,
// in a pre-norm, Peri-LN or LayerNorm-Scaling block, and prints per-layer activation
// statistics at the end (DIR/act_stats.csv holds them over the run).
//   build/release/train_gpt --norm cbwc --steps 500 --out runs/cbwc
//   build/release/train_gpt --norm rms --block lns --layers 16 --out runs/lns
// Bad input (an unknown flag or norm, a shape that does not fit, missing data, a bad
// checkpoint) prints one line naming the problem and exits with code 2.
// Data parallel over N processes (a build with make MPI=1; docs/distributed.md):
//   mpirun -np 2 build/release-mpi/train_gpt --batch 16 --threads 1 --out runs/dp
#include <cstdint>
#include <cstdio>

#include "tensor/threads.h"
#include "train/act_stats.h"
#include "train/args.h"
#include "train/distributed.h"
#include "train/flag_checks.h"
#include "train/stop_signals.h"
#include "train/gpt_run.h"

using namespace nl;

namespace {

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  prefer_spinning_threads(argv);
  dist::init(&argc, &argv);
  const int code = run(argc, argv);
  dist::finalize();
  return code;
}

namespace {

// An error ends every rank: the others may be waiting for this one in a collective.
int fail(const char* what) {
  if (dist::world_size() > 1)
    std::fprintf(stderr, "train_gpt: error (rank %d of %d): %s\n", dist::rank(), dist::world_size(), what);
  else
    std::fprintf(stderr, "train_gpt: error: %s\n", what);
  return dist::abort_job(2);
}

int run(int argc, char** argv) {
  Args args("train_gpt", "Train a byte-level GPT on Debian's fortunes text and compare normalization layers.");
  args.add("--norm", "ln", "ln | rms | cbwc | dyt | bhyt | bhyt-exact");
  args.add("--block", "pre", "pre (Pre-LN) | peri (Peri-LN) | lns (LayerNorm Scaling: norm outputs of layer l times 1/sqrt(l))");
  args.add("--layers", "4", "transformer blocks");
  args.add("--dim", "128", "model width");
  args.add("--heads", "4", "attention heads (must divide --dim)");
  args.add("--seq", "64", "sequence length (the model's context)");
  args.add("--batch", "16", "sequences per step");
  args.add("--steps", "500", "training steps (the schedule's length)");
  args.add("--lr", "1e-3", "peak learning rate");
  args.add("--min-lr", "1e-4", "learning rate at the end of the cosine");
  args.add("--warmup", "50", "linear warmup steps");
  args.add("--wd", "0.1", "AdamW weight decay (2-D weights only)");
  args.add("--clip", "1.0", "global gradient-norm clip (0: off)");
  args.add("--seed", "1337", "seed for initialisation, batches and sampling");
  args.add("--eval-every", "100", "validate every N steps");
  args.add("--eval-batches", "20", "validation batches of 32 sequences");
  args.add("--train-bytes", "-1", "keep only the first N training bytes (-1: all)");
  args.add("--threads", "2", "CPU threads (OpenMP and OpenBLAS)");
  args.add("--device", "cpu", "cpu | cuda (needs a build with make CUDA=1 and a GPU)");
  args.add("--dyt-alpha0", "0.5", "DyT's initial alpha");
  args.add("--bhyt-lambda", "1.0", "BHyT's initial lambda at every site");
  args.add("--bhyt-lambda-attn", "", "initial lambda of the attention branch's sites (default: --bhyt-lambda)");
  args.add("--bhyt-lambda-mlp", "", "initial lambda of the MLP branch's sites (default: --bhyt-lambda)");
  args.add("--bhyt-p", "0.99", "BHyT's target probability p (kappa = 1/sqrt(1-p))");
  args.add("--bhyt-refresh", "1", "bhyt: training steps between recomputations of c_attn = ||W_V W_O||^2/(T d)");
  args.add("--act-stats-every", "100", "per-layer activation statistics every N steps into DIR/act_stats.csv (0: off)");
  args.add("--dropout", "0", "dropout on the attention and MLP outputs, training only (0: none)");
  args.add("--data", "/usr/share/games/fortunes", "directory of the fortunes text");
  args.add("--out", "runs/gpt", "output directory");
  args.add_switch("--resume", "continue from DIR/checkpoint.safetensors");
  args.add("--stop-after", "-1", "stop after this step, writing the checkpoint (-1: run all)");
  args.add_switch("--quiet", "no progress lines");
  add_run_safety_flags(args);
  args.add("--dist-timeout", "300", "with several MPI ranks: seconds one rank may wait for the others in one "
           "collective before it gives up (0: forever)");
  try {
    if (!args.parse(argc, argv)) return 0;
    GPTRunConfig c;
    c.model.norm.name = args.str("--norm");
    c.model.layers = args.integer("--layers");
    c.model.dim = args.integer("--dim");
    c.model.heads = args.integer("--heads");
    c.model.context = args.integer("--seq");
    c.model.norm.dyt_alpha0 = (float)args.real("--dyt-alpha0");
    c.model.norm.bhyt_lambda0 = (float)args.real("--bhyt-lambda");
    if (args.given("--bhyt-lambda-attn")) c.model.norm.bhyt_lambda_attn = (float)args.real("--bhyt-lambda-attn");
    if (args.given("--bhyt-lambda-mlp")) c.model.norm.bhyt_lambda_mlp = (float)args.real("--bhyt-lambda-mlp");
    c.model.norm.bhyt_p = (float)args.real("--bhyt-p");
    c.model.norm.bhyt_refresh = args.integer("--bhyt-refresh");
    c.model.block = args.str("--block");
    c.act_stats_every = args.integer("--act-stats-every");
    c.model.dropout = (float)args.real("--dropout");
    c.batch = args.integer("--batch");
    c.steps = args.integer("--steps");
    c.lr = (float)args.real("--lr");
    c.min_lr = (float)args.real("--min-lr");
    c.warmup = args.integer("--warmup");
    c.wd = (float)args.real("--wd");
    c.clip = (float)args.real("--clip");
    c.seed = (uint64_t)args.integer("--seed", 0, INT64_MAX);
    c.eval_every = args.integer("--eval-every");
    c.eval_batches = args.integer("--eval-batches");
    c.train_bytes = args.integer("--train-bytes");
    c.threads = (int)args.integer("--threads", 1, kMaxThreads);
    c.device = args.str("--device");
    c.data_dir = args.str("--data");
    c.out_dir = args.str("--out");
    c.resume = args.on("--resume");
    c.stop_after = args.integer("--stop-after");
    c.quiet = args.on("--quiet");
    c.safety = read_run_safety_flags(args);
    const double dist_timeout = args.real("--dist-timeout");
    check_real_flag("--dist-timeout", dist_timeout, 0, 1e6);
    dist::set_collective_timeout(dist_timeout);
    install_stop_signals();
    GPTRunResult r = run_gpt(c);
    if (!dist::is_lead()) {  // the lead alone explains; every rank exits with the same code
      if (r.end.signal) return 128 + r.end.signal;
      return r.end.fault.empty() && !r.diverged ? 0 : 1;
    }
    if (const int code = report_run_end("train_gpt", r.end)) return code;
    if (!r.act_stats.empty() && !c.quiet)
      std::printf("activation statistics at step %lld (fixed validation batch; act_stats.csv has every %lld steps; "
                  "taking them cost %.2f s of the run's %.1f s):\n%s",
                  (long long)r.steps_done, (long long)c.act_stats_every, r.act_stats_s, r.wall_s,
                  format_act_stats(r.act_stats).c_str());
    std::printf("done: %lld steps, train loss %.4f, val loss %.4f, %.0f tok/s%s\n", (long long)r.steps_done,
                r.final_train_loss, r.final_val_loss, r.tokens_per_s, r.diverged ? " (DIVERGED: NaN/inf loss)" : "");
    if (dist::world_size() > 1)
      std::printf("data parallel: %d ranks (%s), %.0f tok/s over all ranks, %.2f s of the run's %.1f s in the "
                  "gradient all-reduce\n",
                  dist::world_size(), dist::backend(), r.tokens_per_s, r.allreduce_s, r.wall_s);
    return r.diverged ? 1 : 0;
  } catch (const std::exception& e) {  // nl::Error included
    return fail(e.what());
  }
}

}  // namespace
