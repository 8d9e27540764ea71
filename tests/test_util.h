// Helpers shared by the tests: comparing tensors with a report of where they differ.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/random.h"
#include "tensor/tensor.h"
#include "tensor/threads.h"

namespace nl::test {

struct CloseResult {
  bool ok = true;
  double max_abs = 0, max_rel = 0;
  std::string report;
};

// |a - b| <= atol + rtol * |b| everywhere (b is the expected value). NaN never matches
// unless both are NaN. The report names the first differing values and the max errors.
inline CloseResult compare(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  CloseResult r;
  std::ostringstream os;
  if (actual.shape() != expected.shape()) {
    r.ok = false;
    os << "shape " << to_string(actual.shape()) << " != expected " << to_string(expected.shape());
    r.report = os.str();
    return r;
  }
  auto a = actual.to_vector(), b = expected.to_vector();
  int shown = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    bool both_nan = std::isnan(a[i]) && std::isnan(b[i]);
    bool same_inf = std::isinf(a[i]) && a[i] == b[i];
    double d = std::fabs((double)a[i] - (double)b[i]);
    bool bad = !(both_nan || same_inf) && (std::isnan(d) || d > atol + rtol * std::fabs((double)b[i]));
    if (!(both_nan || same_inf) && !std::isnan(d)) {
      r.max_abs = std::max(r.max_abs, d);
      if (b[i] != 0) r.max_rel = std::max(r.max_rel, d / std::fabs((double)b[i]));
    }
    if (bad) {
      r.ok = false;
      if (shown++ < 5) os << "  [" << i << "] got " << a[i] << " expected " << b[i] << "\n";
    }
  }
  if (!r.ok)
    os << "  max abs err " << r.max_abs << ", max rel err " << r.max_rel << " (rtol " << rtol << ", atol "
       << atol << ")";
  r.report = os.str();
  return r;
}

// Token ids int32 (B, T) drawn from gen, each below vocab: a model's input in tests.
inline Tensor random_ids(Generator& gen, int64_t B, int64_t T, int64_t vocab) {
  std::vector<int32_t> v(B * T);
  for (auto& x : v) x = (int32_t)gen.below((uint32_t)vocab);
  return Tensor::from_ints(v, {B, T});
}

}  // namespace nl::test

// CHECK_CLOSE(actual, expected, rtol, atol): a failing check prints where and by how much.
#define CHECK_CLOSE(actual, expected, rtol, atol)                           \
  do {                                                                      \
    auto _r = ::nl::test::compare((actual), (expected), (rtol), (atol));    \
    INFO(#actual " vs " #expected ":\n" << _r.report);                      \
    CHECK(_r.ok);                                                           \
  } while (0)

// CHECK_GRADCHECK(result): passes when gradcheck agreed, else prints its report.
#define CHECK_GRADCHECK(result)                                             \
  do {                                                                      \
    auto _g = (result);                                                     \
    INFO("gradcheck: max abs " << _g.max_abs_err << ", max rel " << _g.max_rel_err << "\n" << _g.report); \
    CHECK(_g.ok);                                                           \
  } while (0)
