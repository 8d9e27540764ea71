// Linear layer y = x W^T + b, W stored (out, in) as in PyTorch; x (..., in) -> (..., out).
// With `centred` set it is a CBWC linear (NORMS.md): the forward uses
//   V = W - mean over outputs of W (each column of W made zero-sum),  c = b - mean(b),
// recomputed from the free parameters W, b at every step, so gradients flow through
// the projection. Then every output row is zero-mean over its `out` features.
// With `folded` also set, W and b already hold V and c (a model folded for inference,
// nn/fold.h): the forward uses them as they are and skips the centring. Only for
// inference: training such a layer would let W leave the constraint.
#pragma once
#include "nn/module.h"
#include "tensor/ops.h"  // Activation
#include "tensor/random.h"

namespace nl {

class Linear : public Module {
 public:
  Linear(int64_t in, int64_t out, bool bias, Generator& gen, float init_std = 0.02f, bool centred = false);
  // act: an activation applied to the output in the same op (the GELU MLP's up-projection);
  // residual (..., out): added to the output in the same op (a block's residual stream)
  Var forward(const Var& x, Activation act = Activation::None, const Var& residual = Var()) const;
  // The weight and bias the forward actually applies (V, c when centred).
  Var effective_weight() const;
  Var effective_bias() const;
  bool centred() const { return centred_; }
  void set_centred(bool on) { centred_ = on; }
  bool folded() const { return folded_; }
  void set_folded(bool on) { folded_ = on; }
  int64_t in_features, out_features;
  Var weight, bias;  // bias undefined when built without one
 private:
  bool centred_;
  bool folded_ = false;
};

class Embedding : public Module {
 public:
  Embedding(int64_t vocab, int64_t dim, Generator& gen, float init_std = 0.02f);
  Var forward(const Tensor& ids) const;  // ids int32 (...) -> (..., dim)
  Var weight;                            // (vocab, dim)
};

}  // namespace nl
