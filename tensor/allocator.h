// A caching allocator, one per device. Freed blocks go to a free list keyed by their
// rounded size and are handed out again, so a training loop whose step allocates the
// same sizes every time stops calling the system allocator after its first step.
// The counters make that claim checkable (bench_gpt and a test read them).
#pragma once
#include <cstddef>
#include <cstdint>

#include "tensor/device.h"

namespace nl {

struct AllocatorStats {
  int64_t system_allocs = 0;   // calls that reached malloc / cudaMalloc
  int64_t system_bytes = 0;    // bytes held from the system (in use + cached)
  int64_t in_use_bytes = 0;    // bytes handed out and not yet returned
  int64_t peak_in_use_bytes = 0;
};

// Returns a block of at least `bytes` bytes, 64-byte aligned on the CPU.
void* device_alloc(Device device, size_t bytes);
void device_free(Device device, void* ptr, size_t bytes);
AllocatorStats allocator_stats(Device device);
// Gives every cached (unused) block back to the system.
void allocator_release_cached(Device device);
// Resets the peak to the current use, to measure the peak of one phase.
void allocator_reset_peak(Device device);

// The raw system calls behind the cache; the CUDA pair lives in tensor/cuda/ and
// throws in a build without CUDA.
void* cpu_system_alloc(size_t bytes);
void cpu_system_free(void* ptr);
void* cuda_system_alloc(size_t bytes);
void cuda_system_free(void* ptr);

}  // namespace nl
