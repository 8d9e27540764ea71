// Fixtures shared by the ViT tests (tests/nn/test_vit.cpp, test_fold_vit.cpp, ...): a
// configuration maker, a tiny configuration and a scramble that moves every parameter
// away from its initialisation.
#pragma once
#include <string>

#include "nn/vit.h"
#include "tests/nn/model_fixtures.h"

namespace nl::test {

// A ViTConfig with these sizes and norm; every other field keeps its default.
inline ViTConfig vit_config(int64_t image, int64_t channels, int64_t patch, int64_t classes, int64_t layers,
                            int64_t dim, int64_t heads, const std::string& norm) {
  ViTConfig c;
  c.image = image, c.channels = channels, c.patch = patch, c.classes = classes;
  c.layers = layers, c.dim = dim, c.heads = heads;
  c.norm.name = norm;
  return c;
}

// 8 x 8 images, patch 4: 4 patches + the class token, 5 tokens
inline ViTConfig tiny_config(const std::string& norm) { return vit_config(8, 1, 4, 3, 1, 8, 2, norm); }

// Moves every parameter away from its initialisation (gains away from 1, biases and
// the zero head away from 0), where a swapped or missing term shows: the class token
// and position embedding N(0, 0.7), the other weights N(0, 0.3) (model_fixtures.h).
inline void scramble(ViT& model, Generator& gen) {
  scramble_parameters(
      model, gen, [](const std::string& name) { return name == "cls_token" || name == "pos_embed"; }, 0.3f);
}

}  // namespace nl::test
