#include "train/loop/run_files.h"

#include <filesystem>

#include "tensor/error.h"
#include "train/io/files.h"
#include "train/io/run_dir.h"
#include "train/safety/stop_signals.h"

namespace nl {

RunFiles::RunFiles(std::string dir, bool lead, bool resume, bool overwrite)
    : dir_(std::move(dir)), lead_(lead), overwrite_(overwrite) {
  check_fresh_folder(dir_, "--out", resume, overwrite);
  if (lead_) lock_.emplace(dir_, "--out");
  // a signal before the training window ends the program at once: the lock file and the
  // folders it made go with it ("no file was written" stays true)
  if (lock_) set_stop_cleanup(lock_->path(), lock_->made_folders());
  check_fresh_folder(dir_, "--out", resume, overwrite);
}

RunFiles::~RunFiles() {
  if (lock_) clear_stop_cleanup();
}

void RunFiles::start(const std::string& config_json, const LogColumns& columns, int64_t keep_log_until) {
  columns_ = columns;
  if (!lead_) return;
  create_out_dir(dir_);
  if (overwrite_) remove_run_files(dir_);
  write_text_file(dir_ + "/config.json", config_json);
  log_ = std::make_unique<CsvLog>(log_path(), columns_.header(), keep_log_until);
}

void RunFiles::log(const LogRow& row) {
  if (log_) log_->row(row.csv(columns_));
}

void RunFiles::flush_log() {
  if (log_) log_->flush();
}

void RunFiles::sync_log() {
  if (log_) log_->sync();
}

std::optional<LoggedRow> RunFiles::logged_row(int64_t step) const {
  const std::vector<std::string> rows = complete_rows_until(log_path(), step);
  if (rows.empty()) return std::nullopt;
  LogTable row(log_path(), columns_.header(), {rows.back()});
  if (row.step(0) != step) return std::nullopt;
  return LoggedRow(std::move(row));
}

bool RunFiles::has_result() const { return std::filesystem::exists(result_path()); }

ResultRecord RunFiles::read_result() const { return read_result_record(result_path()); }

void RunFiles::write_result(const ResultRecord& result) const {
  if (lead_) write_text_file(result_path(), nlohmann::json(result).dump(2) + "\n");
}

}  // namespace nl
