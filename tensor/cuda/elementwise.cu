// Elementwise kernels: binary ops with NumPy broadcasting, scalar ops, unary maps and
// the backward maps of the non-linearities; the same formulas as tensor/cpu/elementwise.cpp
// (with CUDA's expf/tanhf in place of the CPU's polynomial fast::exp/fast::tanh).
// Same-shape contiguous inputs take a flat loop, a bias-like operand (a contiguous
// suffix of the output shape) a loop with one modulo, anything else the strided walk.
#include "tensor/broadcast.h"
#include "tensor/cuda/common.cuh"
#include "tensor/cuda/kernels.h"

namespace nl::cuda {
namespace {

// ---- kernels

template <typename F>
__global__ void binary_flat(const float* a, const float* b, float* o, int64_t n, F f) {
  NL_GRID_STRIDE_LOOP(i, n) o[i] = f(a[i], b[i]);
}

// one operand full, the other repeating every `inner` elements; small_is_b says which
template <typename F>
__global__ void binary_rows(const float* full, const float* small, float* o, int64_t n, int64_t inner,
                            bool small_is_b, F f) {
  NL_GRID_STRIDE_LOOP(i, n) {
    const float s = small[i % inner];
    o[i] = small_is_b ? f(full[i], s) : f(s, full[i]);
  }
}

template <typename F>
__global__ void binary_strided(const float* a, Strided sa, const float* b, Strided sb, float* o, int64_t n, F f) {
  NL_GRID_STRIDE_LOOP(i, n) o[i] = f(a[sa.offset(i)], b[sb.offset(i)]);
}

template <typename F>
__global__ void unary_flat(const float* x, float* o, int64_t n, F f) {
  NL_GRID_STRIDE_LOOP(i, n) o[i] = f(x[i]);
}

__global__ void axpy_kernel(float* d, float alpha, const float* s, int64_t n) {
  NL_GRID_STRIDE_LOOP(i, n) d[i] += alpha * s[i];
}

// ---- the formulas (derivatives as in tensor/cpu/elementwise.cpp)

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

struct Add { __device__ float operator()(float x, float y) const { return x + y; } };
struct Sub { __device__ float operator()(float x, float y) const { return x - y; } };
struct Mul { __device__ float operator()(float x, float y) const { return x * y; } };
struct Div { __device__ float operator()(float x, float y) const { return x / y; } };
struct Equal { __device__ float operator()(float x, float y) const { return x == y ? 1.0f : 0.0f; } };

struct AddScalar { float s; __device__ float operator()(float x) const { return x + s; } };
struct MulScalar { float s; __device__ float operator()(float x) const { return x * s; } };
struct PowScalar { float p; __device__ float operator()(float x) const { return powf(x, p); } };
struct Neg { __device__ float operator()(float v) const { return -v; } };
struct Abs { __device__ float operator()(float v) const { return fabsf(v); } };
struct Sign { __device__ float operator()(float v) const { return (float)((v > 0.0f) - (v < 0.0f)); } };
struct Exp { __device__ float operator()(float v) const { return expf(v); } };
struct Log { __device__ float operator()(float v) const { return logf(v); } };
struct Sqrt { __device__ float operator()(float v) const { return sqrtf(v); } };
struct Rsqrt { __device__ float operator()(float v) const { return 1.0f / sqrtf(v); } };
struct Tanh { __device__ float operator()(float v) const { return tanhf(v); } };
struct Erf { __device__ float operator()(float v) const { return erff(v); } };
struct Relu { __device__ float operator()(float v) const { return v > 0.0f ? v : 0.0f; } };
struct Silu { __device__ float operator()(float v) const { return v / (1.0f + expf(-v)); } };

// gelu(x) = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
struct Gelu {
  __device__ float operator()(float v) const {
    const float u = kSqrt2OverPi * (v + kGeluCubic * v * v * v);
    return 0.5f * v * (1.0f + tanhf(u));
  }
};
// d gelu / dx = 0.5 (1 + t) + 0.5 x (1 - t^2) du/dx,  du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
struct GeluBackward {
  __device__ float operator()(float v, float g) const {
    const float u = kSqrt2OverPi * (v + kGeluCubic * v * v * v);
    const float t = tanhf(u);
    const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * v * v);
    return g * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du);
  }
};
// silu' = s (1 + x (1 - s)), s the logistic sigmoid
struct SiluBackward {
  __device__ float operator()(float v, float g) const {
    const float s = 1.0f / (1.0f + expf(-v));
    return g * s * (1.0f + v * (1.0f - s));
  }
};
struct ReluBackward { __device__ float operator()(float v, float g) const { return v > 0.0f ? g : 0.0f; } };
// tanh' = 1 - y^2 from the saved output y
struct TanhBackward { __device__ float operator()(float t, float g) const { return g * (1.0f - t * t); } };

// ---- launchers

template <typename F>
Tensor binary(const char* op, const Tensor& a, const Tensor& b, F f) {
  check_f32(op, a);
  check_f32(op, b);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  Tensor out = Tensor::empty(shape, DType::F32, Device::CUDA);
  const int64_t n = out.numel();
  if (n == 0) return out;
  const bool a_full = a.shape() == shape && a.is_contiguous();
  const bool b_full = b.shape() == shape && b.is_contiguous();
  if (a_full && b_full) {
    binary_flat<<<grid_for(n), kThreads>>>(a.data(), b.data(), out.data(), n, f);
  } else if (a_full && is_suffix_broadcast(b, shape)) {
    binary_rows<<<grid_for(n), kThreads>>>(a.data(), b.data(), out.data(), n, b.numel(), true, f);
  } else if (b_full && is_suffix_broadcast(a, shape)) {
    binary_rows<<<grid_for(n), kThreads>>>(b.data(), a.data(), out.data(), n, a.numel(), false, f);
  } else {
    const Tensor ea = a.expand(shape), eb = b.expand(shape);
    binary_strided<<<grid_for(n), kThreads>>>(ea.data(), make_strided(op, ea), eb.data(), make_strided(op, eb),
                                              out.data(), n, f);
  }
  check_launch(op);
  return out;
}

template <typename F>
Tensor unary(const char* op, const Tensor& x, F f) {
  check_f32(op, x);
  const Tensor c = x.contiguous();
  Tensor out = Tensor::empty(x.shape(), DType::F32, Device::CUDA);
  const int64_t n = out.numel();
  if (n == 0) return out;
  unary_flat<<<grid_for(n), kThreads>>>(c.data(), out.data(), n, f);
  check_launch(op);
  return out;
}

template <typename F>
Tensor unary_backward(const char* op, const Tensor& x, const Tensor& dy, F f) {
  check_f32(op, x);
  check_f32(op, dy);
  NL_CHECK(x.shape() == dy.shape(), op, ": input ", describe(x), " and gradient ", describe(dy), " differ");
  return binary(op, x, dy, f);
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) { return binary("add", a, b, Add{}); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary("sub", a, b, Sub{}); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary("mul", a, b, Mul{}); }
Tensor div(const Tensor& a, const Tensor& b) { return binary("div", a, b, Div{}); }
Tensor equal_mask(const Tensor& a, const Tensor& b) { return binary("equal_mask", a, b, Equal{}); }

Tensor add_scalar(const Tensor& a, float s) { return unary("add_scalar", a, AddScalar{s}); }
Tensor mul_scalar(const Tensor& a, float s) { return unary("mul_scalar", a, MulScalar{s}); }
Tensor pow_scalar(const Tensor& a, float p) { return unary("pow_scalar", a, PowScalar{p}); }

void add_(Tensor& dst, const Tensor& src) {
  check_f32("add_", dst);
  check_f32("add_", src);
  NL_CHECK(broadcast_shapes(dst.shape(), src.shape(), "add_") == dst.shape(), "add_: cannot add ", describe(src),
           " into ", describe(dst));
  if (dst.is_contiguous() && src.is_contiguous() && src.shape() == dst.shape()) {
    cuda::axpy_(dst, 1.0f, src);
    return;
  }
  dst.copy_from(nl::add(dst, src));
}

void axpy_(Tensor& dst, float alpha, const Tensor& src) {
  check_f32("axpy_", dst);
  check_f32("axpy_", src);
  NL_CHECK(dst.shape() == src.shape(), "axpy_: shapes ", to_string(dst.shape()), " and ", to_string(src.shape()),
           " differ");
  NL_CHECK(dst.is_contiguous(), "axpy_: destination must be contiguous, got ", describe(dst));
  const Tensor s = src.contiguous();
  const int64_t n = dst.numel();
  if (n == 0) return;
  axpy_kernel<<<grid_for(n), kThreads>>>(dst.data(), alpha, s.data(), n);
  check_launch("axpy_");
}

Tensor neg(const Tensor& x) { return unary("neg", x, Neg{}); }
Tensor abs(const Tensor& x) { return unary("abs", x, Abs{}); }
Tensor sign(const Tensor& x) { return unary("sign", x, Sign{}); }
Tensor exp(const Tensor& x) { return unary("exp", x, Exp{}); }
Tensor log(const Tensor& x) { return unary("log", x, Log{}); }
Tensor sqrt(const Tensor& x) { return unary("sqrt", x, Sqrt{}); }
Tensor rsqrt(const Tensor& x) { return unary("rsqrt", x, Rsqrt{}); }
Tensor tanh(const Tensor& x) { return unary("tanh", x, Tanh{}); }
Tensor erf(const Tensor& x) { return unary("erf", x, Erf{}); }
Tensor relu(const Tensor& x) { return unary("relu", x, Relu{}); }
Tensor gelu(const Tensor& x) { return unary("gelu", x, Gelu{}); }
Tensor silu(const Tensor& x) { return unary("silu", x, Silu{}); }
Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  return unary_backward("gelu_backward", x, dy, GeluBackward{});
}
Tensor silu_backward(const Tensor& x, const Tensor& dy) {
  return unary_backward("silu_backward", x, dy, SiluBackward{});
}
Tensor relu_backward(const Tensor& x, const Tensor& dy) {
  return unary_backward("relu_backward", x, dy, ReluBackward{});
}
Tensor tanh_backward(const Tensor& y, const Tensor& dy) {
  return unary_backward("tanh_backward", y, dy, TanhBackward{});
}

}  // namespace nl::cuda
