// A CSV file that a training run appends to row by row (log.csv, act_stats.csv), built
// to survive the run being killed: every write is checked (a full disk or a read-only
// folder is an nl::Error naming the file and the reason), and a resumed run keeps only
// the complete rows up to its checkpoint's step, so a row torn by a kill never survives.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace nl {

// The rows of an existing CSV (header excluded) whose first field is a step <= step,
// keeping only whole rows: ended by a newline and with as many fields as the header.
// A missing or empty file gives no rows.
std::vector<std::string> complete_rows_until(const std::string& path, int64_t step);

// A CSV log read back (log.csv): its header's names and its whole rows, each figure
// looked up by its column's name, so that a renamed or moved column is an error naming
// it and the file, never another column's number.
class LogTable {
 public:
  // `header` and `rows` as the file has them (comma-separated, no newline).
  LogTable(std::string path, const std::string& header, const std::vector<std::string>& rows);
  const std::string& path() const { return path_; }
  size_t size() const { return rows_.size(); }
  int64_t step(size_t row) const;  // the row's first field
  // The cell of `row` in the column called `name` as the file writes it ("" where the
  // step had no such figure, an evaluation not taken); throws naming the file and the
  // column when the header has no such column.
  const std::string& text(size_t row, const std::string& name) const;
  double figure(size_t row, const std::string& name) const;  // text's number; NaN for ""
  // (step, figure) of every row whose cell in `name` is not empty: "val_loss" gives the
  // validation curve, "train_loss" the training one, "val_acc" a ViT's accuracy.
  std::vector<std::pair<int64_t, double>> column(const std::string& name) const;
  // The same with each cell's text as written (a study that copies the log's digits).
  std::vector<std::pair<int64_t, std::string>> column_text(const std::string& name) const;

 private:
  size_t index(const std::string& name) const;
  std::string path_, header_;
  std::vector<std::string> names_;
  std::vector<std::vector<std::string>> rows_;
};

// A run's log.csv (any log whose first column is the step) read back by its header's
// names: its whole rows (complete_rows_until's, every step). Throws naming the file when
// it is missing or unreadable.
LogTable read_log(const std::string& path);

class CsvLog {
 public:
  // Replaces path, atomically, by `header` and the rows of the old file up to
  // keep_until_step (complete_rows_until) when keep_until_step >= 0, then appends to it.
  // Throws when it cannot be written.
  CsvLog(const std::string& path, const std::string& header, int64_t keep_until_step = -1);
  ~CsvLog();
  CsvLog(const CsvLog&) = delete;
  CsvLog& operator=(const CsvLog&) = delete;

  void row(const std::string& line);  // appends line and a newline
  void flush();                       // hands the rows to the OS; throws on a failed write
  void sync();                        // flush(), then to the disk (before a checkpoint)
  std::FILE* file() { return f_; }    // for writers that print into it (write_act_stats)
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void write_failed(int err);
  std::string path_;
  std::FILE* f_ = nullptr;
};

}  // namespace nl
