// Fixtures shared by the ViT tests (tests/nn/test_vit.cpp, test_fold_vit.cpp): a tiny
// configuration and a scramble that moves every parameter away from its initialisation.
#pragma once
#include <string>

#include "nn/vit.h"
#include "tensor/ops.h"

namespace nl::test {

inline ViTConfig tiny_config(const std::string& norm) {
  ViTConfig c;
  c.image = 8;
  c.patch = 4;   // 4 patches + the class token: 5 tokens
  c.classes = 3;
  c.layers = 1;
  c.dim = 8;
  c.heads = 2;
  c.norm.name = norm;
  return c;
}

// Moves every parameter away from its initialisation (gains away from 1, biases and
// the zero head away from 0), where a swapped or missing term shows.
inline void scramble(ViT& model, Generator& gen) {
  for (auto& [name, p] : model.named_parameters()) {
    Tensor& v = p.value();
    const bool is_norm = name.find("ln") != std::string::npos;
    const bool weight = name.size() >= 6 && name.compare(name.size() - 6, 6, "weight") == 0;
    Tensor r;
    if (name.find("alpha") != std::string::npos || name.find("lambda") != std::string::npos)
      r = gen.uniform(v.shape(), 0.6f, 1.4f);
    else if (is_norm && weight)
      r = add_scalar(gen.normal(v.shape(), 0.0f, 0.3f), 1.0f);
    else if (is_norm || name.find("bias") != std::string::npos)
      r = gen.normal(v.shape(), 0.0f, 0.2f);
    else if (name == "cls_token" || name == "pos_embed")
      r = gen.normal(v.shape(), 0.0f, 0.7f);
    else
      r = gen.normal(v.shape(), 0.0f, 0.3f);
    v.copy_from(r);
  }
}

}  // namespace nl::test
