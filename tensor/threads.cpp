#include "tensor/threads.h"

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace nl {

void set_num_threads(int n) {
  if (n < 1) n = 1;
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
  openblas_set_num_threads(n);
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

}  // namespace

void bound_thread_spinning(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  setenv("GOMP_SPINCOUNT", std::to_string(kSpinCount).c_str(), 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then run on as we are
}

}  // namespace nl
