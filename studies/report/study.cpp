#include "studies/report/study.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "studies/report/verdicts.h"
#include "tensor/error.h"
#include "train/io/files.h"

namespace nl {

double seconds_since(StudyClock::time_point t) {
  return std::chrono::duration<double>(StudyClock::now() - t).count();
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double v = NAN;
  in >> v;
  return v;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string fmt(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::vector<std::pair<int64_t, std::string>> val_curve(const std::string& log_path, int column) {
  std::vector<std::pair<int64_t, std::string>> out;
  // a cell refused before its first write has no log: no curve
  if (!std::filesystem::exists(log_path)) return out;
  std::istringstream in(read_text_file(log_path, "log", int64_t(1) << 30));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::vector<std::string> cells(column + 1);
    for (auto& c : cells) std::getline(ss, c, ',');
    if (!cells[column].empty()) out.emplace_back(std::atoll(cells[0].c_str()), cells[column]);
  }
  return out;
}

std::string range_text(const std::vector<double>& v, const char* format) {
  std::vector<double> f;
  for (double x : v)
    if (std::isfinite(x)) f.push_back(x);
  if (f.empty()) return "-";
  const Spread s = spread_of(f);
  if (f.size() == 1) return fmt(s.mean, format);
  return fmt(s.mean, format) + " (" + fmt(s.min, format) + "-" + fmt(s.max, format) + ")";
}

void check_doc_folder(const std::string& doc) {
  const std::filesystem::path p(doc);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  NL_CHECK(std::filesystem::is_directory(dir) && access(dir.c_str(), W_OK) == 0, "--doc ", doc,
           ": the folder is missing or not writable");
}

std::string today() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
  return date;
}

}  // namespace nl
