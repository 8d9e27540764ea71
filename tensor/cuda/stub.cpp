// Built when CUDA=1 is not set: every CUDA entry point throws, so the CPU build needs
// no CUDA headers and a CUDA tensor asked for by mistake fails with a clear message.
#include "tensor/allocator.h"
#include "tensor/error.h"

namespace nl {

bool cuda_available() { return false; }
void* cuda_system_alloc(size_t) { fail("allocator: this build has no CUDA (rebuild with make CUDA=1)"); }
void cuda_system_free(void*) {}

}  // namespace nl
