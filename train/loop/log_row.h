// One row of a run's log: the figures of one step, as log.csv records them and as the
// progress line shows them. Both are formatted from the same LogRow, so the file and
// the screen cannot disagree about which number is which.
//   log.csv   step, the task's step columns, train_loss, its evaluation columns, lr,
//             grad_norm, <unit>_per_s, its measurement columns
//   progress  "step    40/100  epoch 0.05  loss 4.1234  val 4.2000  lr 3.00e-04     812 tok/s  ETA 0:12"
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nl {

class TrainTask;

// The names of the columns that readers outside a task look up (in log.csv's header and
// as result.json's figures), spelled here once: the training loss every log has, and the
// evaluation columns of the tasks (GPTTask's val_loss; ViTTask's val_loss and val_acc).
inline constexpr char kTrainLoss[] = "train_loss";
inline constexpr char kValLoss[] = "val_loss";
inline constexpr char kValAcc[] = "val_acc";

// The names of log.csv's columns beyond the fixed ones, which the task gives.
struct LogColumns {
  std::vector<std::string> step_columns;     // after `step` (a ViT's epoch)
  std::vector<std::string> eval_columns;     // the evaluation's (val_loss; val_loss, val_acc)
  std::string unit;                          // what a speed counts: "tok", "img"
  std::vector<std::string> measure_columns;  // the last training forward's (the residual stream's RMS)

  static LogColumns of(const TrainTask& task);
  std::string header() const;
  std::string speed_column() const { return unit + "_per_s"; }
};

struct LogRow {
  int64_t step = 0;  // steps done, this one included
  std::vector<double> step_values;
  float train_loss = 0;
  std::vector<double> eval;  // empty: no evaluation at this step (or one a stop signal cut short)
  float lr = 0, grad_norm = 0;
  double items_per_s = 0;    // this step's examples per second of wall time
  std::vector<double> measurements;

  // The line of log.csv (no newline): 9 significant digits, enough to compare runs (ln
  // against cbwc, a resumed run against one that never stopped) exactly; an evaluation
  // not taken leaves its cells empty; the speed in whole examples.
  std::string csv(const LogColumns& columns) const;
  // The progress line: `prefix` and `eval_text` are the task's pieces (TrainTask::
  // progress_prefix, and progress_eval of this row's evaluation or "" without one),
  // eta_s the seconds left.
  std::string progress(const LogColumns& columns, int64_t run_steps, const std::string& prefix,
                       const std::string& eval_text, double eta_s) const;
};

}  // namespace nl
