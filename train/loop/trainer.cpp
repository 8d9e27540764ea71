#include "train/loop/trainer.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "autograd/interrupt.h"
#include "autograd/profile.h"
#include "tensor/threads.h"
#include "train/io/checkpoint.h"
#include "train/io/json_fields.h"
#include "train/loop/log_row.h"
#include "train/loop/progress.h"
#include "train/loop/resume.h"
#include "train/loop/run_checkpoints.h"
#include "train/loop/run_files.h"
#include "train/loop/step_timer.h"
#include "train/safety/distributed.h"
#include "train/safety/stop_signals.h"

namespace nl {

StepOutcome train_step(const std::function<Var()>& forward_loss, FlatParameters& flat, AdamW& optim, float lr,
                       float clip, NonFiniteGuard& guard, int64_t step, RunEnd& end) {
  {
    profile::Scope scope("zero grads");
    flat.grads.fill_(0.0f);
  }
  Var loss;
  bool interrupted = false;
  try {
    loss = forward_loss();
    loss.backward();
  } catch (const Interrupted&) {
    if (dist::world_size() == 1) throw;
    interrupted = true;
  }
  // With several ranks a step is abandoned by every rank or by none: a rank that left its
  // forward or backward would never join the gradients' all-reduce below, so all ranks
  // first agree on the signal (the largest any of them has seen). A rank without a signal
  // finishes its own backward first, so the step ends within one rank's forward + backward.
  if (dist::world_size() > 1 && interrupt_polling()) {
    const int signal = dist::allreduce_max(stop_signal());
    if (signal) {
      end.signal = signal;
      throw Interrupted();
    }
  }
  NL_CHECK(!interrupted, "train_step: internal: an interrupted rank saw no stop signal");
  // equal shards: the mean of the ranks' mean losses and gradients is the global batch's
  dist::allreduce_mean(flat.grads);
  StepOutcome out;
  out.loss = (float)dist::allreduce_mean((double)loss.item());
  profile::Scope scope("optimizer (clip + AdamW)");
  out.grad_norm = guarded_step(guard, step, out.loss, flat, optim, lr, clip, end);
  return out;
}

namespace {

// Data parallel (train/safety/distributed.h): every rank draws the same global batch
// and trains on its own rows of it, so the union over ranks is the single-process
// batch and the batch generator (saved in checkpoints) stays the same on every rank.
struct Batch {
  explicit Batch(int64_t global) : rows(global / dist::world_size()), first(rows * dist::rank()) {}
  Tensor x, y;  // the global batch, reused from step to step
  int64_t rows, first;  // this rank's
  Tensor my_x() const { return x.slice(0, first, first + rows); }
  Tensor my_y() const { return y.slice(0, first, first + rows); }
};

void check_loop_config(const TrainConfig& c) {
  NL_CHECK(!c.recipe_keys.empty(), "train: internal: the run's recipe keys are not set");
  // a ViT's --steps may come from --epochs after its flags were checked
  NL_CHECK(c.extend_to == 0 || c.extend_to >= c.steps, "--extend-to must be 0 or at least the run's ", c.steps,
           " steps, got ", c.extend_to);
}

// train_step on the task's next batch. A stop signal may abandon the step before the
// optimizer runs (on every rank together: train_step's vote): its batch and the task's
// state are put back as they were, the checkpoint after the loop is of the last whole
// step, and the result is none.
std::optional<StepOutcome> step_unless_stopped(TrainTask& task, const TrainConfig& c, Batch& b, FlatParameters& flat,
                                               AdamW& optim, float lr, NonFiniteGuard& guard, int64_t step,
                                               RunEnd& end) {
  const bool interruptible = task.batches_rewind();
  std::optional<Generator> batches_before;
  std::map<std::string, std::string> state_before;
  if (interruptible) batches_before = task.batch_generator(), state_before = task.extra_state();
  try {
    std::optional<InterruptPoll> poll;
    if (interruptible) poll.emplace([] { return stop_signal() != 0; });
    task.next_batch(c.batch, b.x, b.y);
    return train_step([&] { return task.loss(b.my_x(), b.my_y()); }, flat, optim, lr, c.clip, guard, step + 1, end);
  } catch (const Interrupted&) {
    task.resume_batches(step, c.batch, *batches_before);
    task.restore_extra_state(state_before);
    if (!end.signal) end.signal = stop_signal();  // several ranks: the vote's, the same on each
    return std::nullopt;
  }
}

// result.json: the run's figures at the end of its schedule, the task's named by its
// columns, then the task's own.
ResultRecord result_record(const TrainResult& result, const LogColumns& columns) {
  ResultRecord r;
  r.steps = result.steps_done, r.final_train_loss = result.final_train_loss, r.seconds = result.loop_s;
  r.cpu_seconds = result.loop_cpu_s, r.diverged = result.diverged, r.skipped_steps = result.end.skipped_steps;
  for (size_t k = 0; k < columns.eval_columns.size() && k < result.final_eval.size(); ++k)
    r.named[columns.eval_columns[k]] = figure_json(result.final_eval[k]);
  r.named[columns.speed_column()] = figure_json(result.items_per_s);
  r.named[columns.unit + "_per_cpu_s"] = figure_json(result.items_per_cpu_s);
  for (size_t k = 0; k < columns.measure_columns.size() && k < result.measurements.size(); ++k)
    r.named[columns.measure_columns[k]] = figure_json(result.measurements[k]);
  if (result.finished.is_object())
    for (const auto& [key, value] : result.finished.items()) r.named[key] = value;
  return r;
}

// A resumed run with no step left to train (its schedule done, or --stop-after at its
// step): its last figures are what the run that wrote the checkpoint logged there, its
// speed that step's (result.json's median replaces it when there is one). Cells missing
// from the row leave the figures as they are.
void figures_from_log(const LoggedRow& row, const LogColumns& columns, TrainResult& result) {
  result.final_train_loss = (float)row.figure(kTrainLoss);
  result.items_per_s = row.figure(columns.speed_column());
  std::vector<double> eval;
  for (const auto& column : columns.eval_columns) eval.push_back(row.figure(column));
  if (!eval.empty() && std::isfinite(eval[0])) result.final_eval = eval;
  result.measurements.clear();
  for (const auto& column : columns.measure_columns) result.measurements.push_back(row.figure(column));
}

// The end of a run, after its last checkpoint: the figures of a run that trained
// nothing, the speeds, and at the end of the schedule the task's files and result.json.
void finish_run(TrainTask& task, const TrainConfig& c, RunFiles& files, const LogColumns& columns,
                int64_t start_step, const StepTimer& timer, TrainResult& result) {
  const bool lead = dist::is_lead(), trained_nothing = c.resume && result.steps_done == start_step;
  if (trained_nothing && lead)
    if (std::optional<LoggedRow> row = files.logged_row(start_step)) figures_from_log(*row, columns, result);
  result.loop_s = timer.loop_s();
  result.loop_cpu_s = timer.loop_cpu_s();
  result.allreduce_s = dist::allreduce_seconds();
  const double items = (double)(c.batch * task.items_per_row());
  if (timer.timed_any()) {  // else the log's figure (a run with no step left)
    result.items_per_s = timer.items_per_s(items);
    result.items_per_cpu_s = timer.items_per_cpu_s(items);
  }
  if (!lead || !result.completed() || result.end.signal) return;
  if (trained_nothing && files.has_result()) {  // finished before: its end's files stay as they are
    const ResultRecord done = files.read_result();
    result.finished = done.named;
    const std::string speed = columns.speed_column();  // a result without it keeps the log's
    if (done.named.contains(speed) && std::isfinite(done.figure(speed))) result.items_per_s = done.figure(speed);
    return;
  }
  result.finished = task.finish(c.out_dir);
  files.write_result(result_record(result, columns));
}

// The progress line of each step, with the time left at the pace since the loop began.
class StepProgress {
 public:
  StepProgress(bool quiet, const TrainTask& task, const TrainConfig& c, const LogColumns& columns,
               int64_t start_step, int64_t end_step)
      : line_(quiet), task_(task), c_(c), columns_(columns), start_(start_step), end_(end_step),
        loop_start_(std::chrono::steady_clock::now()) {}
  // The row's line, kept on screen with an evaluation; then `thread_change` (the thread
  // policy's decision after this step) when there is one.
  void show(const LogRow& row, const std::string& thread_change) {
    const double elapsed = wall_seconds_since(loop_start_);
    const double eta = eta_seconds(elapsed, (double)(row.step - start_), (double)(end_ - start_));
    const std::string eval = row.eval.empty() ? "" : task_.progress_eval(row.eval);
    line_.show(row.progress(columns_, c_.run_steps(), task_.progress_prefix(row.step, c_.batch), eval, eta),
               !row.eval.empty(), row.step);
    if (!thread_change.empty()) line_.show("step " + std::to_string(row.step) + ": " + thread_change, true, row.step);
  }
  void finish() { line_.finish(); }

 private:
  ProgressLine line_;
  const TrainTask& task_;
  const TrainConfig& c_;
  const LogColumns& columns_;
  int64_t start_, end_;
  std::chrono::steady_clock::time_point loop_start_;
};

// The thread governor's most threads (train/loop/step_timer.h), 0: fixed threads. It
// gives fewer threads while another process holds a core; results do not depend on it.
int governed_threads(const TrainConfig& c) {
  return c.threads_adapt == "on" && c.threads > 1 && c.device == "cpu" ? c.threads : 0;
}

// Every eval_every steps, and after this process's last step.
bool evaluates_after(const TrainConfig& c, int64_t steps_done, int64_t end_step) {
  return steps_done % c.eval_every == 0 || steps_done == end_step;
}

// A step's figures become the run's latest (its evaluation, when it had one, is kept as
// it is taken: an evaluation cut short by a stop signal leaves none).
void record(const LogRow& row, TrainResult& result) {
  result.steps_done = row.step;
  result.final_train_loss = row.train_loss;
  result.measurements = row.measurements;
}

// The same seed (or checkpoint) already gave every rank the same parameters; the
// broadcast makes that a guarantee rather than an assumption. After the barrier every
// rank has read the checkpoint, so the lead may write one.
void same_parameters_on_every_rank(FlatParameters& flat) {
  dist::broadcast(flat.values, 0);
  dist::barrier();
}

// The end's checkpoint (after a fault the last good one stays as it is), and a signal
// that came after the last step's look or during that save: the run stops as if it had
// come during the step (its checkpoint is on disk).
// From then on a signal stops the program at once (train/safety/stop_signals.h).
void save_end_checkpoint(RunCheckpoints& checkpoints, std::optional<StopSignalWindow>& window, TrainResult& result) {
  if (result.end.fault.empty() && checkpoints.last_step() != result.steps_done) checkpoints.save(result.steps_done);
  if (!result.end.signal && result.end.fault.empty()) result.end.signal = dist::allreduce_max(stop_signal());
  window.reset();
  set_stop_note("after the run's last checkpoint was written, before its end (continue with --resume to finish it)");
  result.end.checkpoint_step = checkpoints.last_step();
  result.end.checkpoint_path = checkpoints.latest_path();
}

}  // namespace

TrainResult train(TrainTask& task, const TrainConfig& c, const std::vector<TrainObserver*>& observers) {
  const auto run_start = std::chrono::steady_clock::now();
  set_num_threads(c.threads);
  check_loop_config(c);
  const bool lead = dist::is_lead();  // only the lead rank writes files, evaluates, prints and observes
  FlatParameters flat = flatten_parameters(task.model());
  AdamW optim(flat, AdamWConfig{c.beta1, c.beta2, 1e-8f, c.wd, c.wd_all});
  // every check before the first write: the folder (under its lock), --init-from, the checkpoint and its recipe
  RunFiles files(c.out_dir, lead, c.resume, c.overwrite);
  if (!c.init_from.empty()) load_weights(c.init_from, flat);
  const int64_t start_step = resume(task, c, flat, optim);
  same_parameters_on_every_rank(flat);
  // every input is valid: files are written from here on, and a stop signal waits for the step's checkpoint
  std::optional<StopSignalWindow> window(std::in_place);
  const LogColumns columns = LogColumns::of(task);
  files.start(c.config_json, columns, c.resume ? start_step : -1);
  RunCheckpoints checkpoints(c, task, flat, optim, files, observers, lead, start_step);
  const std::vector<TrainObserver*> watching = lead ? observers : std::vector<TrainObserver*>{};
  for (TrainObserver* o : watching) o->start(start_step, c.run_steps(), c.resume);
  NonFiniteGuard guard(c.safety.on_nonfinite);
  TrainResult result;
  result.steps = c.run_steps(), result.steps_done = start_step;
  const int64_t end_step = c.stop_after >= 0 ? std::min(c.run_steps(), c.stop_after) : c.run_steps();
  Batch batch(c.batch);
  StepProgress progress(c.quiet || !lead, task, c, columns, start_step, end_step);
  StepTimer timer(governed_threads(c));
  for (int64_t step = start_step; step < end_step; ++step) {
    timer.begin();
    // past c.steps (--extend-to) the lr of the schedule's last step, held flat
    const float lr = lr_at(std::min(step, c.steps - 1), c.steps, c.warmup, c.lr, c.min_lr, c.schedule);
    const std::optional<StepOutcome> s = step_unless_stopped(task, c, batch, flat, optim, lr, guard, step, result.end);
    if (!s || !s->grad_norm) {  // a stop signal abandoned the step, or a NaN/inf stopped the run
      result.diverged = s.has_value();
      break;
    }
    const double dt = timer.end();
    // the measurements are the training forward's, before an evaluation's forwards replace them
    LogRow row{step + 1, task.step_values(step + 1, c.batch), s->loss, {}, lr, *s->grad_norm,
               (double)(c.batch * task.items_per_row()) / dt, task.measurements()};
    // a stop signal cuts an evaluation short (task.h): its cells stay empty, the step's checkpoint comes below
    if (lead && evaluates_after(c, step + 1, end_step)) result.final_eval = row.eval = task.evaluate();
    files.log(row);
    progress.show(row, timer.thread_change());
    record(row, result);
    for (TrainObserver* o : watching) o->after_step(step + 1);
    const int signal = dist::allreduce_max(stop_signal());  // a signal on one rank stops all at the same step
    if (checkpoints.due(step + 1) || signal) checkpoints.save(step + 1);
    if (signal) {
      result.end.signal = signal;
      break;
    }
  }
  progress.finish();
  files.flush_log();
  timer.stop();
  save_end_checkpoint(checkpoints, window, result);
  finish_run(task, c, files, columns, start_step, timer, result);
  result.wall_s = wall_seconds_since(run_start);
  return result;
}

}  // namespace nl
