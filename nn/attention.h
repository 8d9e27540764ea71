// Multi-head self-attention with a fused qkv projection:
//   q, k, v = split(x Wqkv^T + bqkv);  per head: softmax(q k^T / sqrt(hd) [+ causal mask]) v
//   y = concat(heads) Wo^T + bo
// x (B, T, C) -> (B, T, C). Causal for the GPT, not for the ViT. The per-head part is one
// fused op (ag::attention, tensor/cpu/attention.cpp) that keeps no (T, T) tensor. With
// `rope` the queries and keys are rotated by their positions (rotary position embeddings,
// tensor/ops.h: rope_forward, base kRopeBase) before that op; without `bias` the two
// linears have none.
#pragma once
#include <string>
#include <vector>

#include "nn/linear.h"

namespace nl {

// The keys and values of the tokens generated so far, one pair per layer, so that each
// new token attends to them instead of recomputing the whole window (generation).
struct KVCacheLayer {
  Tensor k, v;  // (B, H, capacity, hd); positions [0, length) hold data
};

// RoPE's base: the angle of pair i of a head of hd channels at position p is p kRopeBase^(-2i/hd).
constexpr float kRopeBase = 10000.0f;

class SelfAttention : public Module {
 public:
  SelfAttention(int64_t dim, int64_t heads, bool causal, Generator& gen, float proj_std, bool centred_proj,
                bool bias = true, bool rope = false);
  // residual (B, T, C): added to the output projection's result in its epilogue (the block's
  // residual stream, nn/block.cpp), as r + attention(x)
  Var forward(const Var& x, const Var& residual = Var()) const;
  // The same attention for new tokens x (B, Tn, C) at positions past .. past + Tn - 1:
  // their keys and values are written into the cache, and each attends to every cached
  // position up to its own. Inference only (call under NoGradGuard); causal only.
  Var forward_cached(const Var& x, KVCacheLayer& cache, int64_t past) const;
  // ||W_V W_O||_F^2 in the x W convention (no gradient): BHyT's c_attn numerator.
  float value_output_frobenius2() const;
  int64_t dim, heads;
  bool causal, rope;
  std::shared_ptr<Linear> qkv, proj;
};

// Position-wise MLP of one of two kinds (`kind`, checked by check_mlp_name):
//   gelu    fc (C -> 4C), GELU, proj (4C -> C)                              (GPT-2)
//   swiglu  fc (C -> 2H) whose halves are gate g and up u, silu(g) * u, proj (H -> C)
//           with H = round(8C/3), so that it has about the GELU MLP's parameters (LLaMA)
// Without `bias` fc and proj have none.
class MLP : public Module {
 public:
  MLP(int64_t dim, Generator& gen, float proj_std, bool centred_proj, const std::string& kind = "gelu",
      bool bias = true);
  Var forward(const Var& x, const Var& residual = Var()) const;  // residual: as SelfAttention's
  std::string kind;
  int64_t hidden;  // 4C (gelu) or H (swiglu)
  std::shared_ptr<Linear> fc, proj;
};

// The MLP kinds ("gelu", "swiglu"), and a check that throws listing them.
const std::vector<std::string>& mlp_names();
void check_mlp_name(const std::string& name);

}  // namespace nl
