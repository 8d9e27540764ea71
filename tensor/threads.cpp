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

void bound_thread_spinning(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  setenv("GOMP_SPINCOUNT", std::to_string(kSpinCount).c_str(), 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then run on as we are
}

}  // namespace nl
