#include "tensor/random.h"

#include <cmath>
#include <cstring>

namespace nl {

static uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void Generator::manual_seed(uint64_t seed) {
  uint64_t x = seed;
  state_ = splitmix64(x);
  inc_ = splitmix64(x) | 1u;  // PCG's stream must be odd
  has_spare_ = false;
  spare_ = 0.0f;
}

// PCG32: a 64-bit LCG step, output by xorshift-high then a random rotation.
uint32_t Generator::next_u32() {
  uint64_t old = state_;
  state_ = old * 6364136223846793005ull + inc_;
  uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
  uint32_t rot = (uint32_t)(old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((32 - rot) & 31));
}

float Generator::uniform() { return (float)(next_u32() >> 8) * (1.0f / 16777216.0f); }
float Generator::uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }

// Box-Muller in double precision, rounded once to float: the libm calls (log, cos, sin)
// are correctly rounded to well under a float ulp on every common platform.
float Generator::normal() {
  if (has_spare_) { has_spare_ = false; return spare_; }
  double u1 = ((double)next_u32() + 1.0) / 4294967296.0;  // (0, 1]: log is finite
  double u2 = (double)next_u32() / 4294967296.0;
  double r = std::sqrt(-2.0 * std::log(u1));
  double t = 2.0 * M_PI * u2;
  spare_ = (float)(r * std::sin(t));
  has_spare_ = true;
  return (float)(r * std::cos(t));
}

// Lemire's nearly-divisionless method with rejection: no modulo bias.
uint32_t Generator::below(uint32_t n) {
  NL_CHECK(n > 0, "Generator::below: n must be positive");
  uint64_t m = (uint64_t)next_u32() * n;
  uint32_t low = (uint32_t)m;
  if (low < n) {
    uint32_t threshold = (uint32_t)(-n) % n;
    while (low < threshold) {
      m = (uint64_t)next_u32() * n;
      low = (uint32_t)m;
    }
  }
  return (uint32_t)(m >> 32);
}

std::vector<int64_t> Generator::permutation(int64_t n) {
  std::vector<int64_t> p(n);
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[below((uint32_t)(i + 1))]);  // Fisher-Yates
  return p;
}

Tensor Generator::normal(const Shape& shape, float mean, float std) {
  Tensor t = Tensor::empty(shape);
  fill_normal(t, mean, std);
  return t;
}

void Generator::fill_normal(Tensor& t, float mean, float std) {
  NL_CHECK(t.is_contiguous() && t.device() == Device::CPU, "fill_normal: needs a contiguous cpu tensor, got ",
           describe(t));
  float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = mean + std * normal();
}

Tensor Generator::uniform(const Shape& shape, float lo, float hi) {
  Tensor t = Tensor::empty(shape);
  float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = uniform(lo, hi);
  return t;
}

std::vector<uint64_t> Generator::state() const {
  uint32_t bits;
  std::memcpy(&bits, &spare_, 4);
  return {state_, inc_, (uint64_t)has_spare_, bits};
}

void Generator::set_state(const std::vector<uint64_t>& s) {
  NL_CHECK(s.size() == 4 && (s[1] & 1u), "Generator::set_state: not a generator state");
  state_ = s[0];
  inc_ = s[1];
  has_spare_ = s[2] != 0;
  uint32_t bits = (uint32_t)s[3];
  std::memcpy(&spare_, &bits, 4);
}

}  // namespace nl
