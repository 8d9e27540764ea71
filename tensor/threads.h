// One knob for the two thread pools a CPU run uses: OpenMP (our own loops) and
// OpenBLAS (sgemm). Both get the same count.
#pragma once

namespace nl {

void set_num_threads(int n);
int num_threads();

// Loops over fewer elements than this stay on one thread: waking the pool costs more
// than it saves on small tensors.
constexpr long kParallelGrain = 32768;

}  // namespace nl
