// Times the `tiny` GPT step's matrix products (tiny_step_products.h) with one library,
// chosen when compiling (scripts/bench_gemm_libs.sh builds this file once per library:
// each binary links only its own, since OpenBLAS and BLIS export the same BLAS symbols):
//   NL_LIB_OPENBLAS  cblas_sgemm, OpenBLAS splitting each product over its threads
//   NL_LIB_BLIS      bli_sgemm (BLIS's typed API, OpenMP threads)
//   NL_LIB_XSMM      libxsmm_sgemm: JIT-compiled kernels for products up to its size
//                    threshold ((m n k)^(1/3) <= 64 by default), OpenBLAS above it; its
//                    threaded form libxsmm_sgemm_omp at more than one thread
//   NL_LIB_DNNL      dnnl_sgemm (oneDNN's row-major sgemm, OpenMP threads)
//   NL_LIB_NORMLAB   normlab's own dispatch (tensor/cpu/gemm.h: one-thread OpenBLAS sgemms
//                    over output tiles chosen from the shape, shared out by OpenMP)
// Before timing, 16 entries of each product are checked against a dot product in double:
// a wrong transpose or leading dimension stops the benchmark instead of timing it.
// Each product's shape is timed as a batch of its per-step count (a layer's products x 4
// layers, attention's x 64 heads), 7 warm-up batches and --reps timed ones; the median
// batch time is printed with its GFLOP/s, one line per shape, as TSV: library, threads,
// product, count, m, n, k, median microseconds per step, GFLOP/s. Nothing is asserted.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/gemm_libs/tiny_step_products.h"

#if defined(NL_LIB_OPENBLAS)
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#define NL_LIB_NAME "openblas"
#elif defined(NL_LIB_BLIS)
#include <blis.h>
#define NL_LIB_NAME "blis"
#elif defined(NL_LIB_XSMM)
#include <libxsmm.h>
#define NL_LIB_NAME "libxsmm"
#elif defined(NL_LIB_DNNL)
#include <dnnl.h>
#define NL_LIB_NAME "onednn"
#elif defined(NL_LIB_NORMLAB)
#include <cblas.h>
#include "tensor/cpu/gemm.h"
extern "C" void openblas_set_num_threads(int);
#define NL_LIB_NAME "normlab tiles"
#else
#error "define one of NL_LIB_OPENBLAS, NL_LIB_BLIS, NL_LIB_XSMM, NL_LIB_DNNL"
#endif

namespace {

using nl::bench::Product;

void set_threads(int t) {
  omp_set_num_threads(t);
#if defined(NL_LIB_OPENBLAS) || defined(NL_LIB_NORMLAB)
  openblas_set_num_threads(t);
#elif defined(NL_LIB_BLIS)
  bli_thread_set_num_threads(t);
#endif
}

// C = op(A) op(B), row-major, with each library's own call.
void gemm(const Product& p, int threads, const float* a, const float* b, float* c) {
  const float one = 1.0f, zero = 0.0f;
#if defined(NL_LIB_OPENBLAS)
  (void)threads;
  cblas_sgemm(CblasRowMajor, p.trans_a ? CblasTrans : CblasNoTrans, p.trans_b ? CblasTrans : CblasNoTrans, (int)p.m,
              (int)p.n, (int)p.k, one, a, (int)p.lda, b, (int)p.ldb, zero, c, (int)p.ldc);
#elif defined(NL_LIB_BLIS)
  (void)threads;
  // BLIS takes each stored matrix's row and column strides: row-major is (ld, 1)
  bli_sgemm(p.trans_a ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, p.trans_b ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, p.m, p.n,
            p.k, const_cast<float*>(&one), const_cast<float*>(a), p.lda, 1, const_cast<float*>(b), p.ldb, 1,
            const_cast<float*>(&zero), c, p.ldc, 1);
#elif defined(NL_LIB_XSMM)
  // column-major BLAS convention: row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T
  const char ta = p.trans_a ? 'T' : 'N', tb = p.trans_b ? 'T' : 'N';
  const libxsmm_blasint m = p.n, n = p.m, k = p.k, lda = p.ldb, ldb = p.lda, ldc = p.ldc;
  if (threads > 1)
    libxsmm_sgemm_omp(&tb, &ta, &m, &n, &k, &one, b, &lda, a, &ldb, &zero, c, &ldc);
  else
    libxsmm_sgemm(&tb, &ta, &m, &n, &k, &one, b, &lda, a, &ldb, &zero, c, &ldc);
#elif defined(NL_LIB_NORMLAB)
  (void)threads;
  const nl::Gemm g{p.trans_a ? CblasTrans : CblasNoTrans, p.trans_b ? CblasTrans : CblasNoTrans, p.m, p.n, p.k, one,
                   a, p.lda, b, p.ldb, zero, c, p.ldc};
  nl::sgemm_tiled(&g, 1);
#elif defined(NL_LIB_DNNL)
  (void)threads;
  const dnnl_status_t s = dnnl_sgemm(p.trans_a ? 'T' : 'N', p.trans_b ? 'T' : 'N', p.m, p.n, p.k, one, a, p.lda, b,
                                     p.ldb, zero, c, p.ldc);
  if (s != dnnl_success) {
    std::fprintf(stderr, "bench_gemm_lib: dnnl_sgemm failed (%d) on %s\n", (int)s, p.name);
    std::exit(1);
  }
#endif
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s THREADS,... REPS\n", argv[0]);
    return 2;
  }
  std::vector<int> thread_counts;
  for (std::string s = argv[1]; !s.empty();) {
    const size_t comma = s.find(',');
    thread_counts.push_back(std::atoi(s.substr(0, comma).c_str()));
    s = comma == std::string::npos ? "" : s.substr(comma + 1);
  }
  const int reps = std::atoi(argv[2]);
  if (reps < 1 || thread_counts.empty() || *std::min_element(thread_counts.begin(), thread_counts.end()) < 1) {
    std::fprintf(stderr, "%s: THREADS must be positive integers and REPS at least 1\n", argv[0]);
    return 2;
  }
#if defined(NL_LIB_XSMM)
  libxsmm_init();
#endif
  for (int t : thread_counts) {
    set_threads(t);
    double total_us = 0, total_flop = 0;
    for (const Product& p : nl::bench::tiny_step_products()) {
      const int64_t a_rows = p.trans_a ? p.k : p.m, b_rows = p.trans_b ? p.n : p.k;
      // every product of the batch on its own operands, as a step's layers and heads are
      std::vector<float> a(p.count * a_rows * p.lda), b(p.count * b_rows * p.ldb), c(p.count * p.m * p.ldc);
      for (size_t i = 0; i < a.size(); ++i) a[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
      for (size_t i = 0; i < b.size(); ++i) b[i] = (float)((i * 104729) % 1000) / 1000.0f - 0.5f;
      auto batch = [&] {
        for (int64_t i = 0; i < p.count; ++i)
          gemm(p, t, a.data() + i * a_rows * p.lda, b.data() + i * b_rows * p.ldb, c.data() + i * p.m * p.ldc);
      };
      for (int w = 0; w < 7; ++w) batch();
      for (int s = 0; s < 16; ++s) {  // the first product's entries against a dot product in double
        const int64_t i = (s * 37) % p.m, j = (s * 53) % p.n;
        double want = 0, size = 0;
        for (int64_t q = 0; q < p.k; ++q) {
          const double x = p.trans_a ? a[q * p.lda + i] : a[i * p.lda + q];
          const double y = p.trans_b ? b[j * p.ldb + q] : b[q * p.ldb + j];
          want += x * y, size += std::abs(x * y);
        }
        if (std::abs(c[i * p.ldc + j] - want) > 1e-4 * size + 1e-6) {
          std::fprintf(stderr, "%s: %s gives %g at (%lld, %lld), a dot product %g\n", NL_LIB_NAME, p.name,
                       (double)c[i * p.ldc + j], (long long)i, (long long)j, want);
          return 1;
        }
      }
      std::vector<double> times;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        batch();
        times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      const double us = median(times), flop = 2.0 * (double)p.m * (double)p.n * (double)p.k * (double)p.count;
      total_us += us, total_flop += flop;
      std::printf("%s\t%d\t%s\t%lld\t%lld\t%lld\t%lld\t%.1f\t%.1f\n", NL_LIB_NAME, t, p.name, (long long)p.count,
                  (long long)p.m, (long long)p.n, (long long)p.k, us, flop / us / 1e3);
    }
    std::printf("%s\t%d\tall 21 products of a step\t-\t-\t-\t-\t%.1f\t%.1f\n", NL_LIB_NAME, t, total_us,
                total_flop / total_us / 1e3);
  }
  return 0;
}
