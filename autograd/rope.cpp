// Rotary position embeddings as a differentiable op (kernels: tensor/cpu/rope.cpp).
#include "autograd/ops.h"

namespace nl::ag {

// y = R(a) x on each rotated channel pair (u, w) of x (B, T, W), the angle a set by the
// token's position and the pair's frequency (tensor/ops.h, rope_forward):
//   y_u = u cos a - w sin a,  y_w = u sin a + w cos a
// so dL/du = dL/dy_u cos a + dL/dy_w sin a and dL/dw = -dL/dy_u sin a + dL/dy_w cos a:
//   dL/dx = R(a)^T dL/dy = R(-a) dL/dy,  the inverse rotation (rope_backward);
// the channels past `rotated` pass dL/dy through unchanged.
Var rope(const Var& x, int64_t head_dim, int64_t rotated, int64_t first_position, float base) {
  NL_CHECK(x.defined(), "rope: x is undefined");
  const Tensor xv = x.value().contiguous();
  Tensor y = rope_forward(xv, head_dim, rotated, first_position, base);
  return record("rope", y, {x}, [head_dim, rotated, first_position, base](const Tensor& g) {
    return std::vector<Tensor>{rope_backward(g.contiguous(), head_dim, rotated, first_position, base)};
  });
}

}  // namespace nl::ag
