#include "train/loop/residual_rms.h"

#include <algorithm>
#include <cmath>

#include "tensor/ops.h"

namespace nl {

float rms_of(const Tensor& x) {
  if (x.device() != Device::CPU)  // on the GPU: reduced there, one number comes back
    return (float)std::sqrt((double)sum(mul(x, x)).item() / (double)std::max<int64_t>(x.numel(), 1));
  const Tensor c = x.contiguous();
  const float* p = c.data();
  const int64_t n = c.numel();
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += (double)p[i] * p[i];
  return (float)std::sqrt(s / (double)std::max<int64_t>(n, 1));
}

void ResidualRms::record(int64_t layer, const std::string& site, const Tensor& value) {
  if (site != "resid" || layer < 0) return;
  if ((size_t)layer >= rms_.size()) rms_.resize((size_t)layer + 1, 0.0f);
  rms_[(size_t)layer] = rms_of(value);
}

std::vector<std::string> ResidualRms::columns(int64_t layers) {
  std::vector<std::string> out;
  for (int64_t l = 0; l <= layers; ++l) out.push_back("rms_" + std::to_string(l));
  return out;
}

}  // namespace nl
