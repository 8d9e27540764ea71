// Differential attention (Ye et al., "Differential Transformer", ICLR 2025, arXiv 2410.05258;
// the released reference microsoft/unilm Diff-Transformer/multihead_diffattn.py): each of
// the H heads owns two query/key pairs of width hd = C / (2H) and one value of width 2 hd,
// and subtracts its two softmax maps,
//   A_i = softmax(q_i k_i^T / sqrt(hd) [+ causal mask]),  i = 1, 2
//   head = RMSNorm((A_1 - lambda A_2) v) (1 - lambda_init)      (RMSNorm over 2 hd, no affine, eps 1e-5)
//   lambda = exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init     (one scalar per layer, shared by its heads)
//   lambda_init = 0.8 - 0.6 exp(-0.3 (l - 1))                  (l the 1-based layer: the code's depth l - 1)
// lq1, lk1, lq2, lk2 are learnt vectors of width hd drawn from N(0, 0.1^2). q, k and v are
// C wide each and the output projection C -> C, so the parameters are a standard
// attention's plus 4 hd (the paper halves the baseline's head count for this; here
// --heads is the differential heads' count). Differences from the paper, kept so that
// only the attention changes against this project's GPT: the projections have biases,
// and positions are the GPT's learnt embedding (no RoPE). Verma 2026's variant differs
// again (all heads kept, q and k doubled, GroupNorm, lambda_init one layer later).
// (A_1 - lambda A_2) v = A_1 v - lambda A_2 v: two fused attentions per value half
// (ag::attention wants one head width for q, k and v), no (T, T) tensor kept.
#pragma once
#include "nn/linear.h"

namespace nl {

// 0.8 - 0.6 exp(-0.3 (layer - 1)), layer 1-based.
float diff_lambda_init(int64_t layer);

class DiffAttention : public Module {
 public:
  DiffAttention(int64_t dim, int64_t heads, bool causal, int64_t layer, Generator& gen, float proj_std,
                bool centred_proj);
  Var forward(const Var& x) const;  // x (B, T, C) -> (B, T, C)
  // lambda as the forward computes it (a scalar Var, recorded).
  Var lambda() const;
  int64_t dim, heads, head_dim;  // head_dim: the width of one query/key, C / (2 heads)
  bool causal;
  float lambda_init;
  std::shared_ptr<Linear> qkv, proj;
  Var lambda_q1, lambda_k1, lambda_q2, lambda_k2;
};

}  // namespace nl
