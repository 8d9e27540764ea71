// train_gpt: trains a byte-level GPT on the fortunes text with one of the five norms,
// in a pre-norm, Peri-LN or LayerNorm-Scaling block, and prints per-layer activation
// statistics at the end (DIR/act_stats.csv holds them over the run).
//   build/release/train_gpt --norm cbwc --steps 500 --out runs/cbwc
//   build/release/train_gpt --norm rms --block lns --layers 16 --out runs/lns
//   build/release/train_gpt --norm dyt --emb-scale sqrt --screen-dyt   # DyT's 500-step screening verdict
// Bad input (an unknown flag or norm, a shape that does not fit, missing data, a bad
// checkpoint) prints one line naming the problem and exits with code 2.
// Data parallel over N processes (a build with make MPI=1; docs/distributed.md):
//   mpirun -np 2 build/release-mpi/train_gpt --batch 16 --threads 1 --out runs/dp
#include <cstdint>
#include <cstdio>

#include "tensor/threads.h"
#include "studies/instruments/act_stats.h"
#include "train/flags/args.h"
#include "train/safety/distributed.h"
#include "train/safety/flag_checks.h"
#include "train/flags/gpt_flags.h"
#include "train/safety/stop_signals.h"
#include "train/gpt/gpt_run.h"
#include "studies/instruments/screening.h"

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
  add_gpt_run_flags(args);
  args.add_switch("--screen-dyt", "stop at step --screen-steps with the verdict of DyT's screening rule "
                                  "(saturation > 0.43 predicts that DyT helps; see screen_dyt --help)");
  args.add("--screen-steps", "500", "the step at which --screen-dyt measures and stops");
  args.add("--dist-timeout", "300", "with several MPI ranks: seconds one rank may wait for the others in one "
           "collective before it gives up (0: forever)");
  try {
    if (!args.parse(argc, argv)) return 0;
    GPTRunConfig c = gpt_run_config_from(args);
    const double dist_timeout = args.real("--dist-timeout");
    check_real_flag("--dist-timeout", dist_timeout, 0, 1e6);
    dist::set_collective_timeout(dist_timeout);
    install_stop_signals();
    if (args.on("--screen-dyt")) {
      std::printf("%s", screen_message(screen_dyt(c, args.integer("--screen-steps"))).c_str());
      return 0;
    }
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
