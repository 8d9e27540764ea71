// The backward engine itself (autograd/var.cpp): accumulation, no-grad, detach, explicit
// upstream gradients, deep graphs, the errors it raises, and freeing saved state.
#include <catch2/catch.hpp>

#include <vector>

#include "autograd/ops.h"
#include "autograd/var.h"
#include "tensor/allocator.h"
#include "tests/test_util.h"

using Catch::Contains;
using nl::Shape;
using nl::Tensor;
using nl::Var;
namespace ag = nl::ag;

namespace {

Tensor T(const std::vector<float>& v, const Shape& s) { return Tensor::from_vector(v, s); }

}  // namespace

TEST_CASE("autograd a Var used twice accumulates its gradients", "[autograd]") {
  Var x(T({1, 2, -3}, {3}), true);
  // d/dx sum(x * x) = 2x
  ag::sum(ag::mul(x, x)).backward();
  CHECK_CLOSE(x.grad(), T({2, 4, -6}, {3}), 0, 0);

  // d/dx sum(x + x) = 2
  Var y(T({5, 6}, {2}), true);
  ag::sum(ag::add(y, y)).backward();
  CHECK_CLOSE(y.grad(), T({2, 2}, {2}), 0, 0);

  // a diamond: a = 2x, b = 3x, sum(a * b) = 6 x^2, derivative 12 x
  Var z(T({1, -0.5f}, {2}), true);
  Var a = ag::mul_scalar(z, 2.0f), b = ag::mul_scalar(z, 3.0f);
  ag::sum(ag::mul(a, b)).backward();
  CHECK_CLOSE(z.grad(), T({12, -6}, {2}), 0, 0);

  // an intermediate used by two later ops: u = x^2 (as x*x), out = sum(u * u) = sum x^4, derivative 4 x^3
  Var w(T({1, 2}, {2}), true);
  Var u = ag::mul(w, w);
  ag::sum(ag::mul(u, u)).backward();
  CHECK_CLOSE(w.grad(), T({4, 32}, {2}), 0, 0);
}

TEST_CASE("autograd leaf grads accumulate across backward calls and zero_grad clears them", "[autograd]") {
  Var x(T({1, 2, 3}, {3}), true);
  ag::sum(ag::mul_scalar(x, 3.0f)).backward();
  CHECK_CLOSE(x.grad(), T({3, 3, 3}, {3}), 0, 0);
  ag::sum(ag::mul(x, x)).backward();  // adds 2x
  CHECK_CLOSE(x.grad(), T({5, 7, 9}, {3}), 0, 0);
  x.zero_grad();
  CHECK_CLOSE(x.grad(), Tensor::zeros({3}), 0, 0);
  ag::sum(x).backward();
  CHECK_CLOSE(x.grad(), T({1, 1, 1}, {3}), 0, 0);
  // zero_grad on a Var that never had a gradient is harmless
  Var fresh(T({1}, {1}), true);
  CHECK_NOTHROW(fresh.zero_grad());
}

TEST_CASE("autograd leaf gradient does not alias the upstream tensor", "[autograd]") {
  Var x(T({1, 2}, {2}), true);
  Tensor up = T({1, 1}, {2});
  ag::add_scalar(x, 0.0f).backward(up);
  ag::add_scalar(x, 0.0f).backward(up);
  // accumulating into x.grad must not have written into `up`
  CHECK_CLOSE(up, T({1, 1}, {2}), 0, 0);
  CHECK_CLOSE(x.grad(), T({2, 2}, {2}), 0, 0);
}

TEST_CASE("autograd NoGradGuard records nothing", "[autograd]") {
  Var x(T({1, 2}, {2}), true);
  CHECK(nl::grad_enabled());
  {
    nl::NoGradGuard guard;
    CHECK_FALSE(nl::grad_enabled());
    Var y = ag::mul(x, x);
    CHECK(y.node() == nullptr);
    CHECK_FALSE(y.requires_grad());
    CHECK_CLOSE(y.value(), T({1, 4}, {2}), 0, 0);
    {
      nl::NoGradGuard nested;
      CHECK_FALSE(nl::grad_enabled());
    }
    CHECK_FALSE(nl::grad_enabled());  // the inner guard restores the outer state
  }
  CHECK(nl::grad_enabled());
  Var y = ag::mul(x, x);
  REQUIRE(y.node() != nullptr);
  CHECK(y.requires_grad());
}

TEST_CASE("autograd inputs that need no gradient get none", "[autograd]") {
  Var x(T({1, 2}, {2}), true);
  Var c(T({3, 4}, {2}));  // a constant
  Var y = ag::mul(x, c);
  CHECK(y.requires_grad());
  ag::sum(y).backward();
  CHECK_CLOSE(x.grad(), T({3, 4}, {2}), 0, 0);
  CHECK_FALSE(c.grad().defined());
  // an op on constants only is a constant
  Var k = ag::mul(c, c);
  CHECK_FALSE(k.requires_grad());
  CHECK(k.node() == nullptr);
}

TEST_CASE("autograd detach cuts the graph", "[autograd]") {
  Var x(T({1, 2, 3}, {3}), true);
  Var y = ag::mul_scalar(x, 2.0f);
  Var d = y.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.node() == nullptr);
  CHECK(d.value().shares_storage(y.value()));
  // z = d * x: with d a constant 2x, dz/dx = d = 2x (not 4x as without the detach)
  ag::sum(ag::mul(d, x)).backward();
  CHECK_CLOSE(x.grad(), T({2, 4, 6}, {3}), 0, 0);
}

TEST_CASE("autograd backward with an explicit upstream gradient", "[autograd]") {
  Var x(T({1, 2, 3, 4, 5, 6}, {2, 3}), true);
  Var w(T({10, 20, 30}, {3}), true);
  Var y = ag::mul(x, w);
  y.backward(T({1, 0, -1, 2, 0.5f, 0}, {2, 3}));
  // dx = G * w, dw = sum over rows of G * x
  CHECK_CLOSE(x.grad(), T({10, 0, -30, 20, 10, 0}, {2, 3}), 0, 0);
  CHECK_CLOSE(w.grad(), T({1 * 1 + 2 * 4, 0 * 2 + 0.5f * 5, -1 * 3 + 0 * 6}, {3}), 0, 0);
  // a one-element value takes an upstream gradient too
  Var s(T({2}, {1}), true);
  ag::mul(s, s).backward(T({3}, {1}));
  CHECK_CLOSE(s.grad(), T({12}, {1}), 0, 0);
}

TEST_CASE("autograd backward of a leaf writes the upstream gradient into it", "[autograd]") {
  Var x(T({1, 2}, {2}), true);
  x.backward(T({3, 4}, {2}));
  CHECK_CLOSE(x.grad(), T({3, 4}, {2}), 0, 0);
}

TEST_CASE("autograd a deep chain of 10000 ops backward does not overflow the stack", "[autograd]") {
  Var x(T({0.5f}, {1}), true);
  Var y = x;
  const int depth = 10000;
  for (int i = 0; i < depth; ++i) y = ag::add(y, x);  // y = (depth + 1) x
  y.backward();
  CHECK(x.grad().item() == (float)(depth + 1));
  // a chain of unary ops: d/dx of ((x + 1) + 1) ... = 1
  Var z(T({0.0f}, {1}), true);
  Var c = z;
  for (int i = 0; i < depth; ++i) c = ag::mul_scalar(ag::add_scalar(c, 1.0f), 1.0f);
  c.backward();
  CHECK(c.item() == (float)depth);
  CHECK(z.grad().item() == 1.0f);
}

TEST_CASE("autograd backward on a non-scalar without an upstream gradient throws", "[autograd]") {
  Var x(T({1, 2, 3, 4, 5, 6}, {2, 3}), true);
  Var y = ag::mul_scalar(x, 2.0f);
  REQUIRE_THROWS_AS(y.backward(), nl::Error);
  REQUIRE_THROWS_WITH(y.backward(), Contains("backward") && Contains("(2, 3)"));
  // a wrong-shaped upstream gradient is refused too
  REQUIRE_THROWS_WITH(y.backward(Tensor::ones({3, 2})), Contains("backward") && Contains("(3, 2)") &&
                                                           Contains("(2, 3)"));
  // and so is backward from a value that needs no gradient
  Var c(T({1}, {1}));
  REQUIRE_THROWS_WITH(c.backward(), Contains("backward"));
}

TEST_CASE("autograd backward twice through a freed graph throws", "[autograd]") {
  Var x(T({1, 2}, {2}), true);
  Var y = ag::sum(ag::mul(x, x));
  y.backward();
  REQUIRE_THROWS_AS(y.backward(), nl::Error);
  REQUIRE_THROWS_WITH(y.backward(), Contains("already freed"));
  // the freed part shared by a second loss: the message names the freed op
  Var w(T({1, 2}, {2}), true);
  Var u = ag::exp(w);
  Var a = ag::sum(u), b = ag::sum(ag::mul_scalar(u, 2.0f));
  a.backward();
  REQUIRE_THROWS_WITH(b.backward(), Contains("already freed") && Contains("exp"));
}

TEST_CASE("autograd retain_graph allows a second backward", "[autograd]") {
  Var x(T({1, 2}, {2}), true);
  Var y = ag::sum(ag::mul(x, x));
  y.backward(true);
  CHECK_CLOSE(x.grad(), T({2, 4}, {2}), 0, 0);
  CHECK_FALSE(y.node()->released);
  y.backward();
  CHECK_CLOSE(x.grad(), T({4, 8}, {2}), 0, 0);
  CHECK(y.node()->released);
  // the shared-subgraph case: keep the graph for the first loss, then use it for a second
  Var w(T({0, 1}, {2}), true);
  Var u = ag::exp(w);
  Var a = ag::sum(u), b = ag::sum(ag::mul_scalar(u, 2.0f));
  a.backward(true);
  b.backward();
  // d/dw (sum e^w + 2 sum e^w) = 3 e^w
  CHECK_CLOSE(w.grad(), T({3, 3 * 2.718281828459045f}, {2}), 1e-6, 0);
}

TEST_CASE("autograd an op recorded with record_no_backward throws naming the op", "[autograd]") {
  Var x(T({1, 2}, {2}), true);
  Var y = nl::record_no_backward("argmax_like", x.value().clone(), {x});
  REQUIRE(y.node() != nullptr);
  CHECK_FALSE(y.node()->has_backward);
  CHECK(y.requires_grad());
  Var loss = ag::sum(ag::mul(y, x));
  REQUIRE_THROWS_AS(loss.backward(), nl::Error);
  REQUIRE_THROWS_WITH(ag::sum(y).backward(), Contains("argmax_like") && Contains("backward"));
  // with recording off it is a plain constant
  nl::NoGradGuard guard;
  Var z = nl::record_no_backward("argmax_like", x.value().clone(), {x});
  CHECK(z.node() == nullptr);
}

TEST_CASE("autograd an op whose backward returns a wrong-shaped gradient throws", "[autograd]") {
  Var x(T({1, 2, 3}, {3}), true);
  Var y = nl::record("bad_shape_op", x.value().clone(), {x},
                     [](const Tensor& g) { return std::vector<Tensor>{Tensor::zeros({7})}; });
  REQUIRE_THROWS_AS(ag::sum(y).backward(), nl::Error);
  REQUIRE_THROWS_WITH(ag::sum(y).backward(), Contains("bad_shape_op") && Contains("(7,)") && Contains("(3,)"));
  // too few gradients for the inputs is refused as well
  Var w(T({1}, {1}), true);
  Var z = nl::record("bad_count_op", nl::add(x.value(), w.value()), {x, w},
                     [](const Tensor& g) { return std::vector<Tensor>{g}; });
  REQUIRE_THROWS_WITH(ag::sum(z).backward(), Contains("bad_count_op"));
}

TEST_CASE("autograd records the op name, inputs and output in its node", "[autograd]") {
  Var x(T({1, 2}, {2}), true), c(T({3, 4}, {2}));
  Var y = ag::mul(x, c);
  REQUIRE(y.node() != nullptr);
  CHECK(y.node()->op == "mul");
  REQUIRE(y.node()->inputs.size() == 2);
  CHECK(y.node()->inputs[0] == x.impl());
  CHECK(y.node()->inputs[1] == c.impl());
  CHECK(y.node()->output.lock() == y.impl());
  CHECK(y.node()->has_backward);
  CHECK_FALSE(y.node()->released);
  CHECK(x.node() == nullptr);
}

TEST_CASE("autograd saved tensors are freed after backward", "[autograd]") {
  const int64_t big_n = 1 << 20;  // 4 MiB of float32
  Var x(T({1, 2}, {2}), true);
  Var y;
  int64_t before = 0;
  {
    Tensor big = Tensor::ones({big_n});
    // the closure is the only holder of `big` once this scope ends
    y = nl::record("holds_big", x.value().clone(), {x}, [big](const Tensor& g) {
      return std::vector<Tensor>{nl::mul_scalar(g, big.data()[0])};
    });
  }
  before = nl::allocator_stats(nl::Device::CPU).in_use_bytes;
  Var loss = ag::sum(y);
  loss.backward();
  CHECK_CLOSE(x.grad(), T({1, 1}, {2}), 0, 0);
  CHECK(y.node()->released);
  CHECK_FALSE(y.node()->backward);
  CHECK(loss.node()->released);
  const int64_t after = nl::allocator_stats(nl::Device::CPU).in_use_bytes;
  INFO("in use before backward " << before << ", after " << after);
  CHECK(after <= before - big_n * 4 + 65536);
}

TEST_CASE("autograd retain_graph keeps the saved tensors", "[autograd]") {
  Var x(T({1, 2}, {2}), true);
  Var y = ag::exp(x);
  Var loss = ag::sum(y);
  loss.backward(true);
  CHECK_FALSE(y.node()->released);
  CHECK(static_cast<bool>(y.node()->backward));
  loss.backward(false);
  CHECK(y.node()->released);
  CHECK_FALSE(y.node()->backward);
}

TEST_CASE("autograd graph memory is returned once the Vars go away", "[autograd]") {
  Var x(Tensor::ones({1000}), true);
  x.grad() = Tensor::zeros({1000});  // allocate the gradient up front: it outlives the graph
  const int64_t base = nl::allocator_stats(nl::Device::CPU).in_use_bytes;
  {
    Var h = x;
    for (int i = 0; i < 20; ++i) h = ag::tanh(ag::mul_scalar(h, 0.9f));
    ag::sum(h).backward();
  }
  CHECK(nl::allocator_stats(nl::Device::CPU).in_use_bytes == base);
}

TEST_CASE("autograd destroys a graph of 300000 ops without recursing once per op", "[autograd]") {
  // Before Node::~Node unlinked its inputs iteratively, dropping such a chain
  // overflowed the 8 MB stack (a segfault that would take this whole binary down).
  nl::Var x(nl::Tensor::ones({2}), true);
  {
    nl::Var y = x;
    for (int i = 0; i < 300000; ++i) y = nl::ag::add_scalar(y, 1.0f);
    CHECK(y.value().at({0}) == 300001.0f);
  }
  CHECK(x.defined());
}
