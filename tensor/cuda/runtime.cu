// The CUDA runtime behind the backend: whether a GPU answered, the raw allocations
// under the caching allocator (tensor/allocator.cpp), and synchronisation.
#include <cstdio>
#include <string>

#include "tensor/allocator.h"
#include "tensor/cuda/common.cuh"
#include "tensor/cuda/kernels.h"

namespace nl {
namespace {

// Asked once: a CUDA build on a machine without a driver or a GPU answers "no" here
// and never touches the GPU again.
cudaError_t probe_error() {
  static cudaError_t err = [] {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n == 0) e = cudaErrorNoDevice;
    if (e != cudaSuccess) cudaGetLastError();  // clear the sticky error of the failed probe
    return e;
  }();
  return err;
}

}  // namespace

bool cuda_available() { return probe_error() == cudaSuccess; }
bool cuda_built() { return true; }

void* cuda_system_alloc(size_t bytes) {
  NL_CHECK(cuda_available(), "allocator: no CUDA GPU available (", cudaGetErrorString(probe_error()), ")");
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaSuccess) return p;
  cudaGetLastError();  // clear the error, or the next CUDA call would report it
  // out of memory: the caching allocator gives its cached blocks back and tries again
  if (e == cudaErrorMemoryAllocation) return nullptr;
  fail("allocator: cudaMalloc of ", bytes, " bytes failed: ", cudaGetErrorString(e));
}

void cuda_system_free(void* p) { cudaFree(p); }  // synchronises: pending kernels finish first

namespace cuda {

std::string device_description() {
  if (!cuda_available()) return std::string("none (") + cudaGetErrorString(probe_error()) + ")";
  int dev = 0;
  cudaDeviceProp prop;
  NL_CUDA_CHECK(cudaGetDevice(&dev));
  NL_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s (sm_%d%d, %.0f GiB)", prop.name, prop.major, prop.minor,
                (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

void synchronize() {
  if (cuda_available()) NL_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace cuda
}  // namespace nl
