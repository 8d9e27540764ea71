// Fused attention, forward and backward (declared with its shapes in tensor/ops.h):
// the flash-attention algorithm, block-wise over keys with an online softmax, so that
// no (T, S) matrix of scores or probabilities ever exists.
//
// Queries and keys of one (batch, head) are cut into tiles of kTile rows.
// Forward, per query tile: a running row maximum m, a running sum l of exp(s - m) and an
// unnormalised output O. Each key tile's scores s = scale q.k raise m where they exceed
// it (O and l are first rescaled by exp(m_old - m_new)), then exp(s - m) is added to l
// and exp(s - m) v to O. At the end out = O / l and lse = m + log l: only out and lse
// are kept, O(T hd) memory instead of O(T S).
// Backward: the probabilities are recomputed per (query tile, key tile) pair from lse,
// P = exp(s - lse); the formulas are above attention_backward.
// Causal: a key tile that lies wholly after a query tile's last visible key is never
// computed; on a tile pair that crosses the diagonal only the visible part is computed
// (in blocks of 4 rows) and masked.
//
// Scores are computed transposed, St = K Q^T (one row per key, one column per query of
// the tile), so that the softmax statistics of a query tile are vector operations across
// its query rows, and each query's running sum adds its keys one at a time in key order.
//
// Inner products (product() below): one cblas_sgemm call per product of a tile pair that
// is wholly visible, register-blocked SIMD loops that skip the masked part on a pair that
// crosses the causal diagonal; the measurements that chose this are above product().
//
// Threads: one OpenMP parallel region per call. The forward's work items are
// (batch, head, query tile). The backward's are (batch, head) pairs, each doing all of
// its head's gradients in one pass, when there are at least as many pairs as threads;
// with fewer pairs, a first loop over (batch, head, key tile) makes dk and dv and a
// second over (batch, head, query tile) makes dq, which recomputes the probabilities
// once more but keeps every thread busy. Every gradient element is summed by one thread,
// in the same order on both paths (dk, dv over query tiles in order; dq over key tiles
// in order), with no atomics: the results are the same bits for any thread count.
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cmath>

#include "tensor/attention_shapes.h"
#include "tensor/cpu/check.h"
#include "tensor/cpu/fast_math.h"
#include "tensor/cpu/gemm.h"
#include "tensor/cuda/kernels.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"
#include "tensor/threads.h"

namespace nl {
namespace {

constexpr int64_t kTile = 64;  // query rows and keys per tile

// ---- inner products: out (rows x n) = or += x (rows x depth) @ m (depth x n). x(a, k)
// sits at x[a * xa + k * xk] with xk == 1 (x stored row by row) or xa == 1 (stored
// transposed), so that one product reads a tile either way round; m has row stride
// ldm, out row stride ldo.

// The SIMD loops: kRows rows and kWidth columns (a power of two), the rows x width
// accumulators in registers, each row of m loaded once for all the rows.
template <int kRows, int kWidth, bool kAdd>
inline void product_block(int64_t depth, const float* x, int64_t xa, int64_t xk, const float* m, int64_t ldm,
                          float* out, int64_t ldo) {
  float acc[kRows][kWidth];
  for (int a = 0; a < kRows; ++a)
#pragma omp simd
    for (int j = 0; j < kWidth; ++j) acc[a][j] = kAdd ? out[a * ldo + j] : 0.0f;
  for (int64_t k = 0; k < depth; ++k) {
    const float* mk = m + k * ldm;
    for (int a = 0; a < kRows; ++a) {
      const float xv = x[a * xa + k * xk];
#pragma omp simd
      for (int j = 0; j < kWidth; ++j) acc[a][j] += xv * mk[j];
    }
  }
  for (int a = 0; a < kRows; ++a)
#pragma omp simd
    for (int j = 0; j < kWidth; ++j) out[a * ldo + j] = acc[a][j];
}

// Columns in blocks of kWidth, what is left in blocks of half that width, and so on down
// to 1: head dims such as 12 or 8 stay vectorised.
template <int kRows, int kWidth, bool kAdd>
void product_rows(int64_t n, int64_t depth, const float* x, int64_t xa, int64_t xk, const float* m, int64_t ldm,
                  float* out, int64_t ldo) {
  int64_t j = 0;
  for (; j + kWidth <= n; j += kWidth) product_block<kRows, kWidth, kAdd>(depth, x, xa, xk, m + j, ldm, out + j, ldo);
  if constexpr (kWidth > 1)
    if (j < n) product_rows<kRows, kWidth / 2, kAdd>(n - j, depth, x, xa, xk, m + j, ldm, out + j, ldo);
}

// Which part of a product a tile pair needs. Query r of the pair sees key c when
// r >= first + c (Geometry::first_row); on a pair that crosses the causal diagonal the
// other entries are masked, and the product skips them a block of rows at a time
// (rows a .. a + h - 1):
//   kQueryRowsKeyDepth     rows are queries, depth keys: rows a.. need keys c < a + h - first;
//   kKeyRowsQueryDepth     rows are keys, depth queries: keys a.. need queries r >= first + a;
//   kKeyRowsQueryColumns   rows are keys, columns queries: keys a.. need the columns from
//                          first + a rounded down to a vector; the columns before are left
//                          as they were (the caller overwrites them with the mask).
// Entries inside a block that one of its rows may not see are masked to 0 by the caller,
// so they add exact zeros: which block height runs changes no result.
enum class Band { kQueryRowsKeyDepth, kKeyRowsQueryDepth, kKeyRowsQueryColumns };

// product_rows for a block of r rows, r from 1 to kRows
template <int kRows, int kWidth, bool kAdd>
void product_block_rows(int64_t r, int64_t n, int64_t depth, const float* x, int64_t xa, int64_t xk, const float* m,
                        int64_t ldm, float* out, int64_t ldo) {
  if constexpr (kRows > 1)
    if (r < kRows) return product_block_rows<kRows - 1, kWidth, kAdd>(r, n, depth, x, xa, xk, m, ldm, out, ldo);
  product_rows<kRows, kWidth, kAdd>(n, depth, x, xa, xk, m, ldm, out, ldo);
}

// The visible part of a pair that crosses the diagonal, kBlock rows at a time: kBlock x
// kWidth accumulators. Taller blocks load each row of m for more rows and pay the
// accumulators' loads and stores less often. With AVX-512 (32 registers of 16 floats):
// from 4-row blocks everywhere to 6 x 64 (24 registers) for products 64 wide and 8 x 32
// (16 registers) for narrower ones, bench_gpt's tiny step (1 thread, Zen 4) spent
// 7.1-7.3 -> 6.2-6.6 ms in the attention core; 12 x 32 was slower again. Without AVX-512
// (16 registers of 8 floats) the blocks stay 4 rows high, as they were measured.
#ifdef __AVX512F__
constexpr int kWideBlock = 6, kNarrowBlock = 8;
#else
constexpr int kWideBlock = 4, kNarrowBlock = 4;
#endif

template <int kBlock, int kWidth, bool kAdd>
void product_band(int64_t rows, int64_t n, int64_t depth, const float* x, int64_t xa, int64_t xk, const float* m,
                  int64_t ldm, float* out, int64_t ldo, Band band, int64_t first) {
  for (int64_t a = 0; a < rows; a += kBlock) {
    const int64_t r = std::min<int64_t>(kBlock, rows - a);
    int64_t k0 = 0, k1 = depth, j0 = 0;
    if (band == Band::kQueryRowsKeyDepth) k1 = std::clamp<int64_t>(a + r - first, 0, depth);
    if (band == Band::kKeyRowsQueryDepth) k0 = std::clamp<int64_t>(first + a, 0, depth);
    if (band == Band::kKeyRowsQueryColumns) j0 = std::clamp<int64_t>(first + a, 0, n) / 16 * 16;
    if (k1 <= k0 || j0 >= n) continue;  // the block sees nothing of this tile
    product_block_rows<kBlock, kWidth, kAdd>(r, n - j0, k1 - k0, x + a * xa + k0 * xk, xa, xk, m + k0 * ldm + j0,
                                             ldm, out + a * ldo + j0, ldo);
  }
}

// A pair wholly below the diagonal (or without a mask) is one cblas_sgemm call; a pair
// that crosses it, SIMD loops over the visible part. Measured on the kernels alone
// (attention_forward + attention_backward, causal unless said, contiguous inputs, one
// thread, best of 5 runs taken in turn, load average 3.5), with every product through
// the SIMD loops / through sgemm / split as here,
// tiny heads (B 16, H 4, hd 32) at T = 64:  1.41 / 1.60 / 1.42 ms (every pair is diagonal);
//                                  T = 256: 18.5 / 16.6 / 15.8 ms;
// small heads (B 8, H 6, hd 64)   at T = 256: 23.3 / 21.5 / 20.5 ms;
//                                  T = 1024: 326 / 268 / 275 ms;
// ViT heads (B 128, H 4, hd 12, not causal) at T = 17: 3.31 / 1.45 / 1.45 ms.
// On a full tile OpenBLAS's packed kernel beats the loops (which GCC feeds with one load
// per FMA); on a diagonal one the loops win by skipping the masked half, which sgemm
// cannot. (The loops had the same column blocks down to 16 and a scalar tail then.)
template <bool kAdd>
void product(int64_t rows, int64_t n, int64_t depth, const float* x, int64_t xa, int64_t xk, const float* m,
             int64_t ldm, float* out, int64_t ldo, Band band, int64_t first) {
  if (rows == 0 || n == 0 || depth == 0) return;
  const int64_t keys = band == Band::kQueryRowsKeyDepth ? depth : rows;
  if (first + keys - 1 <= 0) {  // query 0 of the pair sees its last key: nothing is masked
    const bool by_rows = xk == 1;
    // one thread: a region whose `if` is false must not let OpenBLAS split a tile its own way
    sgemm_one_thread({by_rows ? CblasNoTrans : CblasTrans, CblasNoTrans, rows, n, depth, 1.0f, x, by_rows ? xa : xk, m,
                      ldm, kAdd ? 1.0f : 0.0f, out, ldo});
    return;
  }
  if (n <= 32)
    product_band<kNarrowBlock, 32, kAdd>(rows, n, depth, x, xa, xk, m, ldm, out, ldo, band, first);
  else
    product_band<kWideBlock, 64, kAdd>(rows, n, depth, x, xa, xk, m, ldm, out, ldo, band, first);
}

// ---- operands and geometry

// A (B, H, rows, hd) operand as the kernels read it (Float = const float) or write it
// (float): row r of head (b, h) starts at rows(b, h) + r * row_stride, and its hd values
// are contiguous. Strided views with a contiguous head dim and rows that do not overlap
// (the qkv projection's head views, a slice of a key/value cache) are read in place, as
// sgemm can; anything else is copied once. Outputs given to the kernels are written in
// place under the same conditions (attention_qkv's merged output and dqkv).
template <class Float>
struct Rows {
  Tensor keep;  // holds the storage (the copy, when one was made)
  Float* base;
  int64_t batch_stride, head_stride, row_stride;
  Float* rows(int64_t b, int64_t h) const { return base + b * batch_stride + h * head_stride; }
};
using HeadRows = Rows<const float>;
using HeadRowsOut = Rows<float>;

bool rows_in_place(const Tensor& t) {
  const int64_t rows = t.size(2), hd = t.size(3);
  return (hd == 1 || t.strides()[3] == 1) && (rows == 1 || t.strides()[2] >= hd);
}

template <class Float>
Rows<Float> rows_of(const Tensor& t) {
  // a single row's stride is never followed; sgemm still wants it at least hd
  const int64_t rows = t.size(2), hd = t.size(3);
  return {t, t.data(), t.strides()[0], t.strides()[1], rows == 1 ? hd : t.strides()[2]};
}

HeadRows head_rows(const Tensor& t) { return rows_of<const float>(rows_in_place(t) ? t : t.contiguous()); }

// An output of this shape: `into` when given (checked: its head dim contiguous, its rows
// and heads apart), else a new contiguous tensor.
HeadRowsOut output_rows(const char* op, const Tensor& into, const Shape& shape) {
  if (!into.defined()) return rows_of<float>(Tensor::empty(shape));
  check_cpu_f32(op, into);
  NL_CHECK(into.shape() == shape, op, ": the output ", describe(into), " is not ", to_string(shape));
  const bool apart = (shape[0] == 1 || into.strides()[0] != 0) && (shape[1] == 1 || into.strides()[1] != 0);
  NL_CHECK(rows_in_place(into) && apart, op, ": the output ", describe(into),
           " needs a contiguous head dim and rows and heads that do not overlap");
  return rows_of<float>(into);
}

// A result the CUDA kernels made, copied into `into` when one is given, and then that.
void place_into(Tensor& result, const Tensor& into) {
  if (!into.defined()) return;
  Tensor target = into;
  target.copy_from(result);
  result = target;
}

struct Geometry {
  int64_t B, H, T, S, hd;
  float scale;
  bool causal;
  int64_t query_tiles() const { return (T + kTile - 1) / kTile; }
  int64_t key_tiles() const { return (S + kTile - 1) / kTile; }
  // Query row i sits at position i + S - T: causal, it sees keys 0 .. i + S - T.
  int64_t last_key(int64_t i) const { return causal ? i + S - T : S - 1; }
  // Key tiles a query tile of `rows` rows from i0 sees: 0 .. this - 1.
  int64_t key_tiles_seen(int64_t i0, int64_t rows) const { return last_key(i0 + rows - 1) / kTile + 1; }
  // The first query tile with a row that sees key j0.
  int64_t first_query_tile(int64_t j0) const { return causal ? std::max<int64_t>(0, j0 - (S - T)) / kTile : 0; }
  // Query row r of the tile at i0 sees key c of the tile at j0 when r >= first_row(...) + c.
  int64_t first_row(int64_t i0, int64_t j0) const { return causal ? j0 - (S - T) - i0 : -kTile; }
  bool parallel() const { return B * H * T * S * hd > kParallelGrain; }
};

Geometry check_inputs(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                      bool causal) {
  check_cpu_f32(op, q);
  check_cpu_f32(op, k);
  check_cpu_f32(op, v);
  const AttentionShape s = check_attention_shapes(op, q, k, v, causal);
  return {s.B, s.H, s.T, s.S, s.hd, scale, causal};
}

int thread_index() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

// Per-thread scratch in one tensor from the caching allocator, slices 64-byte aligned.
struct Scratch {
  Scratch(int threads, int64_t floats_per_thread)
      : stride((floats_per_thread + 15) / 16 * 16), buffer(Tensor::empty({threads * stride})) {}
  float* mine() const { return buffer.data() + thread_index() * stride; }
  int64_t stride;
  Tensor buffer;
};

// dst (hd x kTile) = the rows x hd block at src (row stride rs) transposed; the columns
// past `rows` are zero.
void transpose_tile(const float* src, int64_t rs, int64_t rows, int64_t hd, float* dst) {
  for (int64_t d = 0; d < hd; ++d) {
    float* col = dst + d * kTile;
    for (int64_t r = 0; r < rows; ++r) col[r] = src[r * rs + d];
    for (int64_t r = rows; r < kTile; ++r) col[r] = 0.0f;
  }
}

// The vector width the score columns of a query tile of `rows` queries are computed to.
int64_t score_columns(int64_t rows) { return std::min(kTile, (rows + 15) / 16 * 16); }

// ---- compact keys and values
// The training step hands the kernels strided head views: row r of a head at r * 3C floats
// in the qkv projection's output. For C = 128 those rows are 1536 bytes apart, and the rows
// of q, k and v all fall into the same 16 of a 32 KiB 8-way L1's 64 sets, so a head's tiles
// evict one another while the products run over them again and again. So the backward,
// whose inputs earlier ops have pushed out to memory by then, first copies a head's keys
// and values, which its score products and dq read, into contiguous per-thread rows, when
// they are strided and small enough. (The forward reads the qkv product's output while it
// is still in cache, and copying there made the tiny step slower; copying q and dout as
// well did not help either.) Only where the operands sit changes, not what is added in
// which order: the results are the same bits.
// Measured on the tiny step (hd 32, T 64; a Zen 4 with a 32 KiB 8-way L1): the attention
// core 7.7-8.2 -> 7.1-7.4 ms (bench_gpt --breakdown first, docs/performance.md). The small
// model's heads (hd 64, T 256: S hd = 16384) are copied too; that was not timed on its own.
constexpr int64_t kCompactFloats = 16384;  // S hd of the largest head copied: 2 x 64 KiB

bool compact_kv(const Geometry& g, const HeadRows& k, const HeadRows& v) {
  return g.S * g.hd <= kCompactFloats && (k.row_stride != g.hd || v.row_stride != g.hd);
}

// dst (rows x hd, contiguous) = the rows at src (row stride rs)
void gather_rows(const float* src, int64_t rs, int64_t rows, int64_t hd, float* dst) {
  for (int64_t r = 0; r < rows; ++r) std::copy(src + r * rs, src + r * rs + hd, dst + r * hd);
}

// Head (b, h) of t copied to `into`, as an operand whose every head is that copy
// (rows(b', h') is the copy for any b', h': callers ask only for (b, h)).
HeadRows compact_copy(const HeadRows& t, int64_t b, int64_t h, int64_t rows, int64_t hd, float* into) {
  gather_rows(t.rows(b, h), t.row_stride, rows, hd, into);
  return {Tensor(), into, 0, 0, hd};
}

// ---- forward

// One query tile of one head: rows queries from i0.
void forward_tile(const Geometry& g, const HeadRows& q, const HeadRows& k, const HeadRows& v, int64_t b,
                  int64_t h, int64_t i0, const HeadRowsOut& out, float* lse, float* scratch) {
  const int64_t rows = std::min(kTile, g.T - i0), cols = score_columns(rows), hd = g.hd;
  float* qt = scratch;                 // (hd, kTile): the query tile transposed
  float* st = qt + hd * kTile;         // (kTile, kTile): scores, then probabilities, one row per key
  float* m = st + kTile * kTile;       // (kTile) running maximum per query
  float* l = m + kTile;                // (kTile) running sum of exp(s - m)
  float* grown = l + kTile;            // (kTile) the new maximum, then the factor exp(m_old - m_new)
  const float *kh = k.rows(b, h), *vh = v.rows(b, h);
  transpose_tile(q.rows(b, h) + i0 * q.row_stride, q.row_stride, rows, hd, qt);
  const int64_t os = out.row_stride;
  float* o = out.rows(b, h) + i0 * os;  // (rows, hd), row stride os: the unnormalised output, in place
  for (int64_t r = 0; r < rows; ++r) std::fill(o + r * os, o + r * os + hd, 0.0f);
  std::fill(m, m + kTile, -INFINITY);
  std::fill(l, l + kTile, 0.0f);
  const int64_t tiles = g.key_tiles_seen(i0, rows);
  for (int64_t kt = 0; kt < tiles; ++kt) {
    const int64_t j0 = kt * kTile, keys = std::min(kTile, g.S - j0), first = g.first_row(i0, j0);
    product<false>(keys, cols, hd, kh + j0 * k.row_stride, k.row_stride, 1, qt, kTile, st, kTile,
                   Band::kKeyRowsQueryColumns, first);
    // scale, -inf for the keys a query may not see, and the new maximum; the first key
    // tile holds key 0, which every query sees, so every maximum is finite from it on
#pragma omp simd
    for (int64_t r = 0; r < cols; ++r) grown[r] = m[r];
    for (int64_t c = 0; c < keys; ++c) {
      float* sc = st + c * kTile;
      const int64_t rmin = first + c;
#pragma omp simd
      for (int64_t r = 0; r < cols; ++r) {
        const float s = r < rmin ? -INFINITY : sc[r] * g.scale;
        sc[r] = s;
        grown[r] = s > grown[r] ? s : grown[r];
      }
    }
#pragma omp simd
    for (int64_t r = 0; r < cols; ++r) {
      const float rescale = fast::exp(m[r] - grown[r]);  // 0 on the first tile (m = -inf)
      m[r] = grown[r];
      l[r] *= rescale;
      grown[r] = rescale;
    }
    for (int64_t c = 0; c < keys; ++c) {
      float* sc = st + c * kTile;
#pragma omp simd
      for (int64_t r = 0; r < cols; ++r) {
        const float p = fast::exp(sc[r] - m[r]);
        sc[r] = p;
        l[r] += p;
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      float* orow = o + r * os;
      const float rescale = grown[r];
#pragma omp simd
      for (int64_t d = 0; d < hd; ++d) orow[d] *= rescale;
    }
    // O (rows x hd) += P (query r, key c at st[c * kTile + r]) @ V (keys x hd)
    product<true>(rows, hd, keys, st, 1, kTile, vh + j0 * v.row_stride, v.row_stride, o, os,
                  Band::kQueryRowsKeyDepth, first);
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* orow = o + r * os;
    const float inv = 1.0f / l[r];
#pragma omp simd
    for (int64_t d = 0; d < hd; ++d) orow[d] *= inv;
    lse[i0 + r] = m[r] + std::log(l[r]);
  }
}

// ---- backward

// A query tile as the backward reads it: q and dout transposed, and per query its lse
// and D = dout . out.
struct QueryTile {
  explicit QueryTile(int64_t hd, float* scratch)
      : qt(scratch), dot(qt + hd * kTile), lse(dot + hd * kTile), delta(lse + kTile) {}
  static int64_t floats(int64_t hd) { return 2 * hd * kTile + 2 * kTile; }
  float *qt, *dot, *lse, *delta;
  int64_t i0 = 0, rows = 0, cols = 0;
};

struct BackwardInputs {
  HeadRows q, k, v, dout, out;
  const float* lse;  // (B, H, T), contiguous
};

void load_query_tile(const Geometry& g, const BackwardInputs& in, int64_t b, int64_t h, int64_t i0, QueryTile& tile) {
  const int64_t hd = g.hd, head = b * g.H + h, rows = std::min(kTile, g.T - i0);
  tile.i0 = i0;
  tile.rows = rows;
  tile.cols = score_columns(rows);
  const float* dout = in.dout.rows(b, h) + i0 * in.dout.row_stride;
  const float* out = in.out.rows(b, h) + i0 * in.out.row_stride;
  transpose_tile(in.q.rows(b, h) + i0 * in.q.row_stride, in.q.row_stride, rows, hd, tile.qt);
  transpose_tile(dout, in.dout.row_stride, rows, hd, tile.dot);
  for (int64_t r = 0; r < kTile; ++r) {
    float dot = 0.0f;
    if (r < rows) {
      const float *gr = dout + r * in.dout.row_stride, *orow = out + r * in.out.row_stride;
#pragma omp simd reduction(+ : dot)
      for (int64_t d = 0; d < hd; ++d) dot += gr[d] * orow[d];
    }
    tile.delta[r] = dot;
    tile.lse[r] = r < rows ? in.lse[head * g.T + i0 + r] : INFINITY;  // probability 0 past the rows
  }
}

// For the key tile at j0 (keys rows) against a loaded query tile, one row per key:
//   pt  = P^T, P = exp(scale q k^T - lse), 0 where masked
//   dst = dS^T, dS = scale * P * (dout v^T - D), 0 where masked
void tile_probabilities(const Geometry& g, const BackwardInputs& in, int64_t b, int64_t h, int64_t j0,
                        int64_t keys, const QueryTile& tile, float* pt, float* dst) {
  const int64_t hd = g.hd, cols = tile.cols, first = g.first_row(tile.i0, j0);
  product<false>(keys, cols, hd, in.k.rows(b, h) + j0 * in.k.row_stride, in.k.row_stride, 1, tile.qt, kTile, pt,
                 kTile, Band::kKeyRowsQueryColumns, first);
  product<false>(keys, cols, hd, in.v.rows(b, h) + j0 * in.v.row_stride, in.v.row_stride, 1, tile.dot, kTile, dst,
                 kTile, Band::kKeyRowsQueryColumns, first);
  // the tile's arrays and the scale as locals: read through `tile` and `g`, which the
  // compiler cannot tell apart from pc and dc, they were loaded again after every store,
  // and the loop ran partly as gathers and scalar code
  const float *lse = tile.lse, *delta = tile.delta;
  const float scale = g.scale;
  for (int64_t c = 0; c < keys; ++c) {
    float *pc = pt + c * kTile, *dc = dst + c * kTile;
    const int64_t rmin = first + c;
#pragma omp simd
    for (int64_t r = 0; r < cols; ++r) {
      const float p = fast::exp(pc[r] * scale - lse[r]);
      pc[r] = r < rmin ? 0.0f : p;
      dc[r] = r < rmin ? 0.0f : scale * p * (dc[r] - delta[r]);
    }
  }
}

// dk and dv of the key tile at j0 (rows of dk_rows / dv_rows, row strides ldk / ldv) += this
// query tile's share:  dv += P^T dout,  dk += dS^T q
void add_key_grads(const Geometry& g, const BackwardInputs& in, int64_t b, int64_t h, int64_t j0, int64_t keys,
                   const QueryTile& tile, const float* pt, const float* dst, float* dk_rows, int64_t ldk,
                   float* dv_rows, int64_t ldv) {
  const HeadRows &q = in.q, &dout = in.dout;
  const int64_t i0 = tile.i0, first = g.first_row(i0, j0);
  product<true>(keys, g.hd, tile.rows, pt, kTile, 1, dout.rows(b, h) + i0 * dout.row_stride, dout.row_stride,
                dv_rows, ldv, Band::kKeyRowsQueryDepth, first);
  product<true>(keys, g.hd, tile.rows, dst, kTile, 1, q.rows(b, h) + i0 * q.row_stride, q.row_stride, dk_rows,
                ldk, Band::kKeyRowsQueryDepth, first);
}

// dq of the query tile (rows x hd at dq_rows, row stride ldq) += dS k for the key tile at j0
void add_query_grads(const Geometry& g, const BackwardInputs& in, int64_t b, int64_t h, int64_t j0, int64_t keys,
                     const QueryTile& tile, const float* dst, float* dq_rows, int64_t ldq) {
  product<true>(tile.rows, g.hd, keys, dst, 1, kTile, in.k.rows(b, h) + j0 * in.k.row_stride, in.k.row_stride,
                dq_rows, ldq, Band::kQueryRowsKeyDepth, g.first_row(tile.i0, j0));
}

// rows 0 .. n - 1 of an output head (row stride ld) set to zero
void zero_rows(float* rows, int64_t ld, int64_t n, int64_t hd) {
  for (int64_t r = 0; r < n; ++r) std::fill(rows + r * ld, rows + r * ld + hd, 0.0f);
}

// All of head (b, h)'s gradients: each query tile against the key tiles it sees, dk and dv
// summed over the query tiles in order, dq over the key tiles in order.
void backward_head(const Geometry& g, const BackwardInputs& in, const HeadRowsOut& dq, const HeadRowsOut& dk,
                   const HeadRowsOut& dv, int64_t b, int64_t h, QueryTile& tile, float* pt, float* dst) {
  const int64_t ldq = dq.row_stride, ldk = dk.row_stride, ldv = dv.row_stride;
  float *dqh = dq.rows(b, h), *dkh = dk.rows(b, h), *dvh = dv.rows(b, h);
  zero_rows(dkh, ldk, g.S, g.hd);
  zero_rows(dvh, ldv, g.S, g.hd);
  for (int64_t qt = 0; qt < g.query_tiles(); ++qt) {
    load_query_tile(g, in, b, h, qt * kTile, tile);
    float* dqi = dqh + tile.i0 * ldq;
    zero_rows(dqi, ldq, tile.rows, g.hd);
    const int64_t seen = g.key_tiles_seen(tile.i0, tile.rows);
    for (int64_t kt = 0; kt < seen; ++kt) {
      const int64_t j0 = kt * kTile, keys = std::min(kTile, g.S - j0);
      tile_probabilities(g, in, b, h, j0, keys, tile, pt, dst);
      add_key_grads(g, in, b, h, j0, keys, tile, pt, dst, dkh + j0 * ldk, ldk, dvh + j0 * ldv, ldv);
      add_query_grads(g, in, b, h, j0, keys, tile, dst, dqi, ldq);
    }
  }
}

// backward_head with k and v read from contiguous copies (compact_kv). `space` holds
// 2 S hd floats.
void backward_head_compact(const Geometry& g, const BackwardInputs& in, const HeadRowsOut& dq,
                           const HeadRowsOut& dk, const HeadRowsOut& dv, int64_t b, int64_t h, QueryTile& tile,
                           float* pt, float* dst, float* space) {
  BackwardInputs local = in;
  local.k = compact_copy(in.k, b, h, g.S, g.hd, space);
  local.v = compact_copy(in.v, b, h, g.S, g.hd, space + g.S * g.hd);
  backward_head(g, local, dq, dk, dv, b, h, tile, pt, dst);
}

}  // namespace

// q (B, H, T, hd), k (B, H, S, hd), v (B, H, S, hd) -> out (B, H, T, hd), lse (B, H, T)
//   s_ij = scale q_i . k_j (j visible to i),  lse_i = log sum_j exp(s_ij),
//   out_i = sum_j exp(s_ij - lse_i) v_j
AttentionForward attention_forward(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, float scale,
                                   bool causal, const Tensor& out_into) {
  if (on_cuda("attention_forward", {&q_in, &k_in, &v_in})) {
    AttentionForward f = cuda::attention_forward(q_in, k_in, v_in, scale, causal);
    place_into(f.out, out_into);
    return f;
  }
  const Geometry g = check_inputs("attention_forward", q_in, k_in, v_in, scale, causal);
  const HeadRowsOut out = output_rows("attention_forward", out_into, {g.B, g.H, g.T, g.hd});
  AttentionForward result{out.keep, Tensor::empty({g.B, g.H, g.T})};
  if (g.T == 0 || g.B * g.H == 0) return result;
  const HeadRows q = head_rows(q_in), k = head_rows(k_in), v = head_rows(v_in);
  const int threads = num_threads();
  const Scratch scratch(threads, g.hd * kTile + kTile * kTile + 3 * kTile);
  float* lse = result.lse.data();
  const int64_t tiles = g.query_tiles(), items = g.B * g.H * tiles;
#pragma omp parallel num_threads(threads) if (g.parallel())
  {
    float* mine = scratch.mine();
#pragma omp for schedule(dynamic)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t head = item / tiles, b = head / g.H, h = head % g.H;
      forward_tile(g, q, k, v, b, h, (item % tiles) * kTile, out, lse + head * g.T, mine);
    }
  }
  return result;
}

// With P_ij = exp(s_ij - lse_i), s_ij = scale q_i . k_j, and g = dL/dout:
//   dv_j = sum_i P_ij g_i
//   dP_ij = g_i . v_j
//   dS_ij = P_ij (dP_ij - D_i),  D_i = sum_j P_ij dP_ij = g_i . out_i   (the softmax
//           backward; D from the saved output instead of a sum over the keys)
//   dq_i = scale sum_j dS_ij k_j,   dk_j = scale sum_i dS_ij q_i
// Masked pairs have P = 0, so they add nothing to any of these sums.
AttentionGrads attention_backward(const Tensor& dout, const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                  const Tensor& out, const Tensor& lse, float scale, bool causal,
                                  const AttentionGrads& into) {
  if (on_cuda("attention_backward", {&dout, &q_in, &k_in, &v_in, &out, &lse})) {
    AttentionGrads d = cuda::attention_backward(dout, q_in, k_in, v_in, out, lse, scale, causal);
    place_into(d.dq, into.dq);
    place_into(d.dk, into.dk);
    place_into(d.dv, into.dv);
    return d;
  }
  const char* op = "attention_backward";
  const Geometry g = check_inputs(op, q_in, k_in, v_in, scale, causal);
  check_cpu_f32(op, dout);
  check_cpu_f32(op, out);
  check_cpu_f32(op, lse);
  check_attention_grad_shapes(op, {g.B, g.H, g.T, g.S, g.hd}, q_in, dout, out, lse);
  const HeadRowsOut dq = output_rows(op, into.dq, q_in.shape()), dk = output_rows(op, into.dk, k_in.shape()),
                    dv = output_rows(op, into.dv, v_in.shape());
  AttentionGrads grads{dq.keep, dk.keep, dv.keep};
  if (g.B * g.H == 0) return grads;
  if (g.T == 0) {
    grads.dk.fill_(0.0f);
    grads.dv.fill_(0.0f);
    return grads;
  }
  const Tensor lse_c = lse.contiguous();
  const BackwardInputs in{head_rows(q_in), head_rows(k_in), head_rows(v_in), head_rows(dout), head_rows(out),
                          lse_c.data()};
  const int threads = num_threads();
  const int64_t hd = g.hd, heads = g.B * g.H, qtiles = g.query_tiles(), ktiles = g.key_tiles();
  const bool per_head = heads >= threads, compact = per_head && compact_kv(g, in.k, in.v);
  const Scratch scratch(threads, QueryTile::floats(hd) + 2 * kTile * kTile + (compact ? 2 * g.S * hd : 0));
  const int64_t ldq = dq.row_stride, ldk = dk.row_stride, ldv = dv.row_stride;
#pragma omp parallel num_threads(threads) if (g.parallel())
  {
    float* mine = scratch.mine();
    QueryTile tile(hd, mine);
    float* pt = mine + QueryTile::floats(hd);  // (kTile, kTile) P^T of a tile pair
    float* dst = pt + kTile * kTile;           // (kTile, kTile) dS^T
    float* space = dst + kTile * kTile;        // the compact head, when copied
    if (per_head) {
#pragma omp for schedule(dynamic)
      for (int64_t head = 0; head < heads; ++head) {
        const int64_t b = head / g.H, h = head % g.H;
        if (compact)
          backward_head_compact(g, in, dq, dk, dv, b, h, tile, pt, dst, space);
        else
          backward_head(g, in, dq, dk, dv, b, h, tile, pt, dst);
      }
    } else {
#pragma omp for schedule(dynamic)
      for (int64_t item = 0; item < heads * ktiles; ++item) {
        const int64_t head = item / ktiles, b = head / g.H, h = head % g.H;
        const int64_t j0 = (item % ktiles) * kTile, keys = std::min(kTile, g.S - j0);
        float *dkj = dk.rows(b, h) + j0 * ldk, *dvj = dv.rows(b, h) + j0 * ldv;
        zero_rows(dkj, ldk, keys, hd);
        zero_rows(dvj, ldv, keys, hd);
        for (int64_t qt = g.first_query_tile(j0); qt < qtiles; ++qt) {
          load_query_tile(g, in, b, h, qt * kTile, tile);
          tile_probabilities(g, in, b, h, j0, keys, tile, pt, dst);
          add_key_grads(g, in, b, h, j0, keys, tile, pt, dst, dkj, ldk, dvj, ldv);
        }
      }
#pragma omp for schedule(dynamic)
      for (int64_t item = 0; item < heads * qtiles; ++item) {
        const int64_t head = item / qtiles, b = head / g.H, h = head % g.H;
        load_query_tile(g, in, b, h, (item % qtiles) * kTile, tile);
        float* dqi = dq.rows(b, h) + tile.i0 * ldq;
        zero_rows(dqi, ldq, tile.rows, hd);
        const int64_t seen = g.key_tiles_seen(tile.i0, tile.rows);
        for (int64_t kt = 0; kt < seen; ++kt) {
          const int64_t j0 = kt * kTile, keys = std::min(kTile, g.S - j0);
          tile_probabilities(g, in, b, h, j0, keys, tile, pt, dst);
          add_query_grads(g, in, b, h, j0, keys, tile, dst, dqi, ldq);
        }
      }
    }
  }
  return grads;
}

}  // namespace nl
