#include "tensor/allocator.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tensor/error.h"

namespace nl {
namespace {

// Rounds a request up so that nearby sizes share a free list: multiples of 256 bytes
// up to 64 KiB, then 8 steps per power of two (at most 12.5 % waste).
size_t size_class(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes <= 65536) return (bytes + 255) & ~size_t(255);
  size_t top = 1;
  while (top < bytes) top <<= 1;
  size_t step = top / 16;
  return (bytes + step - 1) / step * step;
}

struct CachingAllocator {
  explicit CachingAllocator(Device d) : device(d) {}
  Device device;
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void*>> free_lists;
  AllocatorStats stats;

  void* alloc(size_t bytes) {
    size_t cls = size_class(bytes);
    std::lock_guard<std::mutex> lock(mutex);
    void* p = nullptr;
    auto it = free_lists.find(cls);
    if (it != free_lists.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
    } else {
      // may throw (out of memory, no CUDA build): count nothing until it succeeded
      p = device == Device::CPU ? cpu_system_alloc(cls) : cuda_system_alloc(cls);
      stats.system_allocs++;
      stats.system_bytes += cls;
    }
    stats.in_use_bytes += cls;
    if (stats.in_use_bytes > stats.peak_in_use_bytes) stats.peak_in_use_bytes = stats.in_use_bytes;
    return p;
  }

  void free(void* p, size_t bytes) {
    size_t cls = size_class(bytes);
    std::lock_guard<std::mutex> lock(mutex);
    stats.in_use_bytes -= cls;
    free_lists[cls].push_back(p);
  }

  void release_cached() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& [cls, list] : free_lists) {
      for (void* p : list) {
        if (device == Device::CPU) cpu_system_free(p); else cuda_system_free(p);
        stats.system_bytes -= cls;
      }
      list.clear();
    }
  }
};

// Never destroyed: tensors held in static objects may be freed after main returns.
CachingAllocator& allocator_for(Device d) {
  static CachingAllocator* cpu = new CachingAllocator(Device::CPU);
  static CachingAllocator* cuda = new CachingAllocator(Device::CUDA);
  return d == Device::CPU ? *cpu : *cuda;
}

}  // namespace

void* cpu_system_alloc(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) & ~size_t(63));
  NL_CHECK(p != nullptr, "allocator: out of CPU memory asking for ", bytes, " bytes");
  return p;
}
void cpu_system_free(void* p) { std::free(p); }

void* device_alloc(Device device, size_t bytes) { return allocator_for(device).alloc(bytes); }
void device_free(Device device, void* ptr, size_t bytes) { allocator_for(device).free(ptr, bytes); }
AllocatorStats allocator_stats(Device device) {
  auto& a = allocator_for(device);
  std::lock_guard<std::mutex> lock(a.mutex);
  return a.stats;
}
void allocator_release_cached(Device device) { allocator_for(device).release_cached(); }
void allocator_reset_peak(Device device) {
  auto& a = allocator_for(device);
  std::lock_guard<std::mutex> lock(a.mutex);
  a.stats.peak_in_use_bytes = a.stats.in_use_bytes;
}

}  // namespace nl
