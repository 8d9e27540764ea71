// What the tests that compare two training runs' logs share: a column of a run's log.csv
// read by its name (train/io/run_log.h), and the check that one run logged what another
// did, step for step (a folded run continuing the ln run, 2 ranks against 1 process).
#pragma once
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "tests/test_files.h"
#include "train/io/run_log.h"

namespace nl::test {

// step -> the column of log.csv called `column`, empty cells left out
inline std::map<int, double> log_column(const std::string& path, const std::string& column) {
  std::map<int, double> values;
  for (const auto& [step, value] : read_log(path).column(column)) values[(int)step] = value;
  return values;
}

// Column `column` of the log at `log` holds `steps` values, each within `tolerance` of
// the reference log's at the same step, which must be there.
inline void check_same_column(const std::string& reference_log, const std::string& log, const std::string& column,
                              size_t steps, double tolerance) {
  const auto values = log_column(log, column);
  REQUIRE(values.size() == steps);
  const auto [worst, all_found] = largest_difference(log_column(reference_log, column), values);
  REQUIRE(all_found);
  INFO("largest difference per step in column " << column << " of " << log << ": " << worst);
  CHECK(worst <= tolerance);
}

}  // namespace nl::test
