// Set-up shared by the tests of BHyT's block-level site-2 approximation
// (tests/nn/test_bhyt_block.cpp, test_layers.cpp): attention weights large enough that
// c_attn matters, and chosen lambdas at both sites.
#pragma once
#include "nn/block.h"
#include "nn/norms/norms.h"
#include "tensor/random.h"

namespace nl::test {

// The two norm sites of a block whose norm is bhyt or bhyt-exact
struct BHyTSites {
  BHyT& s1;
  BHyT& s2;
};

// Draws the block's attention weights from gen, qkv N(0, qkv_sd) then proj N(0, proj_sd),
// and sets the lambdas of its two sites.
inline BHyTSites set_bhyt_attention(Block& block, Generator& gen, float qkv_sd, float proj_sd, float lambda1,
                                    float lambda2) {
  const int64_t C = block.attn->dim;
  block.attn->qkv->weight.value().copy_from(gen.normal({3 * C, C}, 0.0f, qkv_sd));
  block.attn->proj->weight.value().copy_from(gen.normal({C, C}, 0.0f, proj_sd));
  auto& s1 = static_cast<BHyT&>(*block.ln1);
  auto& s2 = static_cast<BHyT&>(*block.ln2);
  s1.lambda.value().fill_(lambda1);
  s2.lambda.value().fill_(lambda2);
  return {s1, s2};
}

}  // namespace nl::test
