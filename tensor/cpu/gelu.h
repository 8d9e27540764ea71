// GELU's tanh approximation (GPT-2's) and its derivative, one definition for the
// elementwise ops (tensor/cpu/elementwise.cpp) and the linear layer's fused epilogue
// (tensor/cpu/linear.cpp), so that both round alike: a fused and an unfused model give
// the same bits.
#pragma once
#include "tensor/cpu/fast_math.h"

namespace nl::cpu {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

// gelu(x) = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
inline float gelu(float v) {
  float u = kSqrt2OverPi * (v + kGeluCubic * v * v * v);
  return 0.5f * v * (1.0f + fast::tanh(u));
}

// g times d gelu / dx = 0.5 (1 + t) + 0.5 x (1 - t^2) du/dx,  t = tanh(u),
// du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
inline float gelu_grad(float v, float g) {
  float u = kSqrt2OverPi * (v + kGeluCubic * v * v * v);
  float t = fast::tanh(u);
  float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * v * v);
  return g * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du);
}

}  // namespace nl::cpu
