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

// libgomp lets idle threads sleep soon after a parallel loop; waking them costs tens
// of microseconds, and a training step runs hundreds of short loops (measured: the
// demo GPT ran at 13.7k tok/s with OMP_WAIT_POLICY=active, 4.2k with the default).
// The policy is read once when the OpenMP runtime loads, before main, so a program
// calls this first thing: when the variable is unset it sets it and re-executes itself.
// A value the user set is kept.
void prefer_spinning_threads(char** argv);

}  // namespace nl
