#include "nn/linear.h"

#include "autograd/ops.h"

namespace nl {

Linear::Linear(int64_t in, int64_t out, bool with_bias, Generator& gen, float init_std, bool centred)
    : in_features(in), out_features(out), centred_(centred) {
  weight = register_parameter("weight", gen.normal({out, in}, 0.0f, init_std));
  if (with_bias) bias = register_parameter("bias", Tensor::zeros({out}));
}

// V = W - 1 (1^T W) / m: subtract from each column its mean over the m outputs
Var Linear::effective_weight() const {
  if (!centred_ || folded_) return weight;
  return ag::sub(weight, ag::mean(weight, {0}, true));
}

Var Linear::effective_bias() const {
  if (!centred_ || folded_ || !bias.defined()) return bias;
  return ag::sub(bias, ag::mean(bias, {0}, true));
}

Var Linear::forward(const Var& x, Activation act, const Var& residual) const {
  NL_CHECK(x.dim() >= 1 && x.shape().back() == in_features, "Linear: input ", describe(x.value()),
           " does not end in ", in_features, " features");
  Shape out_shape = x.shape();
  out_shape.back() = out_features;
  NL_CHECK(!residual.defined() || residual.shape() == out_shape, "Linear: the residual ", describe(residual.value()),
           " is not the output's shape ", to_string(out_shape));
  // fold all leading dims into rows: one sgemm for the whole batch
  Var rows = ag::reshape(x, {-1, in_features});
  // the bias, an activation or the residual applied in the product's own tiles (autograd/linear.cpp)
  Var y = ag::linear(rows, effective_weight(), effective_bias(), act,
                     residual.defined() ? ag::reshape(residual, {-1, out_features}) : Var());
  return ag::reshape(y, out_shape);
}

Embedding::Embedding(int64_t vocab, int64_t dim, Generator& gen, float init_std) {
  weight = register_parameter("weight", gen.normal({vocab, dim}, 0.0f, init_std));
}

Var Embedding::forward(const Tensor& ids) const { return ag::embedding(weight, ids); }

}  // namespace nl
