#include "studies/instruments/metrics.h"

#include <cmath>
#include <vector>

namespace nl {

std::array<double, 3> saturation_fractions(const Tensor& arg) {
  NL_CHECK(arg.dtype() == DType::F32 && arg.numel() > 0, "saturation_fractions: needs a non-empty float32 tensor, got ",
           describe(arg));
  std::vector<float> v = arg.to_vector();
  int64_t above[3] = {0, 0, 0};
  for (float x : v) {
    const float a = std::fabs(x);
    above[0] += a > 1.0f;
    above[1] += a > 2.0f;
    above[2] += a > 3.0f;
  }
  const double n = (double)v.size();
  return {above[0] / n, above[1] / n, above[2] / n};
}

}  // namespace nl
