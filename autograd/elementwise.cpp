// Elementwise differentiable ops. For broadcasting ops the gradient of an input that
// was broadcast is summed back to its shape (sum_to).
#include <cmath>

#include "autograd/ops.h"

namespace nl::ag {

// d(a+b)/da = 1, d(a+b)/db = 1
Var add(const Var& a, const Var& b) {
  Shape sa = a.shape(), sb = b.shape();
  return record("add", nl::add(a.value(), b.value()), {a, b}, [sa, sb](const Tensor& g) {
    return std::vector<Tensor>{sum_to(g, sa), sum_to(g, sb)};
  });
}

// d(a-b)/da = 1, d(a-b)/db = -1
Var sub(const Var& a, const Var& b) {
  Shape sa = a.shape(), sb = b.shape();
  return record("sub", nl::sub(a.value(), b.value()), {a, b}, [sa, sb](const Tensor& g) {
    return std::vector<Tensor>{sum_to(g, sa), sum_to(nl::neg(g), sb)};
  });
}

// d(ab)/da = b, d(ab)/db = a
Var mul(const Var& a, const Var& b) {
  Tensor av = a.value(), bv = b.value();
  bool ga = a.requires_grad(), gb = b.requires_grad();
  return record("mul", nl::mul(av, bv), {a, b}, [av, bv, ga, gb](const Tensor& g) {
    return std::vector<Tensor>{ga ? sum_to(nl::mul(g, bv), av.shape()) : Tensor(),
                               gb ? sum_to(nl::mul(g, av), bv.shape()) : Tensor()};
  });
}

// d(a/b)/da = 1/b, d(a/b)/db = -a/b^2 = -(a/b)/b
Var div(const Var& a, const Var& b) {
  Tensor av = a.value(), bv = b.value();
  Tensor y = nl::div(av, bv);
  bool ga = a.requires_grad(), gb = b.requires_grad();
  return record("div", y, {a, b}, [av, bv, y, ga, gb](const Tensor& g) {
    Tensor gdb = ga || gb ? nl::div(g, bv) : Tensor();
    return std::vector<Tensor>{ga ? sum_to(gdb, av.shape()) : Tensor(),
                               gb ? sum_to(nl::neg(nl::mul(gdb, y)), bv.shape()) : Tensor()};
  });
}

// d(x+s)/dx = 1
Var add_scalar(const Var& a, float s) {
  Var out = record("add_scalar", nl::add_scalar(a.value(), s), {a}, [](const Tensor& g) {
    return std::vector<Tensor>{g};
  });
  if (out.node()) out.node()->attrs = {s};
  return out;
}

// d(s x)/dx = s
Var mul_scalar(const Var& a, float s) {
  Var out = record("mul_scalar", nl::mul_scalar(a.value(), s), {a}, [s](const Tensor& g) {
    return std::vector<Tensor>{nl::mul_scalar(g, s)};
  });
  if (out.node()) out.node()->attrs = {s};
  return out;
}

// d(x^p)/dx = p x^(p-1)
Var pow_scalar(const Var& a, float p) {
  Tensor x = a.value();
  return record("pow_scalar", nl::pow_scalar(x, p), {a}, [x, p](const Tensor& g) {
    return std::vector<Tensor>{nl::mul(g, nl::mul_scalar(nl::pow_scalar(x, p - 1.0f), p))};
  });
}

// d(-x)/dx = -1
Var neg(const Var& x) {
  return record("neg", nl::neg(x.value()), {x}, [](const Tensor& g) { return std::vector<Tensor>{nl::neg(g)}; });
}

// d|x|/dx = sign(x) (0 at x = 0, as PyTorch)
Var abs(const Var& x) {
  Tensor xv = x.value();
  return record("abs", nl::abs(xv), {x}, [xv](const Tensor& g) { return std::vector<Tensor>{nl::mul(g, sign(xv))}; });
}

// d(e^x)/dx = e^x (the saved output)
Var exp(const Var& x) {
  Tensor y = nl::exp(x.value());
  return record("exp", y, {x}, [y](const Tensor& g) { return std::vector<Tensor>{nl::mul(g, y)}; });
}

// d(log x)/dx = 1/x
Var log(const Var& x) {
  Tensor xv = x.value();
  return record("log", nl::log(xv), {x}, [xv](const Tensor& g) { return std::vector<Tensor>{nl::div(g, xv)}; });
}

// d(sqrt x)/dx = 1 / (2 sqrt x)
Var sqrt(const Var& x) {
  Tensor y = nl::sqrt(x.value());
  return record("sqrt", y, {x}, [y](const Tensor& g) {
    return std::vector<Tensor>{nl::mul_scalar(nl::div(g, y), 0.5f)};
  });
}

// d(x^-1/2)/dx = -1/2 x^-3/2 = -1/2 y^3
Var rsqrt(const Var& x) {
  Tensor y = nl::rsqrt(x.value());
  return record("rsqrt", y, {x}, [y](const Tensor& g) {
    return std::vector<Tensor>{nl::mul(g, nl::mul_scalar(nl::mul(y, nl::mul(y, y)), -0.5f))};
  });
}

// d(tanh x)/dx = 1 - tanh(x)^2
Var tanh(const Var& x) {
  Tensor y = nl::tanh(x.value());
  return record("tanh", y, {x}, [y](const Tensor& g) { return std::vector<Tensor>{tanh_backward(y, g)}; });
}

// d(erf x)/dx = (2 / sqrt(pi)) exp(-x^2)
Var erf(const Var& x) {
  Tensor xv = x.value();
  return record("erf", nl::erf(xv), {x}, [xv](const Tensor& g) {
    const float two_over_sqrt_pi = 1.1283791670955126f;
    return std::vector<Tensor>{nl::mul(g, nl::mul_scalar(nl::exp(nl::neg(nl::mul(xv, xv))), two_over_sqrt_pi))};
  });
}

// relu'(x) = [x > 0]
Var relu(const Var& x) {
  Tensor xv = x.value();
  return record("relu", nl::relu(xv), {x}, [xv](const Tensor& g) { return std::vector<Tensor>{relu_backward(xv, g)}; });
}

// gelu'(x): see gelu_backward in tensor/cpu/elementwise.cpp
Var gelu(const Var& x) {
  Tensor xv = x.value();
  return record("gelu", nl::gelu(xv), {x}, [xv](const Tensor& g) { return std::vector<Tensor>{gelu_backward(xv, g)}; });
}

// silu'(x) = s(x) (1 + x (1 - s(x)))
Var silu(const Var& x) {
  Tensor xv = x.value();
  return record("silu", nl::silu(xv), {x}, [xv](const Tensor& g) { return std::vector<Tensor>{silu_backward(xv, g)}; });
}

}  // namespace nl::ag
