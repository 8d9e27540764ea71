#include "tensor/allocator.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
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

// "512 B", "3.0 KiB", "12.5 MiB", "1.00 GiB", "256.00 TiB": sizes in an error message.
std::string human_bytes(double bytes) {
  const double KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;
  char buf[32];
  if (bytes < KiB) std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else if (bytes < MiB) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / KiB);
  else if (bytes < GiB) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / MiB);
  else if (bytes < TiB) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / GiB);
  else std::snprintf(buf, sizeof buf, "%.2f TiB", bytes / TiB);
  return buf;
}

// The blocks of one rounded size. Returning a block to `cached` must not allocate: the
// free path runs in destructors, also while an out-of-memory error unwinds, where a
// throwing push_back ends the program. So the list keeps room for every block of its
// size that exists (cached.capacity() >= blocks), made on the allocation path, where
// failing is allowed, before the block itself is asked for; push_back on free then
// never reallocates.
struct SizeClass {
  std::vector<void*> cached;
  size_t blocks = 0;  // held from the system: cached + in use
};

struct CachingAllocator {
  explicit CachingAllocator(Device d) : device(d) {}
  Device device;
  std::mutex mutex;
  // Node-based: a SizeClass stays where it is when others are added, and find() on the
  // free path allocates nothing.
  std::unordered_map<size_t, SizeClass> classes;
  AllocatorStats stats;
  SystemAllocHook hook;

  void* alloc(size_t bytes) {
    const size_t cls = size_class(bytes);
    std::lock_guard<std::mutex> lock(mutex);
    void* p = take_cached(cls);
    if (!p) p = new_block(cls);
    if (!p) {
      // Cached blocks of other sizes may be what the system lacks.
      const int64_t cached = stats.system_bytes - stats.in_use_bytes;
      release_cached_locked();
      p = new_block(cls);
      if (!p)
        fail("allocator: out of ", device_name(device), " memory: asking for ", human_bytes((double)bytes), " (",
             bytes, " bytes) failed, also after giving the ", human_bytes((double)cached),
             " of cached blocks back and trying again; ", human_bytes((double)stats.in_use_bytes),
             " are in use by live tensors");
    }
    stats.in_use_bytes += cls;
    if (stats.in_use_bytes > stats.peak_in_use_bytes) stats.peak_in_use_bytes = stats.in_use_bytes;
    return p;
  }

  void* take_cached(size_t cls) {
    auto it = classes.find(cls);
    if (it == classes.end() || it->second.cached.empty()) return nullptr;
    void* p = it->second.cached.back();
    it->second.cached.pop_back();
    return p;
  }

  // A block from the system, with room for it made in its class's list first; nullptr
  // when the system (or the hook) refuses either.
  void* new_block(size_t cls) {
    SizeClass* sc = nullptr;
    try {
      sc = &classes[cls];
      if (sc->cached.capacity() < sc->blocks + 1) sc->cached.reserve(2 * sc->blocks + 8);
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
    if (hook && !hook(device, cls)) return nullptr;
    void* p = device == Device::CPU ? cpu_system_alloc(cls) : cuda_system_alloc(cls);
    if (!p) return nullptr;
    sc->blocks++;
    stats.system_allocs++;
    stats.system_bytes += (int64_t)cls;
    return p;
  }

  void free(void* p, size_t bytes) noexcept {
    const size_t cls = size_class(bytes);
    std::lock_guard<std::mutex> lock(mutex);
    stats.in_use_bytes -= (int64_t)cls;
    // The class exists (alloc made it) and has room (new_block reserved it).
    classes.find(cls)->second.cached.push_back(p);
  }

  void release_cached_locked() {
    for (auto& [cls, sc] : classes) {
      for (void* p : sc.cached) {
        if (device == Device::CPU) cpu_system_free(p); else cuda_system_free(p);
        stats.system_bytes -= (int64_t)cls;
      }
      sc.blocks -= sc.cached.size();
      sc.cached.clear();  // keeps its capacity: still room for every block
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

void* cpu_system_alloc(size_t bytes) { return std::aligned_alloc(64, (bytes + 63) & ~size_t(63)); }
void cpu_system_free(void* p) { std::free(p); }

void* device_alloc(Device device, size_t bytes) { return allocator_for(device).alloc(bytes); }
void device_free(Device device, void* ptr, size_t bytes) noexcept { allocator_for(device).free(ptr, bytes); }
AllocatorStats allocator_stats(Device device) {
  auto& a = allocator_for(device);
  std::lock_guard<std::mutex> lock(a.mutex);
  return a.stats;
}
void allocator_release_cached(Device device) {
  auto& a = allocator_for(device);
  std::lock_guard<std::mutex> lock(a.mutex);
  a.release_cached_locked();
}
void allocator_reset_peak(Device device) {
  auto& a = allocator_for(device);
  std::lock_guard<std::mutex> lock(a.mutex);
  a.stats.peak_in_use_bytes = a.stats.in_use_bytes;
}
void set_system_alloc_hook(SystemAllocHook hook) {
  for (Device d : {Device::CPU, Device::CUDA}) {
    auto& a = allocator_for(d);
    std::lock_guard<std::mutex> lock(a.mutex);
    a.hook = hook;
  }
}

}  // namespace nl
