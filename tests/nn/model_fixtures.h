// Fixtures shared by the tests that build models (tests/nn, tests/studies, tests/cuda,
// tests/autograd, tests/train): a GPTConfig of given sizes in one call, and a scramble
// that moves every parameter off its initialisation.
#pragma once
#include <functional>
#include <string>

#include "nn/gpt.h"
#include "tensor/ops.h"

namespace nl::test {

// A GPTConfig with these sizes, norm and block layout; every other field keeps its default.
inline GPTConfig gpt_config(int64_t vocab, int64_t layers, int64_t dim, int64_t heads, int64_t context,
                            const std::string& norm, const std::string& block = "pre") {
  GPTConfig c;
  c.vocab = vocab, c.layers = layers, c.dim = dim, c.heads = heads, c.context = context;
  c.norm.name = norm;
  c.block = block;
  return c;
}

// Moves every parameter of `model` away from its initialisation to a "trained-looking"
// point: at init the gradients are tiny and the norms' gains and biases sit at 1 and 0,
// where some mistakes (a swapped gain, a missing bias term) leave no trace. DyT's alpha
// and BHyT's lambda U(0.6, 1.4); norm gains ("ln" in the name, ending in "weight")
// N(1, 0.3); norm and linear biases N(0, 0.2); the parameters is_embedding names
// N(0, 0.7); every other weight N(0, weight_sd).
inline void scramble_parameters(Module& model, Generator& gen,
                                const std::function<bool(const std::string&)>& is_embedding, float weight_sd) {
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
    else if (is_embedding(name))
      r = gen.normal(v.shape(), 0.0f, 0.7f);
    else
      r = gen.normal(v.shape(), 0.0f, weight_sd);
    v.copy_from(r);
  }
}

}  // namespace nl::test
