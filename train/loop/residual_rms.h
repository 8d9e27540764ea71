// The probe (nn/probe.h) the training loop's tasks install on their model: the RMS of
// the residual stream entering each block and leaving the last (L + 1 values) in the
// most recent forward, for the log's rms_0 .. rms_L columns. It asks for the stream
// only, so the model computes nothing else for it.
#pragma once
#include <string>
#include <vector>

#include "nn/probe.h"

namespace nl {

class ResidualRms : public ActivationProbe {
 public:
  void record(int64_t layer, const std::string& site, const Tensor& value) override;
  bool wants_detail() const override { return false; }
  // values()[l]: layer l's RMS (0 before any forward reached it)
  std::vector<double> values() const { return std::vector<double>(rms_.begin(), rms_.end()); }
  static std::vector<std::string> columns(int64_t layers);  // rms_0 .. rms_L

 private:
  std::vector<float> rms_;
};

// sqrt(mean(x^2)) over every element, accumulated in double (on the GPU reduced there).
float rms_of(const Tensor& x);

}  // namespace nl
