#include "train/io/run_log.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tensor/error.h"
#include "train/io/files.h"

namespace nl {

namespace {

size_t fields(const std::string& line) { return 1 + (size_t)std::count(line.begin(), line.end(), ','); }

}  // namespace

std::vector<std::string> complete_rows_until(const std::string& path, int64_t step) {
  std::vector<std::string> rows;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return rows;  // not a device that reads forever
  const std::string text = read_text_file(path, "the log to keep", int64_t(1) << 34);
  size_t start = text.find('\n');
  if (start == std::string::npos) return rows;
  const size_t columns = fields(text.substr(0, start));
  // only lines that end in '\n': the last one of a killed run may stop anywhere
  for (size_t end; ++start < text.size() && (end = text.find('\n', start)) != std::string::npos; start = end) {
    const std::string line = text.substr(start, end - start);
    char* stop = nullptr;
    const long long s = std::strtoll(line.c_str(), &stop, 10);
    if (stop == line.c_str() || *stop != ',' || fields(line) != columns) continue;
    if (s <= step) rows.push_back(line);
  }
  return rows;
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
