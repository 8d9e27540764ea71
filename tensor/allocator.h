// A caching allocator, one per device. Freed blocks go to a free list keyed by their
// rounded size and are handed out again, so a training loop whose step allocates the
// same sizes every time stops calling the system allocator after its first step.
// The counters make that claim checkable (bench_gpt and a test read them).
//
// Out of memory: when the system refuses a block, the allocator gives every cached
// block back, asks once more, and if that fails too throws nl::Error naming the size
// asked for and what is in use (never std::bad_alloc). Freeing never allocates and
// never throws, so it is safe in destructors, also while such an error unwinds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

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
void device_free(Device device, void* ptr, size_t bytes) noexcept;
AllocatorStats allocator_stats(Device device);
// Gives every cached (unused) block back to the system.
void allocator_release_cached(Device device);
// Resets the peak to the current use, to measure the peak of one phase.
void allocator_reset_peak(Device device);

// Fault injection for tests: the hook is asked before every system allocation (with the
// device and the rounded size) and answering false makes that allocation fail as if the
// system were out of memory. An empty hook (the default) lets every allocation through.
// It runs under the allocator's lock, so it must not allocate tensors itself.
using SystemAllocHook = std::function<bool(Device device, size_t bytes)>;
void set_system_alloc_hook(SystemAllocHook hook);

// The raw system calls behind the cache: nullptr when the system has no memory for the
// block; other failures throw. The CUDA pair lives in tensor/cuda/ and throws in a
// build without CUDA.
void* cpu_system_alloc(size_t bytes);
void cpu_system_free(void* ptr);
void* cuda_system_alloc(size_t bytes);
void cuda_system_free(void* ptr);

}  // namespace nl
