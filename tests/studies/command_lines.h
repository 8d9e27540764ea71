// What the tests of the studies' plans share (test_depth_stages.cpp, test_regime_stages.cpp):
// reading a flag's value back from the command line a plan gives a cell.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

namespace nl::test {

// The value after `flag` in `args` ("" when absent).
inline std::string value_of(const std::vector<std::string>& args, const std::string& flag) {
  const auto it = std::find(args.begin(), args.end(), flag);
  return it == args.end() || it + 1 == args.end() ? "" : *(it + 1);
}

}  // namespace nl::test
