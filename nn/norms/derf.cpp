// derf: Dynamic erf, gamma erf(alpha x + s) + beta with alpha and s learnt scalars (Chen,
// Lu, Zhu, Sun and Liu 2025, "Stronger Normalization-Free Transformers", arXiv
// 2512.10938). DyT's successor from DyT's authors, found by a search over point-wise
// functions: reported above LayerNorm, RMSNorm and DyT in vision, speech and DNA models
// and level with LayerNorm on GPT-2. As in the released code (zlab-princeton/Derf,
// dynamic_erf.py): alpha starts at 0.5, s at 0, and beta is kept. Its GPT-2 patch starts
// alpha at 1.0 and scales the embedding by a learnt scalar from sqrt(d): here
// --derf-alpha0 1 --emb-scale sqrt (docs/norms/derf.md lists every difference).
#include "autograd/ops.h"
#include "nn/norms/registry.h"

namespace nl {
namespace {

class Derf : public Norm {
 public:
  Derf(int64_t dim, float alpha0, float shift0, bool with_bias) {
    alpha = register_parameter("alpha", Tensor::full({1}, alpha0));
    shift = register_parameter("shift", Tensor::full({1}, shift0));
    weight = register_parameter("weight", Tensor::ones({dim}));
    if (with_bias) bias = register_parameter("bias", Tensor::zeros({dim}));
  }
  Var composite(const Var& x) const override {
    Var y = ag::mul(ag::erf(bounded_arg(x)), weight);
    return bias.defined() ? ag::add(y, bias) : y;
  }
  Var bounded_arg(const Var& x) const override { return ag::add(ag::mul(x, alpha), shift); }

 private:
  Var alpha, shift, weight, bias;
};

}  // namespace

NormKind derf_kind() {
  NormKind k;
  k.name = "derf";
  k.summary = "Derf: gamma erf(alpha x + s) + beta, alpha and s learnt scalars (--derf-alpha0, --derf-shift0)";
  k.source = "Chen, Lu, Zhu, Sun and Liu 2025, Stronger Normalization-Free Transformers";
  k.make = [](const NormConfig& c, int64_t dim, NormPlace) {
    return std::make_shared<Derf>(dim, (float)c.option("derf-alpha0"), (float)c.option("derf-shift0"), c.bias);
  };
  k.options = {{"derf-alpha0", 0.5, -1e6, 1e6, "Derf's initial alpha"},
               {"derf-shift0", 0.0, -1e6, 1e6, "Derf's initial shift s"}};
  k.statistics = false;
  k.bounded.name = "erf";
  return k;
}

}  // namespace nl
