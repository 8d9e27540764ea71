// train_vit: trains a ViT on Fashion-MNIST with one of the registered norms.
//   build/release/train_vit --norm rms --epochs 3 --out runs/vit-rms
//   build/release/train_vit --config runs/vit-rms/config.json --seed 2 --out runs/vit-rms-s2
// Bad input (an unknown flag or norm, a shape that does not fit, missing data, a bad
// checkpoint) prints one line naming the problem and exits with code 2.
#include <cstdio>

#include "studies/instruments/act_stats_observer.h"
#include "tensor/threads.h"
#include "train/flags/program.h"
#include "train/flags/train_commands.h"
#include "train/safety/stop_signals.h"
#include "train/vit/vit_run.h"

using namespace nl;

int main(int argc, char** argv) {
  install_stop_signals("train_vit", "before training started (no file was written)");
  configure_runtime(argv);
  return run_program("train_vit", [&] {
    FlagParser p("train_vit", "Train a ViT on Debian's Fashion-MNIST and compare normalization layers.");
    TrainVitCommand command;
    if (!parse_training_command(p, command, add_train_vit_flags, argc, argv)) return 0;
    ActStatsRecord record;
    ViTRunResult r = run_vit(command.run, vit_act_stats_observer(command.stats, &record));
    if (const int code = report_run_end("train_vit", r.end)) return code;
    if (!record.last.empty() && !command.run.quiet)
      std::printf("activation statistics at step %lld (the first validation images; act_stats.csv has every %lld "
                  "steps):\n%s",
                  (long long)record.step, (long long)command.stats.every, format_act_stats(record.last).c_str());
    if (r.tested)
      std::printf("done: %lld steps, train loss %.4f, val acc %.2f%%, test loss %.4f, test acc %.2f%%, %.0f img/s%s\n",
                  (long long)r.steps_done, r.final_train_loss, 100.0 * r.val_accuracy, r.test_loss,
                  100.0 * r.test_accuracy, r.images_per_s, r.diverged ? " (DIVERGED: NaN/inf loss)" : "");
    else
      std::printf("stopped after %lld of %lld steps (checkpoint written): train loss %.4f, val acc %.2f%%\n",
                  (long long)r.steps_done, (long long)r.steps, r.final_train_loss, 100.0 * r.val_accuracy);
    return r.diverged ? 1 : 0;
  });
}
