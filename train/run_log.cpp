#include "train/run_log.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tensor/error.h"

namespace nl {

namespace {

size_t fields(const std::string& line) { return 1 + (size_t)std::count(line.begin(), line.end(), ','); }

}  // namespace

std::vector<std::string> complete_rows_until(const std::string& path, int64_t step) {
  std::vector<std::string> rows;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return rows;  // not a device that reads forever
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

void create_out_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("cannot create the output folder ", dir, ": ", ec.message());
}

void write_text_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) fail("cannot write ", path, ": ", std::strerror(errno));
  errno = 0;
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !written) fail("writing ", path, " failed: ", std::strerror(err ? err : errno ? errno : EIO));
}

CsvLog::CsvLog(const std::string& path, const std::string& header, int64_t keep_until_step) : path_(path) {
  std::vector<std::string> kept;
  if (keep_until_step >= 0) kept = complete_rows_until(path, keep_until_step);
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) fail("cannot write ", path, ": ", std::strerror(errno));
  row(header);
  for (const auto& r : kept) row(r);
  flush();
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

}  // namespace nl
