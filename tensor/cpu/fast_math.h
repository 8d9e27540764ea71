// exp and tanh written so that the compiler can vectorise loops over them (glibc's
// expf/tanhf are calls the vectoriser cannot see through: tanhf alone was 30 % of a
// training step of the demo GPT, inside GELU). Both stay within a few float ulps of
// the correctly rounded result over the whole float range; tests/tensor/
// test_fast_math.cpp measures it against double-precision std::exp / std::tanh.
#pragma once
#include <cstdint>
#include <cstring>

namespace nl::fast {

// e^x = 2^n e^r with n = round(x / ln 2), |r| <= ln(2)/2; e^r by its Taylor polynomial
// of degree 7 (truncation error below 1e-8 relative on that interval).
inline float exp(float x) {
  const float in = x;
  x = x < -86.5f ? -86.5f : (x > 88.7228f ? 88.7228f : x);
  const float n = __builtin_roundf(x * 1.44269504088896341f);
  // ln 2 split in two so that n * ln2_hi is exact
  const float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723212e-6f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n as 2 * 2^(n-1), so that n = 128 (x near 88.7) still fits the exponent field
  const int32_t bits = ((int32_t)n + 126) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const float y = p * 2.0f * scale;
  // below e^-86.5 (about 2.6e-38) the result is at most a few denormals: call it 0;
  // above the float range it is inf; NaN stays NaN
  return in < -86.5f ? 0.0f : (in > 88.7228f ? __builtin_inff() : (in != in ? in : y));
}

// tanh(x): near 0 its odd Taylor series (through x^13, error < 1e-7 relative for
// |x| < 0.5); elsewhere (1 - e^{-2|x|}) / (1 + e^{-2|x|}), which has no cancellation
// there, with the sign put back. Both branches are computed and one is selected, so
// the loop has no branch.
inline float tanh(float x) {
  const float a = x < 0.0f ? -x : x;
  const float x2 = x * x;
  float s = 21844.0f / 6081075.0f;
  s = s * x2 - 1382.0f / 155925.0f;
  s = s * x2 + 62.0f / 2835.0f;
  s = s * x2 - 17.0f / 315.0f;
  s = s * x2 + 2.0f / 15.0f;
  s = s * x2 - 1.0f / 3.0f;
  s = s * x2 + 1.0f;
  const float small = x * s;
  const float e = nl::fast::exp(-2.0f * a);
  const float big = (1.0f - e) / (1.0f + e);
  const float signed_big = x < 0.0f ? -big : big;
  return a < 0.5f ? small : signed_big;
}

}  // namespace nl::fast
