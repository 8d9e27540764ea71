// Matrix products, every one through cblas_sgemm, cut into tiles fixed by the shape
// (tensor/cpu/gemm.h: the same bits at any thread count). A transposed view needs no copy:
// a matrix whose last two dims have strides (1, ld) is passed as CblasTrans with
// leading dimension ld. Batch dims broadcast (stride 0); when the right operand has no
// batch of its own and the left one is contiguous, the whole batch folds into one
// sgemm with M = batch * rows (the case of every Linear layer).
#include <algorithm>
#include <vector>

#include "tensor/cpu/check.h"
#include "tensor/cpu/gemm.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"
#include "tensor/strided.h"

namespace nl {
namespace {

// One operand as sgemm sees it: rows x cols of the logical matrix, its layout flag and
// leading dimension, and the strides of its batch dims.
struct Operand {
  Tensor t;                 // the (possibly copied) view holding the data
  int64_t rows, cols;
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};

Operand as_operand(Tensor v) {
  const int nd = v.dim();
  Operand op{v, v.shape()[nd - 2], v.shape()[nd - 1], CblasNoTrans, 0};
  const int64_t sr = v.strides()[nd - 2], sc = v.strides()[nd - 1];
  if ((sc == 1 || op.cols == 1) && (op.rows == 1 || sr >= std::max<int64_t>(op.cols, 1))) {
    op.ld = op.rows == 1 ? std::max<int64_t>(op.cols, 1) : sr;
  } else if ((sr == 1 || op.rows == 1) && (op.cols == 1 || sc >= std::max<int64_t>(op.rows, 1))) {
    op.trans = CblasTrans;
    op.ld = op.cols == 1 ? std::max<int64_t>(op.rows, 1) : sc;
  } else {
    op.t = v.contiguous();
    op.ld = std::max<int64_t>(op.cols, 1);
  }
  return op;
}

Shape batch_of(const Tensor& t) { return Shape(t.shape().begin(), t.shape().end() - 2); }

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in, bool trans_a, bool trans_b) {
  if (on_cuda("matmul", {&a_in, &b_in})) return cuda::matmul(a_in, b_in, trans_a, trans_b);
  return matmul_with_epilogue(a_in, b_in, trans_a, trans_b, {});
}

Tensor matmul_with_epilogue(const Tensor& a_in, const Tensor& b_in, bool trans_a, bool trans_b,
                            const GemmEpilogue& epilogue) {
  check_cpu_f32("matmul", a_in);
  check_cpu_f32("matmul", b_in);
  NL_CHECK(a_in.dim() >= 2 && b_in.dim() >= 2, "matmul: needs matrices (2 or more dims), got ", describe(a_in),
           " and ", describe(b_in));
  Tensor av = trans_a ? a_in.transpose(-1, -2) : a_in;
  Tensor bv = trans_b ? b_in.transpose(-1, -2) : b_in;
  const int64_t M = av.size(-2), K = av.size(-1), N = bv.size(-1);
  NL_CHECK(bv.size(-2) == K, "matmul: inner dims differ: ", describe(av), " @ ", describe(bv),
           trans_a || trans_b ? " (after the requested transposes)" : "");
  Shape batch = broadcast_shapes(batch_of(av), batch_of(bv), "matmul");
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = Tensor::empty(out_shape);
  if (out.numel() == 0) return out;
  if (K == 0) {
    out.fill_(0.0f);
    if (epilogue) epilogue({CblasNoTrans, CblasNoTrans, out.numel() / N, N, 0, 1.0f, nullptr, 1, nullptr, 1, 0.0f,
                            out.data(), N}, 0, 0);
    return out;
  }

  const int64_t batch_n = numel_of(batch);
  bool b_unbatched = true;
  for (size_t i = 0; i + 2 < (size_t)bv.dim(); ++i) b_unbatched &= bv.shape()[i] == 1 || bv.strides()[i] == 0;
  Tensor b_matrix = bv;  // with no batch of its own, b is one matrix: take batch index 0
  if (b_unbatched) while (b_matrix.dim() > 2) b_matrix = b_matrix.slice(0, 0, 1).squeeze(0);
  Operand B = as_operand(b_matrix);
  if (b_unbatched && av.is_contiguous() && batch_of(av) == batch) {
    // fold the batch into the rows: (batch * M, K) @ (K, N)
    const Gemm g{CblasNoTrans, B.trans, batch_n * M, N, K, 1.0f, av.data(), K, B.t.data(), B.ld, 0.0f, out.data(), N};
    sgemm_tiled(&g, 1, epilogue);
    return out;
  }

  Operand A = as_operand(av);
  if (!b_unbatched) B = as_operand(bv);
  // batch strides of each operand over the broadcast batch shape (0 where broadcast)
  auto batch_strides = [&](const Tensor& t) {
    Shape full = batch;
    full.push_back(t.size(-2));
    full.push_back(t.size(-1));
    Tensor e = t.expand(full);
    return Shape(e.strides().begin(), e.strides().end() - 2);
  };
  Shape sa = batch_strides(A.t), sb = b_unbatched ? Shape(batch.size(), 0) : batch_strides(B.t);
  Shape so = contiguous_strides(batch);
  for (auto& s : so) s *= M * N;
  const float* pa = A.t.data();
  const float* pb = B.t.data();
  float* po = out.data();
  Shape run_shape = batch.empty() ? Shape{1} : batch;
  if (batch.empty()) { sa = {0}; sb = {0}; so = {0}; }
  const int64_t ia = sa.back(), ib = sb.back(), io = so.back();
  std::vector<Gemm> products;
  products.reserve((size_t)batch_n);
  for_each_run<3>(run_shape, {&sa, &sb, &so}, {0, 0, 0}, [&](const int64_t* off, int64_t len) {
    for (int64_t i = 0; i < len; ++i)
      products.push_back({A.trans, B.trans, M, N, K, 1.0f, pa + off[0] + i * ia, A.ld, pb + off[1] + i * ib, B.ld,
                          0.0f, po + off[2] + i * io, N});
  });
  sgemm_tiled(products.data(), (int64_t)products.size(), epilogue);
  return out;
}

}  // namespace nl
