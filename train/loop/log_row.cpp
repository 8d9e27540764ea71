#include "train/loop/log_row.h"

#include <cstdio>
#include <sstream>

#include "train/loop/progress.h"
#include "train/loop/task.h"

namespace nl {

namespace {

std::string join_columns(const std::vector<std::string>& columns) {
  std::string s;
  for (const auto& c : columns) s += "," + c;
  return s;
}

}  // namespace

LogColumns LogColumns::of(const TrainTask& task) {
  return {task.step_columns(), task.eval_columns(), task.unit(), task.measure_columns()};
}

std::string LogColumns::header() const {
  return "step" + join_columns(step_columns) + "," + kTrainLoss + join_columns(eval_columns) + ",lr,grad_norm," +
         speed_column() + join_columns(measure_columns);
}

std::string LogRow::csv(const LogColumns& columns) const {
  std::ostringstream row;
  row.precision(9);
  row << step;
  for (double v : step_values) row << "," << v;
  row << "," << train_loss;
  for (size_t k = 0; k < columns.eval_columns.size(); ++k) {
    row << ",";
    if (k < eval.size()) row << eval[k];
  }
  row << "," << lr << "," << grad_norm << "," << (int64_t)items_per_s;
  for (double v : measurements) row << "," << v;
  return row.str();
}

std::string LogRow::progress(const LogColumns& columns, int64_t run_steps, const std::string& prefix,
                             const std::string& eval_text, double eta_s) const {
  char line[256];
  std::snprintf(line, sizeof line, "step %5lld/%lld%s  loss %.4f%s  lr %.2e  %7.0f %s/s  ETA %s", (long long)step,
                (long long)run_steps, prefix.c_str(), train_loss, eval_text.c_str(), lr,
                items_per_s, columns.unit.c_str(), format_duration(eta_s).c_str());
  return line;
}

}  // namespace nl
