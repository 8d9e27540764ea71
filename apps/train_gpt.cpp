// train_gpt: trains a byte-level GPT on the fortunes text with one of the registered
// norms, in a pre-norm, Peri-LN or LayerNorm-Scaling block, and prints per-layer
// activation statistics at the end (DIR/act_stats.csv holds them over the run).
//   build/release/train_gpt --norm cbwc --steps 500 --out runs/cbwc
//   build/release/train_gpt --norm rms --block lns --layers 16 --out runs/lns
//   build/release/train_gpt --norm dyt --emb-scale sqrt --screen-dyt   # DyT's 500-step screening verdict
//   build/release/train_gpt --config runs/cbwc/config.json --seed 2 --out runs/cbwc-s2
//   build/release/train_gpt --config runs/cbwc/config.json --out runs/cbwc --resume --extend-to 1000
//   build/release/train_gpt --eval-only runs/cbwc                  # its validation loss and perplexity
// Bad input (an unknown flag or norm, a shape that does not fit, missing data, a bad
// checkpoint) prints one line naming the problem and exits with code 2.
// Data parallel over N processes (a build with make MPI=1; docs/distributed.md):
//   mpirun -np 2 build/release-mpi/train_gpt --batch 16 --threads 1 --out runs/dp
#include <cmath>
#include <cstdio>
#include <sstream>

#include "studies/instruments/act_stats_observer.h"
#include "studies/instruments/measurement_observer.h"
#include "studies/instruments/screening.h"
#include "tensor/threads.h"
#include "train/flags/option_warnings.h"
#include "train/flags/program.h"
#include "train/flags/train_commands.h"
#include "train/gpt/gpt_checkpoint.h"
#include "train/gpt/gpt_eval.h"
#include "train/io/checkpoint.h"
#include "train/io/safetensors.h"
#include "train/safety/distributed.h"
#include "train/safety/stop_signals.h"

using namespace nl;

namespace {

const char* kSummary = "Train a byte-level GPT on Debian's fortunes text and compare normalization layers.";

// --eval-only: the run's settings are the flags its checkpoint recorded, then the
// command line's (which override them, as after --config); nothing is written.
int evaluate(int argc, char** argv, const std::string& path) {
  const std::string file = checkpoint_in(path);
  std::vector<std::string> args = recorded_flags(load_safetensors(file).metadata, file, "train_gpt", "--eval-only");
  args.insert(args.end(), argv + 1, argv + argc);
  FlagParser p("train_gpt", kSummary);
  TrainGptCommand command;
  add_train_gpt_flags(p, command);
  p.parse(args);
  set_num_threads(command.run.threads);
  const GPTEvaluation e = evaluate_gpt(command.run, path, command.eval_file);
  std::ostringstream loss;
  loss.precision(9);  // as log.csv writes it
  loss << e.loss;
  std::printf("eval: loss %s nats per byte, perplexity %.4f, on %s; checkpoint %s at step %lld\n", loss.str().c_str(),
              std::exp(e.loss), e.source.c_str(), e.checkpoint.c_str(), (long long)e.step);
  return 0;
}

int train(int argc, char** argv) {
  FlagParser p("train_gpt", kSummary);
  TrainGptCommand command;
  if (!parse_training_command(p, command, add_train_gpt_flags, argc, argv)) return 0;
  if (!command.eval_only.empty()) return evaluate(argc, argv, command.eval_only);
  const GPTRunConfig& c = command.run;
  dist::set_collective_timeout(command.dist_timeout);
  if (command.screen) {
    std::printf("%s", screen_message(screen_dyt(c, command.screening.steps, command.screening.batches)).c_str());
    return 0;
  }
  if (dist::is_lead() && !c.quiet)  // --quiet (the studies' runs): errors alone on stderr
    for (const std::string& w : gpt_option_warnings(c)) std::fprintf(stderr, "train_gpt: warning: %s\n", w.c_str());
  ActStatsRecord record;
  std::vector<GPTObserverFactory> observers = act_stats_observer(command.stats, &record);
  for (auto& o : measurement_observer(command.measure)) observers.push_back(o);
  GPTRunResult r = run_gpt(c, observers);
  if (!dist::is_lead()) {  // the lead alone explains; every rank exits with the same code
    if (r.end.signal) return 128 + r.end.signal;
    return r.end.fault.empty() && !r.diverged ? 0 : 1;
  }
  if (const int code = report_run_end("train_gpt", r.end)) return code;
  if (!record.last.empty() && !c.quiet)
    std::printf("activation statistics at step %lld (fixed validation batch; act_stats.csv has every %lld steps; "
                "taking them cost %.2f s of the run's %.1f s):\n%s",
                (long long)record.step, (long long)command.stats.every, record.seconds, r.wall_s,
                format_act_stats(record.last).c_str());
  std::printf("done: %lld steps, train loss %.4f, val loss %.4f, %.0f tok/s%s\n", (long long)r.steps_done,
              r.final_train_loss, r.final_val_loss, r.tokens_per_s, r.diverged ? " (DIVERGED: NaN/inf loss)" : "");
  if (dist::world_size() > 1)
    std::printf("data parallel: %d ranks (%s), %.0f tok/s over all ranks, %.2f s of the run's %.1f s in the "
                "gradient all-reduce\n",
                dist::world_size(), dist::backend(), r.tokens_per_s, r.allreduce_s, r.wall_s);
  return r.diverged ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  install_stop_signals("train_gpt", "before training started (no file was written)");
  configure_runtime(argv);
  dist::init(&argc, &argv);
  const int code = run_program("train_gpt", [&] { return train(argc, argv); });
  dist::finalize();
  return code;
}
