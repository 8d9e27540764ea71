// The tests build many blocks: the BlockConfig of a block from its sizes, as the
// models fill it in (nn/gpt.cpp, nn/vit.cpp).
#pragma once
#include <string>

#include "nn/block.h"

namespace nl::test {

inline BlockConfig block_config(int64_t dim, int64_t heads, bool causal, const NormConfig& norm, int64_t layers,
                                const std::string& variant = "pre", int64_t layer = 1) {
  BlockConfig c;
  c.dim = dim, c.heads = heads, c.causal = causal, c.norm = norm, c.layers = layers, c.variant = variant;
  c.layer = layer;
  return c;
}

}  // namespace nl::test
