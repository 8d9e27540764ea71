#include "tensor/cpu/gemm.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <atomic>

#ifdef NL_GEMM_ONEDNN
#include <dnnl.h>
#include <malloc.h>

#include <dnnl.hpp>
#include <unordered_map>
#endif

#include "tensor/error.h"

namespace nl {
namespace {

// The tiling's constants. Tile sides are multiples of kQuantum (OpenBLAS's register
// blocks are 4 to 16 wide, so no tile edge adds a ragged block inside the product) and,
// where a side is cut, at least kMinSide. Every tile packs its own rows of A and columns
// of B, so each cut costs: on the tiny step's products at one thread, 16 tiles of at
// least 1 M multiply-adds ran 0.88-0.99x the speed of one call and added 5.4 % to the
// step's instructions (make bench-callgrind). So a product is cut only from kMinSplit
// multiply-adds on (8 M: 2 tiles, one per thread of the default 2), and into more tiles
// only while each keeps kWorkPerTile (16.7 M); at most kMaxTiles, for 16 threads on
// large products. This rule adds 0.96 % to the tiny step's instructions
// (docs/performance.md, "The same numbers at any thread count").
constexpr int64_t kQuantum = 16;
constexpr int64_t kMinSide = 32;
constexpr double kMinSplit = double(1 << 23);
constexpr double kWorkPerTile = double(1 << 24);
constexpr int64_t kMaxTiles = 16;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t q) { return ceil_div(a, q) * q; }

// Runs call() with the calling task's OpenMP thread setting at 1, restored after. OpenBLAS
// and dnnl_sgemm stay on the calling thread inside an active parallel region by themselves
// and outside one follow omp_get_max_threads(); oneDNN's matmul primitive is planned (its
// blocking, and whether it splits the inner dimension among threads, which changes the
// order of the sums) for omp_get_max_threads() when it is made, inside a parallel region
// too. With the setting at 1 every product and every primitive is one thread's, however
// many threads the tiles are dealt to. (The setting is the task's own: other threads'
// are untouched.)
template <class Call>
void on_one_thread(const Call& call) {
#ifdef _OPENMP
  struct Restore {
    int threads;
    ~Restore() { omp_set_num_threads(threads); }
  } restore{omp_get_max_threads()};
  if (restore.threads > 1) omp_set_num_threads(1);
#endif
  call();
}

#ifdef NL_GEMM_ONEDNN
// x W^T tiles (row-major A, transposed B, alpha 1, beta 0: a linear layer's forward) over
// an inner dimension of at least kMatmulMinDepth through oneDNN's matmul primitive (brgemm
// kernels) instead of dnnl_sgemm. Chosen on the tiny step at 1 thread on a Zen 4 (bench_gpt
// --breakdown first, GEMM=onednn, 2026-12-05, docs/performance.md): for the MLP's
// down-projection (K = 512) the MLP's forward took 12.4-12.8 -> 11.8-12.0 ms; sent the
// forward tiles with K = 128 too, the attention phase's forward took 0.1 ms longer, so
// those stay with dnnl_sgemm, as do the gradients' NN and TN products.
// A primitive is made once per tile shape and strides and kept per thread (a thread's
// own primitives, engine and stream: no locks, and no scratchpad shared between threads).
// Every tile of one shape runs the same kernel, planned for one thread (on_one_thread),
// whichever thread runs it, so the results do not depend on the thread count.
struct MatmulKey {
  int64_t m, n, k, lda, ldb, ldc;
  bool operator==(const MatmulKey& o) const {
    return m == o.m && n == o.n && k == o.k && lda == o.lda && ldb == o.ldb && ldc == o.ldc;
  }
};
struct MatmulKeyHash {
  size_t operator()(const MatmulKey& key) const {
    size_t h = 0;
    for (int64_t v : {key.m, key.n, key.k, key.lda, key.ldb, key.ldc}) h = h * 1000003u ^ std::hash<int64_t>()(v);
    return h;
  }
};
struct CachedMatmul {
  bool made;  // false: oneDNN refused the shape, which dnnl_sgemm runs instead
  dnnl::matmul product;
  dnnl::memory a, b, c;
};
constexpr size_t kMaxCachedShapes = 64;  // a run sees a handful; evaluation at other batch sizes adds a few
constexpr int64_t kMatmulMinDepth = 256;

bool matmul_nt(const Gemm& g) {
  thread_local std::unordered_map<MatmulKey, CachedMatmul, MatmulKeyHash> cache;
  const MatmulKey key{g.m, g.n, g.k, g.lda, g.ldb, g.ldc};
  try {  // nothing may leave: the caller runs inside an OpenMP loop
    thread_local dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    thread_local dnnl::stream stream(engine);
    auto found = cache.find(key);
    if (found == cache.end()) {
      if (cache.size() >= kMaxCachedShapes) cache.clear();
      using md = dnnl::memory::desc;
      const auto f32 = dnnl::memory::data_type::f32;
      const md a({g.m, g.k}, f32, {g.lda, 1}), b({g.k, g.n}, f32, {1, g.ldb}), c({g.m, g.n}, f32, {g.ldc, 1});
      found = cache.emplace(key, CachedMatmul{false, {}, {}, {}, {}}).first;
      CachedMatmul& made = found->second;
      // made inside on_one_thread (tile_sgemm's caller): planned for one thread
      made.product = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), engine));
      made.a = dnnl::memory(a, engine, DNNL_MEMORY_NONE);
      made.b = dnnl::memory(b, engine, DNNL_MEMORY_NONE);
      made.c = dnnl::memory(c, engine, DNNL_MEMORY_NONE);
      made.made = true;
    }
    CachedMatmul& mm = found->second;
    if (!mm.made) return false;
    mm.a.set_data_handle(const_cast<float*>(g.a));
    mm.b.set_data_handle(const_cast<float*>(g.b));
    mm.c.set_data_handle(g.c);
    mm.product.execute(stream, {{DNNL_ARG_SRC, mm.a}, {DNNL_ARG_WEIGHTS, mm.b}, {DNNL_ARG_DST, mm.c}});
    stream.wait();
    return true;
  } catch (...) {
    return false;  // the caller falls back to dnnl_sgemm
  }
}
#endif

// One tile's product on the calling thread; false if the library refused it.
// OpenBLAS: its SkylakeX-family kernels send a row-major NN product with alpha 1, beta 0
// and m n k below 7.3 M to an unpacked "direct" kernel, which ran a tile of the tiny step's
// MLP input gradient (128 x 64 x 512) at 0.4x the packed kernels' speed. The same product
// asked in column-major form (C^T = B^T A^T, which is how OpenBLAS runs a row-major call
// anyway) always takes the packed kernels.
// oneDNN (make GEMM=onednn): its row-major dnnl_sgemm, which, like OpenBLAS's OpenMP build,
// stays on the calling thread inside an active parallel region and otherwise follows
// omp_get_max_threads() (set to 1 around it by on_one_thread). Its kernels sum in another
// order than OpenBLAS's: the two builds' runs differ in the last bits, not with the threads.
bool tile_sgemm(const Gemm& g) {
#ifdef NL_GEMM_ONEDNN
  // dnnl_sgemm mallocs its packing buffers on every call and frees them before it returns.
  // glibc gave such blocks back to the system (trimming the heap's top, or unmapping a block
  // above its mmap threshold) and took them again on the next call: about 190 page faults a
  // tiny training step (`perf stat -e page-faults` over 10 and 60 steps of bench_gpt), none
  // with the OpenBLAS build. Now blocks below 32 MB (glibc's ceiling for this threshold on
  // 64-bit) come from the heap, and up to 256 MB freed at its top stay in the process for the
  // next call; a refused setting leaves glibc's default, which costs only the faults.
  // (Process-wide, and only in this build; docs/performance.md has the timing.)
  static const int settings_taken = mallopt(M_MMAP_THRESHOLD, 32 << 20) + mallopt(M_TRIM_THRESHOLD, 256 << 20);
  (void)settings_taken;
  const bool x_wt = g.trans_a == CblasNoTrans && g.trans_b == CblasTrans && g.alpha == 1.0f && g.beta == 0.0f;
  if (x_wt && g.k >= kMatmulMinDepth && matmul_nt(g)) return true;
  const auto flag = [](CBLAS_TRANSPOSE t) { return t == CblasNoTrans ? 'N' : 'T'; };
  return dnnl_sgemm(flag(g.trans_a), flag(g.trans_b), g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c,
                    g.ldc) == dnnl_success;
#else
  cblas_sgemm(CblasColMajor, g.trans_b, g.trans_a, (int)g.n, (int)g.m, (int)g.k, g.alpha, g.b, (int)g.ldb, g.a,
              (int)g.lda, g.beta, g.c, (int)g.ldc);
  return true;
#endif
}

}  // namespace

void sgemm_one_thread(const Gemm& g) {
  on_one_thread([&] {
    cblas_sgemm(CblasRowMajor, g.trans_a, g.trans_b, (int)g.m, (int)g.n, (int)g.k, g.alpha, g.a, (int)g.lda, g.b,
                (int)g.ldb, g.beta, g.c, (int)g.ldc);
  });
}

GemmTile gemm_tile(int64_t m, int64_t n, int64_t k) {
  const GemmTile whole{std::max<int64_t>(m, 1), std::max<int64_t>(n, 1)};
  const double work = (double)m * (double)n * (double)k;
  int64_t tiles = work >= kMinSplit ? 2 : 1;
  while (tiles * 2 <= kMaxTiles && work / (double)(tiles * 2) >= kWorkPerTile) tiles *= 2;
  // of the grids r x c = tiles, the one that packs least: A's rows are packed once per
  // column of tiles (m c), B's columns once per row of tiles (n r)
  for (; tiles > 1; tiles /= 2) {
    GemmTile best{0, 0};
    int64_t best_cost = 0;
    for (int64_t r = 1; r <= tiles; r *= 2) {
      const int64_t c = tiles / r;
      const GemmTile t{r == 1 ? whole.rows : round_up(ceil_div(m, r), kQuantum),
                       c == 1 ? whole.cols : round_up(ceil_div(n, c), kQuantum)};
      if ((r > 1 && t.rows < kMinSide) || (c > 1 && t.cols < kMinSide)) continue;
      const int64_t cost = m * c + n * r;
      if (best.rows == 0 || cost < best_cost) best = t, best_cost = cost;
    }
    if (best.rows != 0) return best;
  }
  return whole;
}

void sgemm_tiled(const Gemm* products, int64_t count, const GemmEpilogue& epilogue) {
  if (count <= 0) return;
  const Gemm& shape = products[0];
  for (int64_t p = 1; p < count; ++p)
    NL_CHECK(products[p].m == shape.m && products[p].n == shape.n && products[p].k == shape.k,
             "sgemm_tiled: products of different shapes in one call");
  if (shape.m == 0 || shape.n == 0) return;
  const GemmTile tile = gemm_tile(shape.m, shape.n, shape.k);
  const int64_t tile_rows = ceil_div(shape.m, tile.rows), tile_cols = ceil_div(shape.n, tile.cols);
  const int64_t per_product = tile_rows * tile_cols, jobs = count * per_product;
  // which thread does a tile, and in what order, changes nothing: each output element is
  // one tile's, summed by one sgemm call over the whole inner dimension
  std::atomic<bool> refused{false};  // an exception may not leave the parallel loop
#pragma omp parallel for schedule(dynamic) if (jobs > 1)
  for (int64_t job = 0; job < jobs; ++job) {
    const Gemm& g = products[job / per_product];
    const int64_t i0 = (job % per_product) / tile_cols * tile.rows, j0 = (job % per_product) % tile_cols * tile.cols;
    Gemm part = g;
    part.m = std::min(tile.rows, g.m - i0);
    part.n = std::min(tile.cols, g.n - j0);
    part.a = g.trans_a == CblasNoTrans ? g.a + i0 * g.lda : g.a + i0;
    part.b = g.trans_b == CblasNoTrans ? g.b + j0 : g.b + j0 * g.ldb;
    part.c = g.c + i0 * g.ldc + j0;
    bool done = false;
    on_one_thread([&] { done = tile_sgemm(part); });
    if (!done) refused = true;
    else if (epilogue) epilogue(part, i0, j0);
  }
  NL_CHECK(!refused, "matmul: the sgemm library refused a tile of the ", shape.m, " x ", shape.n, " x ", shape.k,
           " product");
}

const char* tile_sgemm_library() {
#ifdef NL_GEMM_ONEDNN
  return "oneDNN";
#else
  return "OpenBLAS";
#endif
}

}  // namespace nl
