// exp and tanh written so that the compiler can vectorise loops over them (glibc's
// expf/tanhf are calls the vectoriser cannot see through). Both stay within a few
// float ulps of the true result; tests/tensor/test_norm_kernels.cpp ("fast tanh") and
// tests/tensor/test_elementwise.cpp measure them against double-precision std::tanh.
#pragma once
#include <cstdint>
#include <cstring>

namespace nl::fast {

// e^x = 2^n e^r with n = round(x / ln 2), |r| <= ln(2)/2; e^r by its Taylor polynomial
// of degree 7 (truncation error below 1e-8 relative on that interval).
inline float exp(float x) {
  const float in = x;
  x = x < -86.5f ? -86.5f : (x > 88.7228f ? 88.7228f : x);
  x = in != in ? 0.0f : x;  // NaN: compute anything finite (the result is replaced below)
  // round to nearest by adding and subtracting 1.5 * 2^23 (roundf itself does not
  // vectorise: SIMD rounding has no halves-away-from-zero mode)
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
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
  const uint32_t bits = (uint32_t)((int32_t)n + 126) << 23;  // n + 126 >= 1 after the clamp
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const float y = p * 2.0f * scale;
  // below e^-86.5 (about 2.6e-38) the result is at most a few denormals: call it 0;
  // above the float range it is inf; NaN stays NaN
  return in < -86.5f ? 0.0f : (in > 88.7228f ? __builtin_inff() : (in != in ? in : y));
}

// tanh(x): within 3 ulp of the true value (relative error
// below 2e-7) for every float, and written so that the compiler vectorises loops over
// it; std::tanh is a library call per element, which made DyT several times slower than
// LayerNorm, and GELU's tanh was 30 % of a demo training step. With e = expm1(-2|x|) in (-1, 0],
//   tanh|x| = (1 - exp(-2|x|)) / (1 + exp(-2|x|)) = -e / (2 + e),
// and expm1 keeps full relative accuracy for small |x|, where 1 - exp(-2|x|) would cancel.
// expm1(r) = 2^n (expm1(f) + 1) - 1 with r = n ln2 + f, |f| <= ln2/2 (ln2 split into a
// short head, exact times n, and a tail), and expm1(f) by its Taylor series to f^8
// (the next term is below 2e-9 of it). The tail of tanh is flat: |x| is capped at 20,
// where tanh is 1 in float. The sign of x is copied on, and a NaN stays a NaN; both by
// integer operations on the bits, because a branch or a float select would stop the
// vectoriser.
inline float tanh(float x) {
  uint32_t xbits;
  std::memcpy(&xbits, &x, sizeof xbits);
  const uint32_t abs_bits = xbits & 0x7fffffffu;
  const uint32_t capped = abs_bits < 0x41a00000u ? abs_bits : 0x41a00000u;  // min(|x|, 20): 0x41a00000 is 20.0f
  float ax;
  std::memcpy(&ax, &capped, sizeof ax);
  const float r = -2.0f * ax;
  const int32_t n = (int32_t)(r * 1.44269504f - 0.5f);  // nearest integer to r / ln2 (r <= 0)
  const float k = (float)n;
  const float f = (r - k * 0.693145751953125f) - k * 1.42860677e-6f;
  float p = 1.0f / 40320.0f;
  p = p * f + 1.0f / 5040.0f;
  p = p * f + 1.0f / 720.0f;
  p = p * f + 1.0f / 120.0f;
  p = p * f + 1.0f / 24.0f;
  p = p * f + 1.0f / 6.0f;
  p = p * f + 0.5f;
  p = p * f + 1.0f;
  p = p * f;  // expm1(f)
  const int32_t scale_bits = (n + 127) << 23;  // 2^n, n in [-58, 0]
  float scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  const float e = scale * p + (scale - 1.0f);  // expm1(r)
  const float t = -e / (2.0f + e);
  uint32_t tbits;
  std::memcpy(&tbits, &t, sizeof tbits);
  tbits = (tbits & 0x7fffffffu) | (xbits & 0x80000000u);
  tbits |= (0u - (uint32_t)(abs_bits > 0x7f800000u)) & 0x7fc00000u;  // NaN in, NaN out
  float y;
  std::memcpy(&y, &tbits, sizeof y);
  return y;
}

}  // namespace nl::fast
