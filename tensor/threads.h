// One knob for the two thread pools a CPU run uses: OpenMP (our own loops) and
// OpenBLAS (sgemm). Both get the same count.
#pragma once

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

// How long an idle OpenMP thread (ours and OpenBLAS's: both run on libgomp) spins
// before it sleeps. A training step runs hundreds of short parallel loops with
// microseconds between them; a thread that slept must be woken through the kernel
// (tens of microseconds), so a little spinning can pay on an idle machine. But a thread
// that spins without end (OMP_WAIT_POLICY=active) keeps its core while another process
// wants it, and its partner, queued behind that process, holds up the team at every
// barrier: beside other jobs a 2-thread tiny step went from 38 ms to 400-1500 ms.
// libgomp reads its wait settings once, when the runtime loads before main, so a
// program calls this first thing: when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is
// set, it sets GOMP_SPINCOUNT (threads.cpp: the count and the measurements behind it)
// and re-executes itself. A value the user set is kept (OMP_WAIT_POLICY=active brings
// back the endless spin, GOMP_SPINCOUNT=N any other bound).
void bound_thread_spinning(char** argv);

}  // namespace nl
