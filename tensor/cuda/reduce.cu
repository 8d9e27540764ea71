// Reductions over any set of axes, laid out as in tensor/cpu/reduce.cpp (reduce_plan.h):
// the reduced axes last, one row of `inner` elements per output element. Stage one
// splits each row into a fixed number of segments (it depends on the shape only, so
// results are the same bits run to run), one block per segment, reduced with warp
// shuffles in double; stage two adds a row's segments in order and scales.
// Sums over the leading axes of a contiguous tensor (bias gradients) read it in place,
// one thread per column, instead of transposing it first.
#include "tensor/cuda/common.cuh"
#include "tensor/cuda/kernels.h"
#include "tensor/reduce_plan.h"

namespace nl::cuda {
namespace {

enum class Kind { Sum, SumSquaredDeviation, Max };

// Block (segment s = blockIdx.y, row r = blockIdx.x) reduces in[r, s*seg : (s+1)*seg].
// SumSquaredDeviation sums (x - centre[r])^2 (the second pass of var).
template <Kind K>
__global__ void reduce_rows_kernel(const float* in, int64_t inner, int64_t seg, const float* centre,
                                   double* partial) {
  const int64_t r = blockIdx.x, s = blockIdx.y, splits = gridDim.y;
  const float* row = in + r * inner;
  const int64_t begin = s * seg, end = min(inner, begin + seg);
  double acc = K == Kind::Max ? -INFINITY : 0.0;
  const float c = K == Kind::SumSquaredDeviation ? centre[r] : 0.0f;
  for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
    const float v = row[j];
    if (K == Kind::Sum) acc += v;
    if (K == Kind::SumSquaredDeviation) acc += ((double)v - c) * ((double)v - c);
    if (K == Kind::Max) acc = (float)nan_max((float)acc, v);
  }
  double total;
  if (K == Kind::Max) total = block_max((float)acc);
  else total = block_sum(acc);
  if (threadIdx.x == 0) partial[r * splits + s] = total;
}

// out[r] = scale * (sum or max over the segments of row r, in segment order)
template <Kind K>
__global__ void finish_rows_kernel(const double* partial, int64_t rows, int64_t splits, double scale, float* out) {
  NL_GRID_STRIDE_LOOP(r, rows) {
    double acc = partial[r * splits];
    for (int64_t s = 1; s < splits; ++s) {
      const double v = partial[r * splits + s];
      if (K == Kind::Max) acc = (acc != acc || v != v) ? NAN : fmax(acc, v);
      else acc += v;
    }
    out[r] = (float)(K == Kind::Max ? acc : acc * scale);
  }
}

// Column sums of a contiguous (n_rows, cols) matrix: block (32 columns x 8 row lanes),
// blockIdx.y picks a slice of rows; partial (slices, cols).
constexpr int kColLanes = 8;
__global__ void reduce_cols_kernel(const float* in, int64_t n_rows, int64_t cols, int64_t rows_per_slice,
                                   double* partial) {
  __shared__ double lanes[kColLanes][33];
  const int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
  const int64_t begin = (int64_t)blockIdx.y * rows_per_slice, end = min(n_rows, begin + rows_per_slice);
  double acc = 0.0;
  if (col < cols)
    for (int64_t i = begin + threadIdx.y; i < end; i += kColLanes) acc += in[i * cols + col];
  lanes[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    double total = 0.0;
    for (int k = 0; k < kColLanes; ++k) total += lanes[k][threadIdx.x];  // fixed order
    partial[(int64_t)blockIdx.y * cols + col] = total;
  }
}

__global__ void finish_cols_kernel(const double* partial, int64_t slices, int64_t cols, double scale, float* out) {
  NL_GRID_STRIDE_LOOP(j, cols) {
    double acc = 0.0;
    for (int64_t s = 0; s < slices; ++s) acc += partial[s * cols + j];
    out[j] = (float)(acc * scale);
  }
}

// Segments per row: about 16k elements each, at most 1024.
int64_t row_splits(int64_t inner) { return std::min<int64_t>(1024, std::max<int64_t>(1, (inner + 16383) / 16384)); }

Tensor double_scratch(int64_t n) { return Tensor::empty({2 * n}, DType::F32, Device::CUDA); }  // 8 bytes each
double* as_doubles(const Tensor& t) { return reinterpret_cast<double*>(t.data()); }

// rows x inner contiguous -> out (rows), out = scale * reduction
template <Kind K>
void reduce_rows(const char* op, const Tensor& rows_view, int64_t rows, int64_t inner, double scale,
                 const float* centre, float* out) {
  if (rows == 0) return;
  const int64_t splits = row_splits(inner), seg = (inner + splits - 1) / splits;
  NL_CHECK(rows < (1LL << 31), op, ": too many rows for the cuda reduction: ", rows);
  Tensor scratch = double_scratch(rows * splits);
  reduce_rows_kernel<K><<<dim3((unsigned)rows, (unsigned)splits), row_threads(seg)>>>(
      rows_view.data(), inner, seg, centre, as_doubles(scratch));
  check_launch(op);
  finish_rows_kernel<K><<<grid_for(rows), kThreads>>>(as_doubles(scratch), rows, splits, scale, out);
  check_launch(op);
}

// x reduced over `axes` into (sum * scale); the column path when the plan allows it
Tensor scaled_sum(const char* op, const Tensor& x, const ReducePlan& p, double scale) {
  Tensor out = Tensor::empty(p.out_shape, DType::F32, Device::CUDA);
  if (out.numel() == 0) return out;
  if (p.inner == 0) {
    out.fill_(0.0f);
    return out;
  }
  if (p.leading_only && x.is_contiguous() && p.rows > 1) {
    const int64_t cols = p.rows, n_rows = p.inner;
    const int64_t slices = std::min<int64_t>(64, std::max<int64_t>(1, n_rows / 64));
    const int64_t per_slice = (n_rows + slices - 1) / slices;
    Tensor scratch = double_scratch(slices * cols);
    reduce_cols_kernel<<<dim3((unsigned)((cols + 31) / 32), (unsigned)slices), dim3(32, kColLanes)>>>(
        x.data(), n_rows, cols, per_slice, as_doubles(scratch));
    check_launch(op);
    finish_cols_kernel<<<grid_for(cols), kThreads>>>(as_doubles(scratch), slices, cols, scale, out.data());
    check_launch(op);
    return out;
  }
  Tensor r = rows_layout(x, p);
  reduce_rows<Kind::Sum>(op, r, p.rows, p.inner, scale, nullptr, out.data());
  return out;
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  check_f32("sum", x);
  return scaled_sum("sum", x, plan_reduce("sum", x, axes, keepdim), 1.0);
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  check_f32("mean", x);
  ReducePlan p = plan_reduce("mean", x, axes, keepdim);
  NL_CHECK(p.inner > 0, "mean: reducing ", describe(x), " over an empty axis");
  return scaled_sum("mean", x, p, 1.0 / (double)p.inner);
}

Tensor max(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  check_f32("max", x);
  ReducePlan p = plan_reduce("max", x, axes, keepdim);
  NL_CHECK(p.inner > 0, "max: reducing ", describe(x), " over an empty axis");
  Tensor out = Tensor::empty(p.out_shape, DType::F32, Device::CUDA);
  Tensor r = rows_layout(x, p);
  reduce_rows<Kind::Max>("max", r, p.rows, p.inner, 1.0, nullptr, out.data());
  return out;
}

// var = sum (x - mean)^2 / (n - correction): the mean first, then the deviations about it
Tensor var(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim, int correction) {
  check_f32("var", x);
  ReducePlan p = plan_reduce("var", x, axes, keepdim);
  NL_CHECK(p.inner - correction > 0, "var: ", p.inner, " elements per group are too few for correction ",
           correction, " (", describe(x), ")");
  Tensor out = Tensor::empty(p.out_shape, DType::F32, Device::CUDA);
  Tensor r = rows_layout(x, p);
  Tensor mu = Tensor::empty({p.rows}, DType::F32, Device::CUDA);
  reduce_rows<Kind::Sum>("var", r, p.rows, p.inner, 1.0 / (double)p.inner, nullptr, mu.data());
  reduce_rows<Kind::SumSquaredDeviation>("var", r, p.rows, p.inner, 1.0 / (double)(p.inner - correction),
                                         mu.data(), out.data());
  return out;
}

}  // namespace nl::cuda
