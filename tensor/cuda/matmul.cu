// Matrix products through cuBLAS, as tensor/cpu/matmul.cpp does them through sgemm.
// cuBLAS is column-major: a row-major (rows, cols) matrix with leading dimension ld is,
// to cuBLAS, its transpose. So the row-major C = op(A) op(B) is computed as the
// column-major C^T = op(B)^T op(A)^T: B is passed first, A second, and each operand's
// own transpose flag carries over unchanged. Transposed views need no copy.
// Batches: a right operand without a batch of its own folds the batch into the rows
// (every Linear layer: one sgemm); otherwise batch dims are collapsed where their
// strides allow and each run of the innermost one is one cublasSgemmStridedBatched.
#include <cublas_v2.h>

#include "tensor/cuda/common.cuh"
#include "tensor/cuda/kernels.h"
#include "tensor/strided.h"

namespace nl::cuda {
namespace {

bool g_tf32 = false;

cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t created = nullptr;
    cublasStatus_t s = cublasCreate(&created);
    NL_CHECK(s == CUBLAS_STATUS_SUCCESS, "matmul: cublasCreate failed (status ", (int)s, ")");
    return created;
  }();
  cublasSetMathMode(h, g_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
  return h;
}

void check_blas(const char* op, cublasStatus_t s) {
  NL_CHECK(s == CUBLAS_STATUS_SUCCESS, op, ": cuBLAS call failed (status ", (int)s, ")");
}

// One operand as cuBLAS sees it (same analysis as the CPU's): the logical rows x cols,
// whether the stored matrix is its transpose, and the leading dimension.
struct Operand {
  Tensor t;
  int64_t rows, cols;
  bool trans;
  int64_t ld;
};

Operand as_operand(const Tensor& v) {
  const int nd = v.dim();
  Operand op{v, v.shape()[nd - 2], v.shape()[nd - 1], false, 0};
  const int64_t sr = v.strides()[nd - 2], sc = v.strides()[nd - 1];
  if ((sc == 1 || op.cols == 1) && (op.rows == 1 || sr >= std::max<int64_t>(op.cols, 1))) {
    op.ld = op.rows == 1 ? std::max<int64_t>(op.cols, 1) : sr;
  } else if ((sr == 1 || op.rows == 1) && (op.cols == 1 || sc >= std::max<int64_t>(op.rows, 1))) {
    op.trans = true;
    op.ld = op.cols == 1 ? std::max<int64_t>(op.rows, 1) : sc;
  } else {
    op.t = v.contiguous();
    op.ld = std::max<int64_t>(op.cols, 1);
  }
  return op;
}

cublasOperation_t flag(const Operand& o) { return o.trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

Shape batch_of(const Tensor& t) { return Shape(t.shape().begin(), t.shape().end() - 2); }

// Strides of t's batch dims over the broadcast batch shape (0 where broadcast).
Shape batch_strides(const Tensor& t, const Shape& batch) {
  Shape full = batch;
  full.push_back(t.size(-2));
  full.push_back(t.size(-1));
  const Tensor e = t.expand(full);
  return Shape(e.strides().begin(), e.strides().end() - 2);
}

void check_int(const char* what, int64_t v) {
  NL_CHECK(v >= 0 && v < (1LL << 31), "matmul: ", what, " ", v, " does not fit cuBLAS's int");
}

}  // namespace

void set_tf32(bool on) { g_tf32 = on; }
bool tf32() { return g_tf32; }

Tensor matmul(const Tensor& a_in, const Tensor& b_in, bool trans_a, bool trans_b) {
  check_f32("matmul", a_in);
  check_f32("matmul", b_in);
  NL_CHECK(a_in.dim() >= 2 && b_in.dim() >= 2, "matmul: needs matrices (2 or more dims), got ", describe(a_in),
           " and ", describe(b_in));
  const Tensor av = trans_a ? a_in.transpose(-1, -2) : a_in;
  const Tensor bv = trans_b ? b_in.transpose(-1, -2) : b_in;
  const int64_t M = av.size(-2), K = av.size(-1), N = bv.size(-1);
  NL_CHECK(bv.size(-2) == K, "matmul: inner dims differ: ", describe(av), " @ ", describe(bv),
           trans_a || trans_b ? " (after the requested transposes)" : "");
  const Shape batch = broadcast_shapes(batch_of(av), batch_of(bv), "matmul");
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = Tensor::empty(out_shape, DType::F32, Device::CUDA);
  if (out.numel() == 0) return out;
  if (K == 0) {
    out.fill_(0.0f);
    return out;
  }
  const int64_t batch_n = numel_of(batch);
  check_int("N", N);
  check_int("K", K);
  check_int("M * batch", M * batch_n);
  const float one = 1.0f, zero = 0.0f;
  cublasHandle_t h = handle();

  bool b_unbatched = true;
  for (size_t i = 0; i + 2 < (size_t)bv.dim(); ++i) b_unbatched &= bv.shape()[i] == 1 || bv.strides()[i] == 0;
  Tensor b_matrix = bv;  // with no batch of its own, b is one matrix: batch index 0
  if (b_unbatched)
    while (b_matrix.dim() > 2) b_matrix = b_matrix.slice(0, 0, 1).squeeze(0);
  Operand B = as_operand(b_matrix);
  if (b_unbatched && av.is_contiguous() && batch_of(av) == batch) {
    // (batch * M, K) @ (K, N): the column-major C^T (N x batch*M) = op(B)^T A^T
    check_blas("matmul", cublasSgemm(h, flag(B), CUBLAS_OP_N, (int)N, (int)(batch_n * M), (int)K, &one,
                                     B.t.data(), (int)B.ld, av.data(), (int)K, &zero, out.data(), (int)N));
    return out;
  }

  Operand A = as_operand(av);
  if (!b_unbatched) B = as_operand(bv);
  Shape sa = batch_strides(A.t, batch), sb = b_unbatched ? Shape(batch.size(), 0) : batch_strides(B.t, batch);
  Shape so = contiguous_strides(batch);
  for (auto& s : so) s *= M * N;
  Shape run_shape = batch;
  if (run_shape.empty()) {
    run_shape = {1};
    sa = sb = so = {0};
  }
  // merge batch dim d into d+1 where every operand steps through both as through one
  for (int d = (int)run_shape.size() - 2; d >= 0; --d) {
    const int64_t n1 = run_shape[d + 1];
    if (sa[d] == sa[d + 1] * n1 && sb[d] == sb[d + 1] * n1 && so[d] == so[d + 1] * n1) {
      run_shape[d + 1] *= run_shape[d];
      for (Shape* s : {&run_shape, &sa, &sb, &so}) s->erase(s->begin() + d);
    }
  }
  const float* pa = A.t.data();
  const float* pb = B.t.data();
  float* po = out.data();
  const int64_t ia = sa.back(), ib = sb.back(), io = so.back();
  check_int("batch", run_shape.back());
  for_each_run<3>(run_shape, {&sa, &sb, &so}, {0, 0, 0}, [&](const int64_t* off, int64_t len) {
    check_blas("matmul", cublasSgemmStridedBatched(h, flag(B), flag(A), (int)N, (int)M, (int)K, &one,
                                                   pb + off[1], (int)B.ld, ib, pa + off[0], (int)A.ld, ia, &zero,
                                                   po + off[2], (int)N, io, (int)len));
  });
  return out;
}

void sgemm_direct(const float* a, const float* b, float* c, int64_t M, int64_t N, int64_t K) {
  const float one = 1.0f, zero = 0.0f;
  check_blas("sgemm_direct", cublasSgemm(handle(), CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, b,
                                         (int)N, a, (int)K, &zero, c, (int)N));
}

}  // namespace nl::cuda
