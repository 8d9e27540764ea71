// hardtanh: DyT with its tanh replaced by a clip, gamma clip(alpha x, -1, 1) + beta, alpha
// a learnt scalar: the HardTanh control of the DyT regime study (Verma 2026, issue 17).
// It has DyT's slope at 0 and its bound, but saturates all at once at |alpha x| = 1 and
// passes no gradient past it, which separates what DyT owes to the bound from what it
// owes to the tanh's smooth saturation.
#include "autograd/ops.h"
#include "nn/norms/registry.h"

namespace nl {
namespace {

class HardTanh : public Norm {
 public:
  HardTanh(int64_t dim, float alpha0, bool with_bias) {
    alpha = register_parameter("alpha", Tensor::full({1}, alpha0));
    weight = register_parameter("weight", Tensor::ones({dim}));
    if (with_bias) bias = register_parameter("bias", Tensor::zeros({dim}));
  }
  // clip(u, -1, 1) = u - relu(u - 1) + relu(-u - 1): slope 1 inside, 0 outside
  Var composite(const Var& x) const override {
    Var u = bounded_arg(x);
    Var clipped = ag::add(ag::sub(u, ag::relu(ag::add_scalar(u, -1.0f))), ag::relu(ag::add_scalar(ag::neg(u), -1.0f)));
    Var y = ag::mul(clipped, weight);
    return bias.defined() ? ag::add(y, bias) : y;
  }
  Var bounded_arg(const Var& x) const override { return ag::mul(x, alpha); }

 private:
  Var alpha, weight, bias;
};

}  // namespace

NormKind hardtanh_kind() {
  NormKind k;
  k.name = "hardtanh";
  k.summary = "HardTanh: gamma clip(alpha x, -1, 1) + beta, DyT with a clip for its tanh (--hardtanh-alpha0)";
  k.source = "the HardTanh control of the DyT regime study (Verma 2026)";
  k.make = [](const NormConfig& c, int64_t dim, NormPlace) {
    return std::make_shared<HardTanh>(dim, (float)c.option("hardtanh-alpha0"), c.bias);
  };
  k.options = {{"hardtanh-alpha0", 0.5, -1e6, 1e6, "HardTanh's initial alpha"}};
  k.statistics = false;
  k.bounded = {"clip", {-1.0, 1.0}};
  return k;
}

}  // namespace nl
