#include "tensor/threads.h"

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace nl {

void set_num_threads(int n) {
  if (n < 1) n = 1;
  // The products are split over our threads in tiles, each one single-threaded sgemm
  // (tensor/cpu/gemm.h: the same bits at any count). OpenBLAS's OpenMP build (2) follows
  // omp_get_max_threads() and stays on the calling thread inside our regions; a pthread
  // build keeps a pool of its own, which would split every tile again by its own rule
  // of the count, so that pool stays at one thread.
  openblas_set_num_threads(openblas_get_parallel() == 2 ? n : 1);
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
}

int num_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace nl

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace nl {
namespace {

// About 10 microseconds of spinning (libgomp counts ~100 000 spins per millisecond;
// its own default, 300 000, is ~3 ms): long enough to bridge the gap between two
// back-to-back loops of a step, short enough to give the core away when a partner
// thread is queued behind another process. Measured on the shared machine
// (docs/performance.md, bench_gpt --contend under load average 13-16), the 2-thread
// step over the 1-thread one alone / beside a nice-0 / a nice-19 process: endless spin
// 7.3-7.8x, 10 000 spins 1.7-2.2x, 1000 spins 0.46 / 0.69 / 0.56, none 0.41 / 1.25 / 0.38.
// Whether 1000 beats none on an idle machine is still to be measured there.
constexpr long kSpinCount = 1000;

// The marker of a core this file chose, for blas_core() after the re-execution.
constexpr const char* kChosenMarker = "NL_OPENBLAS_CORETYPE_CHOSEN";

}  // namespace

// OpenBLAS's kernel families older than AVX: what it falls back to for a CPU model it
// does not know.
bool pre_avx_blas_core(const std::string& core) {
  for (const char* old : {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Unknown"})
    if (core == old) return true;
  return false;
}

std::string blas_core_for_this_cpu() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return "";
}

BlasCore blas_core() {
  const char* name = openblas_get_corename();
  BlasCore core;
  core.name = name ? name : "";
  core.chosen_by_normlab = std::getenv(kChosenMarker) != nullptr;
  return core;
}

void configure_runtime(char** argv) {
  bool changed = false;
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    setenv("GOMP_SPINCOUNT", std::to_string(kSpinCount).c_str(), 1);
    changed = true;
  }
  // a value the user set (valgrind.sh sets Haswell: valgrind knows no AVX-512) is kept,
  // and so is ours after the re-execution, even where this OpenBLAS ignores it (a build
  // without DYNAMIC_ARCH): no second re-execution
  // (an empty value is OpenBLAS's own detection, as if unset)
  const char* user_core = std::getenv("OPENBLAS_CORETYPE");
  const std::string better = blas_core_for_this_cpu();
  if ((user_core == nullptr || *user_core == '\0') && !better.empty() && pre_avx_blas_core(blas_core().name)) {
    setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
    setenv(kChosenMarker, "1", 1);
    changed = true;
  }
  if (changed) execv("/proc/self/exe", argv);  // returns only on failure: then run on as we are
}

}  // namespace nl
