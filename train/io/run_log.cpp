#include "train/io/run_log.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tensor/error.h"
#include "train/io/files.h"

namespace nl {

namespace {

size_t fields(const std::string& line) { return 1 + (size_t)std::count(line.begin(), line.end(), ','); }

// "a,,b" -> {"a", "", "b"}: every field, the empty ones included
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells(1);
  for (char ch : line) {
    if (ch == ',') cells.emplace_back();
    else cells.back() += ch;
  }
  return cells;
}

// A log's text: its header, and its whole rows with a step <= `step`: lines that end in
// '\n' (the last one of a killed run may stop anywhere), begin with a step and have as
// many fields as the header.
std::pair<std::string, std::vector<std::string>> whole_rows(const std::string& text, int64_t step) {
  std::vector<std::string> rows;
  size_t start = text.find('\n');
  if (start == std::string::npos) return {text, rows};
  const std::string header = text.substr(0, start);
  const size_t columns = fields(header);
  for (size_t end; ++start < text.size() && (end = text.find('\n', start)) != std::string::npos; start = end) {
    const std::string line = text.substr(start, end - start);
    char* stop = nullptr;
    const long long s = std::strtoll(line.c_str(), &stop, 10);
    if (stop == line.c_str() || *stop != ',' || fields(line) != columns) continue;
    if (s <= step) rows.push_back(line);
  }
  return {header, rows};
}

}  // namespace

std::vector<std::string> complete_rows_until(const std::string& path, int64_t step) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};  // not a device that reads forever
  return whole_rows(read_text_file(path, "the log to keep", int64_t(1) << 34), step).second;
}

LogTable::LogTable(std::string path, const std::string& header, const std::vector<std::string>& rows)
    : path_(std::move(path)), header_(header), names_(cells_of(header)) {
  for (const std::string& r : rows) rows_.push_back(cells_of(r));
}

size_t LogTable::index(const std::string& name) const {
  const auto at = std::find(names_.begin(), names_.end(), name);
  NL_CHECK(at != names_.end(), path_, ": no column '", name, "' in its header (", header_, ")");
  return (size_t)(at - names_.begin());
}

int64_t LogTable::step(size_t row) const { return std::strtoll(rows_.at(row).at(0).c_str(), nullptr, 10); }

const std::string& LogTable::text(size_t row, const std::string& name) const {
  static const std::string kNone;
  const std::vector<std::string>& cells = rows_.at(row);
  const size_t k = index(name);
  return k < cells.size() ? cells[k] : kNone;
}

double LogTable::figure(size_t row, const std::string& name) const {
  const std::string& t = text(row, name);
  return t.empty() ? (double)NAN : std::strtod(t.c_str(), nullptr);
}

std::vector<std::pair<int64_t, std::string>> LogTable::column_text(const std::string& name) const {
  std::vector<std::pair<int64_t, std::string>> out;
  index(name);  // a column the header lacks is an error even in a log without rows
  for (size_t r = 0; r < rows_.size(); ++r)
    if (!text(r, name).empty()) out.emplace_back(step(r), text(r, name));
  return out;
}

std::vector<std::pair<int64_t, double>> LogTable::column(const std::string& name) const {
  std::vector<std::pair<int64_t, double>> out;
  for (const auto& [s, t] : column_text(name)) out.emplace_back(s, std::strtod(t.c_str(), nullptr));
  return out;
}

LogTable read_log(const std::string& path) {
  std::error_code ec;
  NL_CHECK(std::filesystem::is_regular_file(path, ec), path, ": no such log");
  auto [header, rows] = whole_rows(read_text_file(path, "log", int64_t(1) << 34), INT64_MAX);
  return LogTable(path, header, rows);
}

CsvLog::CsvLog(const std::string& path, const std::string& header, int64_t keep_until_step) : path_(path) {
  // the kept rows go to a new file that replaces the old one by rename: a kill while
  // it is written leaves the old log whole (rewriting in place lost rows that way)
  std::string text = header + "\n";
  if (keep_until_step >= 0)
    for (const auto& r : complete_rows_until(path, keep_until_step)) text += r + "\n";
  write_text_file(path, text);
  f_ = std::fopen(path.c_str(), "a");
  if (!f_) fail("cannot write ", path, ": ", std::strerror(errno));
}

CsvLog::~CsvLog() {
  if (f_) std::fclose(f_);
}

void CsvLog::write_failed(int err) {
  fail("writing ", path_, " failed: ", std::strerror(err ? err : EIO));
}

void CsvLog::row(const std::string& line) {
  errno = 0;
  if (std::fputs(line.c_str(), f_) < 0 || std::fputc('\n', f_) == EOF) write_failed(errno);
}

void CsvLog::flush() {
  errno = 0;
  if (std::fflush(f_) != 0 || std::ferror(f_)) write_failed(errno);
}

void CsvLog::sync() {
  flush();
  if (fsync(fileno(f_)) != 0) write_failed(errno);
}

}  // namespace nl
