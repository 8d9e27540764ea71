// The files a training run keeps in its folder (--out) besides its checkpoints:
//   config.json   the run's settings as its flags record them
//   log.csv       a row per step (train/loop/log_row.h)
//   result.json   at the end of the schedule: the run's figures and the task's
// and the folder's rules around them (train/io/run_dir.h: a fresh run never writes into
// another run's folder, --overwrite replaces one, one writer per folder). Only the lead
// rank writes; on the others every write is skipped. Figures are read back from log.csv
// by their column's name, so a renamed column is an error, not a wrong number.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/io/run_lock.h"
#include "train/io/run_log.h"
#include "train/loop/log_row.h"
#include "train/loop/result_record.h"

namespace nl {

// A row of log.csv read back.
class LoggedRow {
 public:
  explicit LoggedRow(LogTable row) : row_(std::move(row)) {}
  // The figure in the column called `name`; NaN for an empty cell (an evaluation not
  // taken at that step). Throws naming the log and the column when there is no such
  // column (LogTable::figure).
  double figure(const std::string& name) const { return row_.figure(0, name); }

 private:
  LogTable row_;  // of one row
};

class RunFiles {
 public:
  // Checks the folder (check_fresh_folder: `resume` and `overwrite` are the run's
  // flags), takes its lock on the lead rank, and checks it again under the lock: another
  // run may have written there between the first check and the lock. Writes nothing else.
  RunFiles(std::string dir, bool lead, bool resume, bool overwrite);
  ~RunFiles();
  RunFiles(const RunFiles&) = delete;
  RunFiles& operator=(const RunFiles&) = delete;

  // Once every input is valid: makes the folder, deletes the old run's files with
  // --overwrite, writes config.json, and opens log.csv with `columns` (keeping a resumed
  // run's rows up to keep_log_until; -1: a fresh log).
  void start(const std::string& config_json, const LogColumns& columns, int64_t keep_log_until);

  void log(const LogRow& row);
  void flush_log();  // to the OS (the end of the loop)
  void sync_log();   // to the disk (before a checkpoint of the last row's step)

  // log.csv's row of `step`; none when the log holds no whole row of that step.
  std::optional<LoggedRow> logged_row(int64_t step) const;

  bool has_result() const;
  ResultRecord read_result() const;  // throws naming result.json and the field it lacks
  void write_result(const ResultRecord& result) const;

  const std::string& dir() const { return dir_; }
  std::string log_path() const { return dir_ + "/log.csv"; }
  std::string result_path() const { return dir_ + "/result.json"; }

 private:
  std::string dir_;
  bool lead_, overwrite_;
  std::optional<RunFolderLock> lock_;
  LogColumns columns_;
  std::unique_ptr<CsvLog> log_;
};

}  // namespace nl
