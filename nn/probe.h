// Observers of a forward pass. A model holds a pointer to one (set_probe) and reports
// intermediate tensors to it; null costs one branch per site. The model computes
// nothing for measurement on its own: whoever wants a number installs a probe (the
// training loop's residual-stream RMS, train/; the activation statistics, studies/).
// `layer` is 0-based; the sites a Block reports:
//   resid                the residual stream entering the block (the model adds layer L:
//                        the stream leaving the last block)
//   ln1, ln2, ln1_out, ln2_out   each norm's output (as it enters the next op: scaled in lns)
//   <norm>.bounded_arg   the argument of that norm's bounded nonlinearity (tanh, clip...:
//                        the norms that end in one, NormKind::bounded)
//   site2_var_approx     in blocks whose norm's site pair reports it (BHyT's, nn/norms/site_pair.h), per token:
//                        s1^2 + r c_attn lambda1^2/kappa^2 (BHyT's code form: ms1 + ...)
//   site2_var_exact      the same tokens' exact s2^2, the variance of h over channels
//                        (code form: the mean square of h)
// A probe that only wants the stream (wants_detail() false) is told "resid" alone, and
// the sites that cost extra work (bounded arguments, site-2 variances) are not computed.
#pragma once
#include <cstdint>
#include <string>

#include "tensor/tensor.h"

namespace nl {

class ActivationProbe {
 public:
  virtual ~ActivationProbe() = default;
  virtual void record(int64_t layer, const std::string& site, const Tensor& value) = 0;
  virtual bool wants_detail() const { return true; }
};

}  // namespace nl
