// A linear layer's product with its epilogue (tensor/ops.h, linear_forward):
//   pre = x w^T + b,  out = gelu(pre), r + pre, or pre.
// The product is nl::matmul's, tile by tile (tensor/cpu/gemm.h); each tile gets its bias
// and GELU, or its residual r, on the thread that computed it, right after its sgemm,
// instead of an add, a gelu or a residual add that would each stream the whole (M, N)
// output through memory again.
// The backward's elementwise part, from dout:
//   dpre = dout * gelu'(pre)  (tensor/cpu/gelu.h),  db_j = sum_i dpre_ij,
// both in one pass over dpre; dx = dpre w and dw = dpre^T x are products (autograd/linear.cpp);
// dr = dout.
// Every float operation is the one the composite matmul + add + gelu (or + add) does, in
// the same order: the sgemm's sum, then + b_j, then gelu or r +; db summed down each
// column from row 0 in double as sum() does. So a model gives the same bits fused or not,
// and each element is one tile's or one column block's at any thread count.
#include <algorithm>

#include "tensor/cpu/check.h"
#include "tensor/cpu/column_sums.h"
#include "tensor/cpu/gelu.h"
#include "tensor/cpu/gemm.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"
#include "tensor/threads.h"

namespace nl {

LinearForward linear_forward(const Tensor& x, const Tensor& w, const Tensor& b, Activation act,
                             const Tensor& residual) {
  NL_CHECK(x.defined() && w.defined() && x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1),
           "linear: needs x (M, K) and w (N, K), got ", describe(x), " and ", describe(w));
  const int64_t M = x.size(0), N = w.size(0);
  NL_CHECK(!b.defined() || (b.dim() == 1 && b.size(0) == N), "linear: the bias ", describe(b), " is not (", N,
           ") for the weight ", describe(w));
  const bool gelu = act == Activation::Gelu;
  NL_CHECK(!residual.defined() || !gelu, "linear: a residual ", describe(residual), " cannot follow a GELU");
  NL_CHECK(!residual.defined() || (residual.shape() == Shape{M, N}), "linear: the residual ", describe(residual),
           " is not the output's shape (", M, ", ", N, ")");
  if (on_cuda("linear", {&x, &w, &b, &residual})) {  // no fused CUDA kernel: the composite
    Tensor pre = matmul(x, w, false, true);
    if (b.defined()) pre = add(pre, b);
    if (residual.defined()) return {Tensor(), add(residual, pre)};
    return {pre, gelu ? nl::gelu(pre) : pre};
  }
  if (b.defined()) check_cpu_f32("linear", b);
  if (residual.defined()) check_cpu_f32("linear", residual);
  const Tensor bias = b.defined() ? b.contiguous() : b;
  const Tensor rows = residual.defined() ? residual.contiguous() : residual;
  const float* pb = b.defined() ? bias.data() : nullptr;
  const float* pr = residual.defined() ? rows.data() : nullptr;
  Tensor out = gelu ? Tensor::empty({M, N}) : Tensor();
  float* po = gelu ? out.data() : nullptr;
  // tile (rows x cols at (i0, j0) of pre, row stride ldc): z = z + b_j, then y = gelu(z),
  // or z = r_ij + z
  auto epilogue = [pb, pr, po, N](const Gemm& tile, int64_t i0, int64_t j0) {
    for (int64_t i = 0; i < tile.m; ++i) {
      float* z = tile.c + i * tile.ldc;
      const float* bj = pb ? pb + j0 : nullptr;
      if (po) {
        float* y = po + (i0 + i) * N + j0;
        if (bj) {
          for (int64_t j = 0; j < tile.n; ++j) {
            const float v = z[j] + bj[j];
            z[j] = v;
            y[j] = cpu::gelu(v);
          }
        } else {
          for (int64_t j = 0; j < tile.n; ++j) y[j] = cpu::gelu(z[j]);
        }
      } else if (pr) {
        const float* r = pr + (i0 + i) * N + j0;
        if (bj) {
          for (int64_t j = 0; j < tile.n; ++j) z[j] = r[j] + (z[j] + bj[j]);
        } else {
          for (int64_t j = 0; j < tile.n; ++j) z[j] = r[j] + z[j];
        }
      } else if (bj) {
        for (int64_t j = 0; j < tile.n; ++j) z[j] = z[j] + bj[j];
      }
    }
  };
  Tensor pre = matmul_with_epilogue(x, w, false, true, pb || po || pr ? GemmEpilogue(epilogue) : GemmEpilogue());
  // with a residual, pre's storage holds r + pre: only the GELU's derivative reads pre
  return {residual.defined() ? Tensor() : pre, gelu ? out : pre};
}

LinearEpilogueGrads linear_epilogue_backward(const Tensor& pre, const Tensor& dout, Activation act, bool want_db) {
  NL_CHECK(dout.defined() && dout.dim() == 2, "linear backward: the gradient ", describe(dout), " is not (M, N)");
  const int64_t M = dout.size(0), N = dout.size(1);
  // without the GELU: dpre is dout, and db add's backward (sum_to) itself
  if (act == Activation::None) return {dout, want_db ? sum_to(dout, {N}) : Tensor()};
  NL_CHECK(pre.defined() && pre.shape() == dout.shape(), "linear backward: the saved input ", describe(pre),
           " and the gradient ", describe(dout), " differ");
  if (!want_db || on_cuda("linear_backward", {&pre, &dout})) {
    Tensor dpre = gelu_backward(pre, dout);
    return {dpre, want_db ? sum_to(dpre, {N}) : Tensor()};
  }
  check_cpu_f32("linear_backward", pre);
  check_cpu_f32("linear_backward", dout);
  const Tensor z = pre.contiguous(), g = dout.contiguous();
  Tensor dpre = Tensor::empty({M, N}), db = Tensor::empty({N});
  const float* pz = z.data();
  const float* pg = g.data();
  float* pd = dpre.data();
  float* pdb = db.data();
  // columns in blocks (tensor/cpu/column_sums.h), each block's rows in order: every db_j is
  // one thread's, summed as sum() does. Per row, dpre's piece is written and then added up
  // while in L1: two loops that each vectorise.
  cpu::for_column_blocks(N, M * N > kParallelGrain, [&](int64_t j0, int64_t j1, double* acc) {
    for (int64_t i = 0; i < M; ++i) {
      const float* z = pz + i * N;
      const float* g = pg + i * N;
      float* d = pd + i * N;
      for (int64_t j = j0; j < j1; ++j) d[j] = cpu::gelu_grad(z[j], g[j]);
      for (int64_t j = j0; j < j1; ++j) acc[j - j0] += d[j];
    }
    for (int64_t j = j0; j < j1; ++j) pdb[j] = (float)acc[j - j0];
  });
  return {dpre, db};
}

}  // namespace nl
