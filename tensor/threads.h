// One knob for the thread pools a CPU run uses: OpenMP (our own loops, and the tiles of
// every matrix product: tensor/cpu/gemm.h) and OpenBLAS's OpenMP build, which follows it
// (a pthread build of OpenBLAS is kept at one thread: threads.cpp).
#pragma once

#include <string>

namespace nl {

void set_num_threads(int n);
int num_threads();

// Sets both pools to n threads for its scope and restores the count it found.
class ScopedThreads {
 public:
  explicit ScopedThreads(int n) : before_(num_threads()) { set_num_threads(n); }
  ~ScopedThreads() { set_num_threads(before_); }
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int before_;
};

// Loops over fewer elements than this stay on one thread: waking the pool costs more
// than it saves on small tensors.
constexpr long kParallelGrain = 32768;

}  // namespace nl

namespace nl {

// Two settings that the libraries read once, when they load before main, so a program
// calls this first thing; when it sets either, it re-executes itself so that they take
// effect. A value the user set is always kept.
//
// 1. How long an idle OpenMP thread (ours and OpenBLAS's: both run on libgomp) spins
// before it sleeps. A training step runs hundreds of short parallel loops with
// microseconds between them; a thread that slept must be woken through the kernel
// (tens of microseconds), so a little spinning can pay on an idle machine. But a thread
// that spins without end (OMP_WAIT_POLICY=active) keeps its core while another process
// wants it, and its partner, queued behind that process, holds up the team at every
// barrier: beside other jobs a 2-thread tiny step went from 38 ms to 400-1500 ms. When
// neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, it sets GOMP_SPINCOUNT
// (threads.cpp: the count and the measurements behind it).
//
// 2. OpenBLAS's kernels. Debian's OpenBLAS picks its kernels for the CPU model it
// recognises; a model newer than the library (Intel family 6 model 207 with OpenBLAS
// 0.3.21, say) gets its oldest x86-64 kernels ("Prescott", SSE3): sgemm ran at 19.8
// GFLOP/s on one core instead of 141 with the AVX-512 ones, and a tiny GPT step took
// 192 ms instead of 65 (docs/performance.md). When OPENBLAS_CORETYPE is not set and
// OpenBLAS chose such a pre-AVX core on a CPU that has AVX-512 (or AVX2 with FMA), it
// sets OPENBLAS_CORETYPE=SkylakeX (or Haswell), the kernels written for those
// instructions.
void configure_runtime(char** argv);

// The kernel family OpenBLAS runs ("SkylakeX", "Haswell", "Prescott", ...), and
// whether configure_runtime chose it for a CPU OpenBLAS did not recognise.
struct BlasCore {
  std::string name;
  bool chosen_by_normlab = false;
};
BlasCore blas_core();

// The two judgements configure_runtime makes, for its tests: whether OpenBLAS's kernel
// family predates AVX (its fallback for a CPU it does not know), and the family for
// this CPU's widest vector instructions ("SkylakeX", "Haswell"; empty: none better).
bool pre_avx_blas_core(const std::string& core);
std::string blas_core_for_this_cpu();

}  // namespace nl
