// The training loop: the one every program that trains goes through (train_gpt and
// train_vit through their tasks, the studies through those programs, bench_gpt and the
// speed sections through train_step). train() reads in one screen; per step:
//   lr (warmup + cosine; past `steps`, with --extend-to, the last step's, held flat)
//   -> the task's next batch (this rank's rows of it) -> train_step
//   -> the evaluation every eval_every steps and at the last -> a LogRow, written to
//   log.csv and shown as the progress line (log_row.h) -> the observers
//   -> a checkpoint when due or when a stop signal came (run_checkpoints.h).
// Around the steps, each in its own file of train/loop/:
//   run_files.h     the folder's rules (a fresh run never writes into another run's
//                   folder, --overwrite replaces one, one writer per folder),
//                   config.json, log.csv, result.json, figures read back by column name
//   resume.h        --resume: the checkpoint's recipe and data must be this run's; the
//                   step it returns starts a run bit-identical to one that never stopped
//   step_timer.h    the steps' clocks and the thread policy they drive
// and the non-finite guard, SIGINT/SIGTERM (held for the end of a step from the first
// write to the end's checkpoint; train/safety/stop_signals.h), data-parallel ranks
// (train/safety/distributed.h), and at the end of the schedule the task's own files and
// result.json. A resumed run with no step left takes its last figures from its log (its
// throughput from result.json), and keeps a result.json that is already there. Files
// written to config.out_dir (by the lead rank), none before every check has passed:
//   config.json    config.config_json
//   log.csv        step, the task's step columns, train_loss, its evaluation columns,
//                  lr, grad_norm, <unit>_per_s, its measurement columns
//   checkpoint.safetensors (+ checkpoint-stepN.safetensors with --keep-checkpoints K)
//   result.json    when the schedule is done: the run's figures and the task's
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/loop/observer.h"
#include "train/loop/task.h"
#include "train/loop/train_config.h"
#include "train/optim/optim.h"
#include "train/safety/run_safety.h"

namespace nl {

struct TrainResult {
  int64_t steps = 0;           // the schedule's length
  int64_t steps_done = 0;      // how far this run got
  float final_train_loss = 0;
  std::vector<double> final_eval;    // the last evaluation, in the task's eval_columns() order
  std::vector<double> measurements;  // the task's measurements of the last step
  double items_per_s = 0;      // median over the steps after the first (wall clock)
  double items_per_cpu_s = 0;  // the same per second of this process's CPU time
  double loop_s = 0, loop_cpu_s = 0;  // the training loop, evaluations included
  double wall_s = 0;           // the whole run, setup to the end's files
  double allreduce_s = 0;      // of which in the ranks' collectives (dist::allreduce_seconds)
  bool diverged = false;       // a loss or gradient became NaN or inf (the run stopped)
  RunEnd end;                  // why the run stopped early (signal, fault), if it did
  nlohmann::json finished;     // the task's result at the end of the schedule (null before)
  bool completed() const { return steps_done == steps; }
};

// One training step: gradients zeroed; forward_loss() (which records the graph) and
// its backward; the gradients and the loss averaged over the ranks; then
// guarded_step (train/safety/run_safety.h): unless the guard stops or skips the step
// for a NaN/inf, the gradients clipped to `clip` (0: off) and the AdamW step at `lr`.
// step: the 1-based number of this step.
struct StepOutcome {
  float loss = 0;                  // the batch's mean loss, averaged over the ranks
  std::optional<float> grad_norm;  // before clipping; NaN: skipped; none: stopped (end.fault says why)
};
StepOutcome train_step(const std::function<Var()>& forward_loss, FlatParameters& flat, AdamW& optim, float lr,
                       float clip, NonFiniteGuard& guard, int64_t step, RunEnd& end);

// Trains task.model() with config, which its run function has checked (the flags'
// checks: train/flags/families.h). Checks what it reads (a resumed checkpoint) before
// it writes any file; bad input and failed writes throw nl::Error naming the problem;
// a stop signal or a numerical fault ends the run early and is reported in result.end.
TrainResult train(TrainTask& task, const TrainConfig& config, const std::vector<TrainObserver*>& observers = {});

}  // namespace nl
