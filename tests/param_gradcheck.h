// Finite-difference check of a model's parameter gradients, shared by the GPT and ViT
// tests: for every parameter, the largest-|grad| element and `random_picks` random ones
// (all elements of a parameter of at most 8) are perturbed in place by +-h and the loss
// recomputed without a graph; the central difference must match p.grad(). Call it after
// one backward of the same loss.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "nn/module.h"
#include "tensor/random.h"

namespace nl::test {

// Returns how many elements were checked.
inline int check_parameter_gradients(const Module& model, const std::function<double()>& loss, Generator& gen,
                                     int random_picks, const std::string& label) {
  const float h = 1e-2f;
  int checked = 0;
  for (auto& [name, p] : model.named_parameters()) {
    REQUIRE(p.grad().defined());
    REQUIRE(p.value().is_contiguous());
    std::vector<float> g = p.grad().to_vector();
    const int64_t n = (int64_t)g.size();
    std::vector<int64_t> picks;
    if (n <= 8) {
      for (int64_t i = 0; i < n; ++i) picks.push_back(i);
    } else {
      int64_t best = 0;
      for (int64_t i = 1; i < n; ++i)
        if (std::fabs(g[i]) > std::fabs(g[best])) best = i;
      picks.push_back(best);
      for (int k = 0; k < random_picks; ++k) picks.push_back((int64_t)gen.below((uint32_t)n));
    }
    float* data = p.value().data();
    for (int64_t i : picks) {
      const float orig = data[i];
      data[i] = orig + h;
      const double up = loss();
      data[i] = orig - h;
      const double down = loss();
      data[i] = orig;
      const double fd = (up - down) / (2.0 * (double)h);
      INFO(label << ": d loss / d " << name << "[" << i << "]: analytic " << g[i] << ", numeric " << fd);
      // observed errors of a correct backward: below 1e-4 (float32 losses, h = 1e-2).
      // For bhyt the numeric derivative also sees c_attn's dependence on W_V, W_O and
      // lambda1, which the block detaches by design; at these scales that is < 3e-5.
      CHECK(std::fabs(fd - g[i]) <= 1e-4 + 1e-2 * std::fabs(fd));
      ++checked;
    }
  }
  return checked;
}

}  // namespace nl::test
