#include "train/loop/trainer.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include "autograd/interrupt.h"
#include "autograd/profile.h"
#include "tensor/threads.h"
#include "train/io/checkpoint.h"
#include "train/io/checkpoint_keeper.h"
#include "train/flags/flag_parser.h"
#include "train/io/files.h"
#include "train/io/run_dir.h"
#include "train/io/run_lock.h"
#include "train/io/run_log.h"
#include "train/loop/median.h"
#include "train/loop/progress.h"
#include "train/loop/thread_governor.h"
#include "train/safety/distributed.h"
#include "train/safety/stop_signals.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// CPU time used by all of this process's threads: unlike wall time, it does not grow
// when other programs share the cores (a one-thread run's examples per CPU second are
// its speed on one core of its own).
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// median over the steps after the first, whose allocations warm the caches; NaN for none
double median_after_first(std::vector<double> times) {
  if (times.size() > 1) times.erase(times.begin());
  return median(times);
}

std::string join_columns(const std::vector<std::string>& columns) {
  std::string s;
  for (const auto& c : columns) s += "," + c;
  return s;
}

nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::ordered_json parse_config(const std::string& text, const std::string& what) {
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(what, " is not valid JSON (", e.what(), ")");
  }
}

// A resumed run continues the trajectory of the one that wrote the checkpoint: every
// recipe flag the same, and the same data (its size and checksum, beside --data's
// path, which is a recipe flag).
void check_same_recipe(const std::map<std::string, std::string>& metadata, const TrainConfig& c,
                       const std::string& data, const std::string& ckpt) {
  auto config = metadata.find("config");
  NL_CHECK(config != metadata.end(), "--resume: checkpoint ", ckpt, " records no config (not a normlab checkpoint?)");
  const std::string difference =
      first_recipe_difference(parse_config(config->second, "--resume: the config recorded in " + ckpt),
                              parse_config(c.config_json, "this run's config"), c.recipe_keys,
                              parse_config(c.recipe_defaults, "the recipe's defaults"), "in the checkpoint",
                              "in this run");
  // a finished run is trained further by --extend-to, which keeps the schedule
  const bool steps_differ = difference.rfind("--steps ", 0) == 0;
  NL_CHECK(difference.empty(), "--resume: checkpoint ", ckpt, " was trained with another recipe: ", difference,
           steps_differ ? " (to train a run further, keep its --steps and give --extend-to N: the steps past "
                          "--steps keep the lr of its last step)"
                        : " (a resumed run keeps every recipe flag: docs/reliability.md lists them; start a new run "
                          "in another --out, or replace this one with --overwrite)");
  if (data.empty()) return;
  auto saved = metadata.find("data");
  NL_CHECK(saved != metadata.end() && saved->second == data, "--resume: checkpoint ", ckpt,
           " was trained on other data: ", saved == metadata.end() ? std::string("none recorded") : saved->second,
           " in the checkpoint, ", data, " in this run's --data");
}

// The figures of the log's row of `step` (train loss, evaluation, measurements), for a
// resumed run that had no step left to train: what the run that wrote the checkpoint
// measured there. Fields missing from the row are left out.
void figures_from_log(const std::string& path, const std::string& header, int64_t step, const std::string& unit,
                      const std::vector<std::string>& eval_columns, const std::vector<std::string>& measure_columns,
                      TrainResult& result) {
  const std::vector<std::string> rows = complete_rows_until(path, step);
  if (rows.empty()) return;
  const std::vector<std::string> names = split_list(header);
  // every field, the empty ones (an evaluation not taken at that step) included
  std::vector<std::string> cells(1);
  for (char ch : rows.back()) {
    if (ch == ',') cells.emplace_back();
    else cells.back() += ch;
  }
  if (cells.size() != names.size() || std::strtoll(cells[0].c_str(), nullptr, 10) != step) return;
  auto value = [&](const std::string& column) {
    for (size_t k = 0; k < names.size(); ++k)
      if (names[k] == column && !cells[k].empty()) return std::strtod(cells[k].c_str(), nullptr);
    return (double)NAN;
  };
  result.final_train_loss = (float)value("train_loss");
  result.items_per_s = value(unit + "_per_s");  // that step's; result.json's median replaces it when there is one
  std::vector<double> eval;
  for (const auto& column : eval_columns) eval.push_back(value(column));
  if (!eval.empty() && std::isfinite(eval[0])) result.final_eval = eval;
  result.measurements.clear();
  for (const auto& column : measure_columns) result.measurements.push_back(value(column));
}

}  // namespace

StepOutcome train_step(const std::function<Var()>& forward_loss, FlatParameters& flat, AdamW& optim, float lr,
                       float clip, NonFiniteGuard& guard, int64_t step, RunEnd& end) {
  {
    profile::Scope scope("zero grads");
    flat.grads.fill_(0.0f);
  }
  Var loss = forward_loss();
  loss.backward();
  // equal shards: the mean of the ranks' mean losses and gradients is the global batch's
  dist::allreduce_mean(flat.grads);
  StepOutcome out;
  out.loss = (float)dist::allreduce_mean((double)loss.item());
  profile::Scope scope("optimizer (clip + AdamW)");
  out.grad_norm = guarded_step(guard, step, out.loss, flat, optim, lr, clip, end);
  return out;
}

TrainResult train(TrainTask& task, const TrainConfig& c, const std::vector<TrainObserver*>& observers) {
  const auto run_start_all = Clock::now();
  set_num_threads(c.threads);
  // Data parallel (train/safety/distributed.h): every rank draws the same global batch
  // and trains on its own rows of it, so the union over ranks is the single-process
  // batch and the batch generator (saved in checkpoints) stays the same on every rank.
  // Only the lead rank writes files, evaluates and prints.
  const bool lead = dist::is_lead();
  const int64_t shard = c.batch / dist::world_size(), shard_start = shard * dist::rank();

  FlatParameters flat = flatten_parameters(task.model());
  AdamW optim(flat, AdamWConfig{c.beta1, c.beta2, 1e-8f, c.wd, c.wd_all});
  const std::string ckpt = c.out_dir + "/checkpoint.safetensors";
  NL_CHECK(!c.recipe_keys.empty(), "train: internal: the run's recipe keys are not set");
  // a ViT's --steps may come from --epochs after its flags were checked
  NL_CHECK(c.extend_to == 0 || c.extend_to >= c.steps, "--extend-to must be 0 or at least the run's ", c.steps,
           " steps, got ", c.extend_to);
  // every check comes before the first write: the folder (again, just before it is
  // used), the weights to start from, the checkpoint to continue and its recipe
  check_fresh_folder(c.out_dir, "--out", c.resume, c.overwrite);
  // one writer per folder for the whole run; the check again under the lock, since
  // another run may have written the folder between the first check and the lock
  std::optional<RunFolderLock> folder_lock;
  if (lead) folder_lock.emplace(c.out_dir, "--out");
  check_fresh_folder(c.out_dir, "--out", c.resume, c.overwrite);
  if (!c.init_from.empty()) load_weights(c.init_from, flat);
  int64_t start_step = 0;
  if (c.resume) {
    NL_CHECK(fs::exists(ckpt), "--resume: no checkpoint at ", ckpt);
    // load_checkpoint checks the whole file, its checksums and recipe and the model
    // description first, before it changes the live objects
    Generator saved;
    CheckpointInfo info = load_checkpoint(ckpt, flat, optim, saved, task.model_description(),
                                          [&](const std::map<std::string, std::string>& m) {
                                            check_same_recipe(m, c, task.data_fingerprint(), ckpt);
                                          });
    start_step = info.step;
    NL_CHECK(start_step <= c.run_steps(), "--resume: checkpoint is at step ", start_step, ", past the run's end at ",
             c.extend_to > 0 ? "--extend-to " : "--steps ", c.run_steps(),
             " (--extend-to N with N >= ", start_step, " trains it further)");
    task.resume_batches(start_step, c.batch, saved);
    task.restore_extra_state(info.metadata);
  }
  // the same seed (or checkpoint) already gave every rank the same parameters; the
  // broadcast makes that a guarantee rather than an assumption
  dist::broadcast(flat.values, 0);
  dist::barrier();  // every rank has read the checkpoint before the lead may write one

  // every input is valid: from here on files are written (by the lead rank), and a stop
  // signal waits for the end of a step, which gets a checkpoint
  std::optional<StopSignalWindow> window(std::in_place);
  if (lead) {
    create_out_dir(c.out_dir);
    if (c.overwrite) remove_run_files(c.out_dir);
    write_text_file(c.out_dir + "/config.json", c.config_json);
  }
  CheckpointKeeper keeper(c.out_dir, c.safety.checkpoints);
  if (lead) keeper.prepare(c.resume, start_step);
  int64_t last_checkpoint = c.resume ? start_step : -1;  // every rank's view of keeper.last_step()
  const std::vector<std::string> eval_columns = task.eval_columns();
  const std::string header = "step" + join_columns(task.step_columns()) + ",train_loss" + join_columns(eval_columns) +
                             ",lr,grad_norm," + task.unit() + "_per_s" + join_columns(task.measure_columns());
  std::unique_ptr<CsvLog> log;
  if (lead) log = std::make_unique<CsvLog>(c.out_dir + "/log.csv", header, c.resume ? start_step : -1);
  if (lead)
    for (TrainObserver* o : observers) o->start(start_step, c.run_steps(), c.resume);

  // the logs reach the OS before the checkpoint of their last step exists: a resumed
  // run finds every row up to its checkpoint
  auto save_now = [&](int64_t step) {
    last_checkpoint = step;
    if (!lead) return;
    log->sync();
    for (TrainObserver* o : observers) o->sync();
    std::map<std::string, std::string> metadata = task.extra_state();
    metadata["model"] = task.model_description();
    metadata["config"] = c.config_json;
    if (const std::string data = task.data_fingerprint(); !data.empty()) metadata["data"] = data;
    keeper.save(step, [&](const std::string& path) {
      save_checkpoint(path, flat, optim, step, task.batch_generator(), metadata);
    });
  };
  NonFiniteGuard guard(c.safety.on_nonfinite);

  TrainResult result;
  result.steps = c.run_steps();
  result.steps_done = start_step;
  ProgressLine progress(c.quiet || !lead);
  const int64_t end_step = c.stop_after >= 0 ? std::min(c.run_steps(), c.stop_after) : c.run_steps();
  const double items = (double)(c.batch * task.items_per_row());
  std::vector<double> step_times, step_cpu_times;
  Tensor x, y;
  // fewer threads while another process holds a core; results do not depend on it
  std::optional<ThreadGovernor> governor;
  if (c.threads_adapt == "on" && c.threads > 1 && c.device == "cpu") governor.emplace(c.threads);
  const bool interruptible = task.batches_rewind() && dist::world_size() == 1;
  const auto loop_start = Clock::now();
  const double cpu_start = process_cpu_seconds();
  for (int64_t step = start_step; step < end_step; ++step) {
    const auto t0 = Clock::now();
    const double cpu0 = process_cpu_seconds();
    if (governor) governor->start_step();
    // past c.steps (--extend-to) the lr of the schedule's last step, held flat
    const float lr = lr_at(std::min(step, c.steps - 1), c.steps, c.warmup, c.lr, c.min_lr, c.schedule);
    // a stop signal may abandon the step before the optimizer runs (one process only: the
    // other ranks would wait in the all-reduce): its batch and the task's state are put back
    // as they were, and the checkpoint below the loop is of the last whole step
    std::optional<Generator> batches_before;
    std::map<std::string, std::string> state_before;
    if (interruptible) batches_before = task.batch_generator(), state_before = task.extra_state();
    StepOutcome s;
    try {
      std::optional<InterruptPoll> poll;
      if (interruptible) poll.emplace([] { return stop_signal() != 0; });
      task.next_batch(c.batch, x, y);
      s = train_step([&] { return task.loss(x.slice(0, shard_start, shard_start + shard),
                                            y.slice(0, shard_start, shard_start + shard)); },
                     flat, optim, lr, c.clip, guard, step + 1, result.end);
    } catch (const Interrupted&) {
      task.resume_batches(step, c.batch, *batches_before);
      task.restore_extra_state(state_before);
      result.end.signal = stop_signal();
      break;
    }
    if (!s.grad_norm) {
      result.diverged = true;
      break;
    }
    // the training forward's, before an evaluation's forwards replace them
    result.measurements = task.measurements();
    const double dt = seconds_since(t0);
    step_times.push_back(dt);
    step_cpu_times.push_back(process_cpu_seconds() - cpu0);
    const bool policy_decided = governor && governor->end_step(dt);

    const bool evaluates = lead && ((step + 1) % c.eval_every == 0 || step + 1 == end_step);
    std::vector<double> eval;
    if (evaluates) result.final_eval = eval = task.evaluate();
    // a stop signal cuts an evaluation short (train/loop/task.h): the row's cells stay
    // empty and the step's checkpoint is written below
    const bool evaluated = evaluates && !eval.empty();
    result.final_train_loss = s.loss;

    std::ostringstream row;
    row.precision(9);  // enough digits to compare runs (ln vs cbwc, resume) exactly
    row << step + 1;
    for (double v : task.step_values(step + 1, c.batch)) row << "," << v;
    row << "," << s.loss;
    for (size_t k = 0; k < eval_columns.size(); ++k) {
      row << ",";
      if (k < eval.size()) row << eval[k];
    }
    row << "," << lr << "," << *s.grad_norm << "," << (int64_t)(items / dt);
    for (double v : result.measurements) row << "," << v;
    if (lead) log->row(row.str());

    char line[256];
    std::snprintf(line, sizeof line, "step %5lld/%lld%s  loss %.4f%s  lr %.2e  %7.0f %s/s  ETA %s",
                  (long long)(step + 1), (long long)c.run_steps(), task.progress_prefix(step + 1, c.batch).c_str(),
                  s.loss,
                  evaluated ? task.progress_eval(eval).c_str() : "", lr, items / dt, task.unit(),
                  format_duration(eta_seconds(seconds_since(loop_start), (double)(step + 1 - start_step),
                                              (double)(end_step - start_step)))
                      .c_str());
    progress.show(line, evaluated, step + 1);
    if (policy_decided) progress.show("step " + std::to_string(step + 1) + ": " + governor->change(), true, step + 1);
    result.steps_done = step + 1;
    if (lead)
      for (TrainObserver* o : observers) o->after_step(step + 1);
    // a signal that reached one rank stops all of them at the same step
    const int signal = dist::allreduce_max(stop_signal());
    if (keeper.due(step + 1) || signal) save_now(step + 1);
    if (signal) {
      result.end.signal = signal;
      break;
    }
  }
  progress.finish();
  if (lead) log->flush();
  result.loop_s = seconds_since(loop_start);
  result.loop_cpu_s = process_cpu_seconds() - cpu_start;

  // the end's checkpoint; after a fault the last good one stays as it is
  if (result.end.fault.empty() && last_checkpoint != result.steps_done) save_now(result.steps_done);
  // a signal that came after the last step's look, or during that save: the run stops
  // here as if it had come during the step (its checkpoint is on disk)
  if (!result.end.signal && result.end.fault.empty()) result.end.signal = dist::allreduce_max(stop_signal());
  window.reset();
  set_stop_note("after the run's last checkpoint was written, before its end (continue with --resume to finish it)");
  // a resumed run with no step left to train (its schedule done, or --stop-after at
  // its step): its last figures are those its log holds for that step
  const bool trained_nothing = c.resume && result.steps_done == start_step;
  if (trained_nothing && lead)
    figures_from_log(c.out_dir + "/log.csv", header, start_step, task.unit(), eval_columns, task.measure_columns(),
                     result);
  result.end.checkpoint_step = last_checkpoint;
  result.end.checkpoint_path = ckpt;
  result.allreduce_s = dist::allreduce_seconds();
  if (!step_times.empty()) {  // else the log's figure (a run with no step left)
    result.items_per_s = items / median_after_first(step_times);
    result.items_per_cpu_s = items / median_after_first(step_cpu_times);
  }
  const std::string result_path = c.out_dir + "/result.json";
  if (lead && result.completed() && !result.end.signal && trained_nothing && fs::exists(result_path)) {
    // finished before: its end's files stay as they are
    result.finished = nlohmann::json::parse(read_text_file(result_path, "result"));
    const std::string speed = std::string(task.unit()) + "_per_s";
    if (result.finished.contains(speed) && result.finished[speed].is_number())
      result.items_per_s = result.finished[speed].get<double>();
  } else if (lead && result.completed() && !result.end.signal) {
    result.finished = task.finish(c.out_dir);
    nlohmann::json r = nlohmann::json::object();
    r["steps"] = result.steps_done;
    r["final_train_loss"] = finite_or_null(result.final_train_loss);
    for (size_t k = 0; k < eval_columns.size() && k < result.final_eval.size(); ++k)
      r[eval_columns[k]] = finite_or_null(result.final_eval[k]);
    r[std::string(task.unit()) + "_per_s"] = finite_or_null(result.items_per_s);
    r[std::string(task.unit()) + "_per_cpu_s"] = finite_or_null(result.items_per_cpu_s);
    r["seconds"] = result.loop_s;
    r["cpu_seconds"] = result.loop_cpu_s;
    r["diverged"] = result.diverged;
    r["skipped_steps"] = result.end.skipped_steps;
    const std::vector<std::string> measures = task.measure_columns();
    for (size_t k = 0; k < measures.size() && k < result.measurements.size(); ++k)
      r[measures[k]] = finite_or_null(result.measurements[k]);
    if (result.finished.is_object())
      for (const auto& [key, value] : result.finished.items()) r[key] = value;
    write_text_file(result_path, r.dump(2) + "\n");
  }
  result.wall_s = seconds_since(run_start_all);
  return result;
}

}  // namespace nl
