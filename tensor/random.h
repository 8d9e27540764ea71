// A seeded random generator of the project's own, so a seed gives the same numbers on
// every platform and compiler (std::normal_distribution does not promise that).
// Core: PCG32 (a 64-bit LCG with a permuted 32-bit output) seeded through SplitMix64.
// Normals by Box-Muller, both values of each pair used.
#pragma once
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace nl {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) { manual_seed(seed); }
  void manual_seed(uint64_t seed);

  uint32_t next_u32();
  float uniform();                           // [0, 1) with 24 random bits
  float uniform(float lo, float hi);         // [lo, hi)
  float normal();                            // N(0, 1)
  uint32_t below(uint32_t n);                // uniform integer in [0, n), unbiased
  std::vector<int64_t> permutation(int64_t n);

  Tensor normal(const Shape& shape, float mean = 0.0f, float std = 1.0f);
  Tensor uniform(const Shape& shape, float lo = 0.0f, float hi = 1.0f);
  void fill_normal(Tensor& t, float mean, float std);

  // The whole state as four words, for checkpoints; set_state restores it exactly.
  std::vector<uint64_t> state() const;
  void set_state(const std::vector<uint64_t>& s);

 private:
  uint64_t state_ = 0, inc_ = 1;
  bool has_spare_ = false;
  float spare_ = 0.0f;
};

}  // namespace nl
