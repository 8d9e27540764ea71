// A CSV file that a training run appends to row by row (log.csv, act_stats.csv), built
// to survive the run being killed: every write is checked (a full disk or a read-only
// folder is an nl::Error naming the file and the reason), and a resumed run keeps only
// the complete rows up to its checkpoint's step, so a row torn by a kill never survives.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace nl {

// The rows of an existing CSV (header excluded) whose first field is a step <= step,
// keeping only whole rows: ended by a newline and with as many fields as the header.
// A missing or empty file gives no rows.
std::vector<std::string> complete_rows_until(const std::string& path, int64_t step);

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
