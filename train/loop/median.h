// The median of a list of timings: the middle value, or the mean of the two middle
// ones; NaN for none. One definition for the training loop, its thread policy, the
// studies and the benchmarks.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace nl {

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace nl
