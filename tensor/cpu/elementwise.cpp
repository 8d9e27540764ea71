// Elementwise kernels: binary ops with NumPy broadcasting, scalar ops, unary maps and
// the backward maps of the non-linearities. Contiguous same-shape inputs take a flat
// OpenMP loop; a suffix-broadcast operand (a bias of shape (C) against (N, C)) takes a
// row loop; anything else walks strides through for_each_run.
#include <cmath>

#include "tensor/broadcast.h"
#include "tensor/cpu/check.h"
#include "tensor/cpu/fast_math.h"
#include "tensor/cpu/gelu.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"
#include "tensor/strided.h"
#include "tensor/threads.h"

namespace nl {
namespace {

template <typename F>
Tensor binary(const char* op, const Tensor& a, const Tensor& b, F f) {
  check_cpu_f32(op, a);
  check_cpu_f32(op, b);
  Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  Tensor out = Tensor::empty(shape);
  float* o = out.data();
  const int64_t n = out.numel();
  const float* pa = a.data();
  const float* pb = b.data();
  bool a_full = a.shape() == shape && a.is_contiguous();
  bool b_full = b.shape() == shape && b.is_contiguous();
  if (a_full && b_full) {
#pragma omp parallel for if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) o[i] = f(pa[i], pb[i]);
    return out;
  }
  if (a_full && is_suffix_broadcast(b, shape) && b.numel() > 0) {
    const int64_t inner = b.numel(), rows = n / inner;
#pragma omp parallel for if (n > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < inner; ++j) o[r * inner + j] = f(pa[r * inner + j], pb[j]);
    return out;
  }
  if (b_full && is_suffix_broadcast(a, shape) && a.numel() > 0) {
    const int64_t inner = a.numel(), rows = n / inner;
#pragma omp parallel for if (n > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < inner; ++j) o[r * inner + j] = f(pa[j], pb[r * inner + j]);
    return out;
  }
  Tensor ea = a.expand(shape), eb = b.expand(shape);
  const Shape& sa = ea.strides();
  const Shape& sb = eb.strides();
  const int64_t ia = shape.empty() ? 0 : sa.back(), ib = shape.empty() ? 0 : sb.back();
  int64_t pos = 0;
  for_each_run<2>(shape, {&sa, &sb}, {0, 0}, [&](const int64_t* off, int64_t len) {
    for (int64_t i = 0; i < len; ++i) o[pos + i] = f(pa[off[0] + i * ia], pb[off[1] + i * ib]);
    pos += len;
  });
  return out;
}

template <typename F>
Tensor unary(const char* op, const Tensor& x, F f) {
  check_cpu_f32(op, x);
  Tensor c = x.contiguous();
  Tensor out = Tensor::empty(x.shape());
  const float* p = c.data();
  float* o = out.data();
  const int64_t n = out.numel();
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i) o[i] = f(p[i]);
  return out;
}

// For backward maps: out = f(x, dy) with x and dy of one shape.
template <typename F>
Tensor unary_backward(const char* op, const Tensor& x, const Tensor& dy, F f) {
  check_cpu_f32(op, x);
  check_cpu_f32(op, dy);
  NL_CHECK(x.shape() == dy.shape(), op, ": input ", describe(x), " and gradient ", describe(dy), " differ");
  return binary(op, x, dy, f);
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  if (on_cuda("add", {&a, &b})) return cuda::add(a, b);
  return binary("add", a, b, [](float x, float y) { return x + y; });
}
Tensor sub(const Tensor& a, const Tensor& b) {
  if (on_cuda("sub", {&a, &b})) return cuda::sub(a, b);
  return binary("sub", a, b, [](float x, float y) { return x - y; });
}
Tensor mul(const Tensor& a, const Tensor& b) {
  if (on_cuda("mul", {&a, &b})) return cuda::mul(a, b);
  return binary("mul", a, b, [](float x, float y) { return x * y; });
}
Tensor div(const Tensor& a, const Tensor& b) {
  if (on_cuda("div", {&a, &b})) return cuda::div(a, b);
  return binary("div", a, b, [](float x, float y) { return x / y; });
}
Tensor equal_mask(const Tensor& a, const Tensor& b) {
  if (on_cuda("equal_mask", {&a, &b})) return cuda::equal_mask(a, b);
  return binary("equal_mask", a, b, [](float x, float y) { return x == y ? 1.0f : 0.0f; });
}

Tensor add_scalar(const Tensor& a, float s) {
  if (on_cuda("add_scalar", {&a})) return cuda::add_scalar(a, s);
  return unary("add_scalar", a, [s](float x) { return x + s; });
}
Tensor mul_scalar(const Tensor& a, float s) {
  if (on_cuda("mul_scalar", {&a})) return cuda::mul_scalar(a, s);
  return unary("mul_scalar", a, [s](float x) { return x * s; });
}
Tensor pow_scalar(const Tensor& a, float p) {
  if (on_cuda("pow_scalar", {&a})) return cuda::pow_scalar(a, p);
  return unary("pow_scalar", a, [p](float x) { return std::pow(x, p); });
}

void add_(Tensor& dst, const Tensor& src) {
  if (on_cuda("add_", {&dst, &src})) return cuda::add_(dst, src);
  check_cpu_f32("add_", dst);
  check_cpu_f32("add_", src);
  NL_CHECK(broadcast_shapes(dst.shape(), src.shape(), "add_") == dst.shape(), "add_: cannot add ",
           describe(src), " into ", describe(dst));
  if (dst.is_contiguous() && src.is_contiguous() && src.shape() == dst.shape()) {
    axpy_(dst, 1.0f, src);
    return;
  }
  dst.copy_from(add(dst, src));
}

void axpy_(Tensor& dst, float alpha, const Tensor& src) {
  if (on_cuda("axpy_", {&dst, &src})) return cuda::axpy_(dst, alpha, src);
  check_cpu_f32("axpy_", dst);
  check_cpu_f32("axpy_", src);
  NL_CHECK(dst.shape() == src.shape(), "axpy_: shapes ", to_string(dst.shape()), " and ", to_string(src.shape()),
           " differ");
  NL_CHECK(dst.is_contiguous(), "axpy_: destination must be contiguous, got ", describe(dst));
  Tensor s = src.contiguous();
  float* d = dst.data();
  const float* p = s.data();
  const int64_t n = dst.numel();
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i) d[i] += alpha * p[i];
}

Tensor neg(const Tensor& x) {
  if (on_cuda("neg", {&x})) return cuda::neg(x);
  return unary("neg", x, [](float v) { return -v; });
}
Tensor abs(const Tensor& x) {
  if (on_cuda("abs", {&x})) return cuda::abs(x);
  return unary("abs", x, [](float v) { return std::fabs(v); });
}
Tensor sign(const Tensor& x) {
  if (on_cuda("sign", {&x})) return cuda::sign(x);
  return unary("sign", x, [](float v) { return (float)((v > 0.0f) - (v < 0.0f)); });
}
Tensor exp(const Tensor& x) {
  if (on_cuda("exp", {&x})) return cuda::exp(x);
  return unary("exp", x, [](float v) { return fast::exp(v); });
}
Tensor log(const Tensor& x) {
  if (on_cuda("log", {&x})) return cuda::log(x);
  return unary("log", x, [](float v) { return std::log(v); });
}
Tensor sqrt(const Tensor& x) {
  if (on_cuda("sqrt", {&x})) return cuda::sqrt(x);
  return unary("sqrt", x, [](float v) { return std::sqrt(v); });
}
Tensor rsqrt(const Tensor& x) {
  if (on_cuda("rsqrt", {&x})) return cuda::rsqrt(x);
  return unary("rsqrt", x, [](float v) { return 1.0f / std::sqrt(v); });
}
Tensor tanh(const Tensor& x) {
  if (on_cuda("tanh", {&x})) return cuda::tanh(x);
  return unary("tanh", x, [](float v) { return fast::tanh(v); });
}
Tensor erf(const Tensor& x) {
  if (on_cuda("erf", {&x})) return cuda::erf(x);
  return unary("erf", x, [](float v) { return std::erf(v); });
}
Tensor relu(const Tensor& x) {
  if (on_cuda("relu", {&x})) return cuda::relu(x);
  return unary("relu", x, [](float v) { return v > 0.0f ? v : 0.0f; });
}
Tensor silu(const Tensor& x) {
  if (on_cuda("silu", {&x})) return cuda::silu(x);
  return unary("silu", x, [](float v) { return v / (1.0f + fast::exp(-v)); });
}

// gelu(x) = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3): tensor/cpu/gelu.h
Tensor gelu(const Tensor& x) {
  if (on_cuda("gelu", {&x})) return cuda::gelu(x);
  return unary("gelu", x, [](float v) { return cpu::gelu(v); });
}

// d gelu / dx: tensor/cpu/gelu.h
Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  if (on_cuda("gelu_backward", {&x, &dy})) return cuda::gelu_backward(x, dy);
  return unary_backward("gelu_backward", x, dy, [](float v, float g) { return cpu::gelu_grad(v, g); });
}

// silu(x) = x s(x), s the logistic sigmoid:  d/dx = s (1 + x (1 - s))
Tensor silu_backward(const Tensor& x, const Tensor& dy) {
  if (on_cuda("silu_backward", {&x, &dy})) return cuda::silu_backward(x, dy);
  return unary_backward("silu_backward", x, dy, [](float v, float g) {
    float s = 1.0f / (1.0f + fast::exp(-v));
    return g * s * (1.0f + v * (1.0f - s));
  });
}

// relu'(x) = 1 for x > 0, else 0 (0 at the kink, as PyTorch)
Tensor relu_backward(const Tensor& x, const Tensor& dy) {
  if (on_cuda("relu_backward", {&x, &dy})) return cuda::relu_backward(x, dy);
  return unary_backward("relu_backward", x, dy, [](float v, float g) { return v > 0.0f ? g : 0.0f; });
}

// tanh'(x) = 1 - tanh(x)^2, written with the saved output y
Tensor tanh_backward(const Tensor& y, const Tensor& dy) {
  if (on_cuda("tanh_backward", {&y, &dy})) return cuda::tanh_backward(y, dy);
  return unary_backward("tanh_backward", y, dy, [](float t, float g) { return g * (1.0f - t * t); });
}

}  // namespace nl
