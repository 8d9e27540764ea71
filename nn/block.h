// A pre-norm transformer block:  h = x + Attn(N1(x));  out = h + MLP(N2(h)).
// For `bhyt` the second site uses the block-level variance approximation of NORMS.md:
// no reduction over h; its denominator comes from the block input's statistics,
//   kappa * sqrt(s1^2 + c_attn * lambda1^2 / kappa^2 + eps) + |mu1|,
//   c_attn = ||W_V W_O||_F^2 / (T d)  (no gradient; lambda1 detached).
// With dropout p > 0 each branch output (attention, MLP) passes through dropout before
// it is added to the stream, masks drawn from *dropout_gen, in training mode only.
#pragma once
#include "nn/attention.h"
#include "nn/norms/norms.h"

namespace nl {

class Block : public Module {
 public:
  Block(int64_t dim, int64_t heads, bool causal, const NormConfig& norm, int layers, Generator& gen,
        float dropout = 0.0f, Generator* dropout_gen = nullptr);
  Var forward(const Var& x) const;
  std::shared_ptr<Norm> ln1, ln2;
  std::shared_ptr<SelfAttention> attn;
  std::shared_ptr<MLP> mlp;
  NormConfig norm;
  float dropout;
  Generator* dropout_gen;  // not owned; used only when dropout > 0

 private:
  Var residual(const Var& x, const Var& branch) const;  // x + dropout(branch)
};

}  // namespace nl
