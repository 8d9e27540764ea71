#include "train/loop/run_files.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "tensor/error.h"
#include "train/io/files.h"
#include "train/io/run_dir.h"
#include "train/io/text_fields.h"
#include "train/safety/stop_signals.h"

namespace nl {

LoggedRow::LoggedRow(std::string log_path, std::vector<std::string> names, std::vector<std::string> cells)
    : path_(std::move(log_path)), names_(std::move(names)), cells_(std::move(cells)) {}

double LoggedRow::figure(const std::string& name) const {
  for (size_t k = 0; k < names_.size() && k < cells_.size(); ++k)
    if (names_[k] == name) return cells_[k].empty() ? (double)NAN : std::strtod(cells_[k].c_str(), nullptr);
  fail(path_, ": no column '", name, "' in its header");
}

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
  // every field, the empty ones (an evaluation not taken at that step) included
  std::vector<std::string> cells(1);
  for (char ch : rows.back()) {
    if (ch == ',') cells.emplace_back();
    else cells.back() += ch;
  }
  if (std::strtoll(cells[0].c_str(), nullptr, 10) != step) return std::nullopt;
  return LoggedRow(log_path(), split_list(columns_.header()), cells);
}

bool RunFiles::has_result() const { return std::filesystem::exists(result_path()); }

nlohmann::json RunFiles::read_result() const {
  return nlohmann::json::parse(read_text_file(result_path(), "result"));
}

void RunFiles::write_result(const nlohmann::json& result) const {
  if (lead_) write_text_file(result_path(), result.dump(2) + "\n");
}

}  // namespace nl
