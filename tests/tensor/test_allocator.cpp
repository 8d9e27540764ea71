// The caching allocator: after a first round, repeating the same allocations never
// reaches the system allocator; the counters track use, peak and cached bytes. Out of
// memory: the cache is given back, the system asked once more, then nl::Error; freeing
// never allocates and never fails.
// The allocator is process-wide, so every check here is on differences of counters.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "tensor/allocator.h"
#include "tensor/error.h"
#include "tensor/ops.h"
#include "tensor/tensor.h"

using Catch::Contains;
using nl::AllocatorStats;
using nl::Device;
using nl::Tensor;

// ThreadSanitizer's runtime defines the operator new family itself, so the counting
// replacement (and the one test that needs it) is left out of the TSan build, which runs
// the threaded kernels' tests only (scripts/tsan.sh).
#if defined(__SANITIZE_THREAD__)
#define NL_COUNTS_OPERATOR_NEW 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NL_COUNTS_OPERATOR_NEW 0
#endif
#endif
#ifndef NL_COUNTS_OPERATOR_NEW
#define NL_COUNTS_OPERATOR_NEW 1
#endif

#if NL_COUNTS_OPERATOR_NEW
// Every operator new of this test binary is counted, so that a test can show that a
// stretch of code allocates nothing (the allocator's free path). Otherwise it is the
// standard operator new: malloc, the new-handler, std::bad_alloc. The whole family is
// replaced (array, nothrow, sized delete), so that every new and delete of the binary
// pairs malloc with free, also under AddressSanitizer, which checks that they match.
namespace {
std::atomic<int64_t> operator_new_calls{0};
}
void* operator new(std::size_t bytes) {
  operator_new_calls.fetch_add(1, std::memory_order_relaxed);
  for (;;) {
    if (void* p = std::malloc(bytes ? bytes : 1)) return p;
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return operator new(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes) { return operator new(bytes); }
void* operator new[](std::size_t bytes, const std::nothrow_t& nt) noexcept { return operator new(bytes, nt); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#endif  // NL_COUNTS_OPERATOR_NEW

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer ends the program on a malloc it cannot serve; the test of a size no
// system can give needs malloc to return null, as glibc's does, so that what runs is
// the allocator's own handling.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

static AllocatorStats cpu_stats() { return nl::allocator_stats(Device::CPU); }

namespace {

// A fault-injection hook for the length of one test, removed also when a check throws.
struct HookScope {
  explicit HookScope(nl::SystemAllocHook hook) { nl::set_system_alloc_hook(std::move(hook)); }
  ~HookScope() { nl::set_system_alloc_hook(nullptr); }
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;
};

// The message of the nl::Error that making a tensor of `numel` floats throws; "" when
// it throws none. Any other exception (std::bad_alloc) escapes and fails the test.
std::string error_making(int64_t numel) {
  try {
    Tensor t = Tensor::empty({numel});
  } catch (const nl::Error& e) {
    return e.what();
  }
  return "";
}

// After an allocation failure the allocator must serve the next request as before.
void check_still_serves() {
  Tensor t = Tensor::full({1000}, 2.0f);
  CHECK(nl::sum(t).item() == 2000.0f);
}

}  // namespace

TEST_CASE("allocator repeated rounds allocate nothing new from the system", "[allocator]") {
  // sizes in floats, odd on purpose, small and large (> 64 KiB), like a training step
  const std::vector<int64_t> sizes = {1000, 37, 100000, 5, 1000, 300000};
  auto round = [&] {
    std::vector<Tensor> live;
    for (int64_t n : sizes) live.push_back(Tensor::zeros({n}));
    Tensor tmp = Tensor::ones({64, 64});  // one freed inside the round
  };
  AllocatorStats before = cpu_stats();
  round();
  AllocatorStats after_first = cpu_stats();
  CHECK(after_first.in_use_bytes == before.in_use_bytes);
  for (int r = 0; r < 5; ++r) round();
  AllocatorStats after = cpu_stats();
  CHECK(after.system_allocs == after_first.system_allocs);
  CHECK(after.system_bytes == after_first.system_bytes);
  CHECK(after.in_use_bytes == before.in_use_bytes);
}

TEST_CASE("allocator in_use follows live tensors and rounds sizes up", "[allocator]") {
  int64_t base = cpu_stats().in_use_bytes;
  {
    // 10 floats = 40 bytes: rounded to the 256-byte class
    Tensor a = Tensor::empty({10});
    CHECK(cpu_stats().in_use_bytes - base == 256);
    // 2^18 floats = 1 MiB: a power of two is its own class
    Tensor b = Tensor::empty({1 << 18});
    CHECK(cpu_stats().in_use_bytes - base == 256 + (1 << 20));
    // 100000 floats = 400000 bytes, between 2^18 and 2^19 bytes: classes step by
    // 2^19 / 16 = 32768, and ceil(400000 / 32768) = 13 -> 425984 bytes
    Tensor c = Tensor::empty({100000});
    CHECK(cpu_stats().in_use_bytes - base == 256 + (1 << 20) + 425984);
    // a view allocates nothing
    Tensor v = c.reshape({1000, 100}).transpose(0, 1);
    CHECK(cpu_stats().in_use_bytes - base == 256 + (1 << 20) + 425984);
  }
  CHECK(cpu_stats().in_use_bytes == base);

  // storage lives as long as its last view
  Tensor view;
  {
    Tensor owner = Tensor::empty({10});
    view = owner.slice(0, 2, 5);
  }
  CHECK(cpu_stats().in_use_bytes - base == 256);
  view = Tensor();
  CHECK(cpu_stats().in_use_bytes == base);
}

TEST_CASE("allocator peak tracking", "[allocator]") {
  nl::allocator_reset_peak(Device::CPU);
  AllocatorStats s0 = cpu_stats();
  CHECK(s0.peak_in_use_bytes == s0.in_use_bytes);
  {
    Tensor big = Tensor::empty({1 << 18});  // 1 MiB
    Tensor small = Tensor::empty({10});     // 256 bytes
  }
  AllocatorStats s1 = cpu_stats();
  CHECK(s1.in_use_bytes == s0.in_use_bytes);
  CHECK(s1.peak_in_use_bytes == s0.in_use_bytes + (1 << 20) + 256);
  {
    Tensor smaller = Tensor::empty({1000});  // below the peak: the peak stays
  }
  CHECK(cpu_stats().peak_in_use_bytes == s1.peak_in_use_bytes);
  nl::allocator_reset_peak(Device::CPU);
  AllocatorStats s2 = cpu_stats();
  CHECK(s2.peak_in_use_bytes == s2.in_use_bytes);
}

TEST_CASE("allocator release_cached gives cached blocks back", "[allocator]") {
  { Tensor t = Tensor::empty({1 << 18}); }  // now at least 1 MiB is cached
  AllocatorStats s0 = cpu_stats();
  CHECK(s0.system_bytes >= s0.in_use_bytes + (1 << 20));
  nl::allocator_release_cached(Device::CPU);
  AllocatorStats s1 = cpu_stats();
  // held = in use + cached, and nothing is cached any more
  CHECK(s1.system_bytes == s1.in_use_bytes);
  CHECK(s1.system_bytes <= s0.system_bytes - (1 << 20));
  CHECK(s1.in_use_bytes == s0.in_use_bytes);
  // the next allocation of that size has to go to the system again
  { Tensor t = Tensor::empty({1 << 18}); }
  AllocatorStats s2 = cpu_stats();
  CHECK(s2.system_allocs == s1.system_allocs + 1);
  CHECK(s2.system_bytes == s1.system_bytes + (1 << 20));
}

TEST_CASE("allocator fresh tensors are 64-byte aligned", "[allocator]") {
  std::vector<Tensor> keep;
  for (int64_t n : {1, 3, 17, 64, 1000, 4097, 70000, 300001}) {
    keep.push_back(Tensor::empty({n}));
    INFO("numel " << n);
    CHECK(reinterpret_cast<std::uintptr_t>(keep.back().data()) % 64 == 0);
  }
  Tensor i = Tensor::zeros({5}, nl::DType::I32);
  CHECK(reinterpret_cast<std::uintptr_t>(i.idata()) % 64 == 0);
  void* raw = nl::device_alloc(Device::CPU, 100);
  CHECK(reinterpret_cast<std::uintptr_t>(raw) % 64 == 0);
  nl::device_free(Device::CPU, raw, 100);
}


TEST_CASE("allocator: a refused system allocation empties the cache, asks once more, then throws nl::Error",
          "[allocator]") {
  nl::allocator_release_cached(Device::CPU);
  { Tensor cached = Tensor::empty({1 << 20}); }  // 4 MiB now cached
  const Tensor held = Tensor::empty({16 << 20});   // 64 MiB in use
  const AllocatorStats before = cpu_stats();
  REQUIRE(before.system_bytes - before.in_use_bytes == (4 << 20));
  // nothing else of note is live, so the message says "64.0 MiB" in use
  REQUIRE(before.in_use_bytes - (64 << 20) < 50 * 1024);
  int asks = 0;
  std::string message;
  {
    HookScope refuse_cpu([&](Device d, size_t) {
      ++asks;
      return d != Device::CPU;
    });
    message = error_making(1 << 28);  // 1 GiB
  }
  INFO(message);
  CHECK(asks == 2);
  CHECK_THAT(message, Contains("out of cpu memory") && Contains("asking for 1.00 GiB (1073741824 bytes)") &&
                          Contains("giving the 4.0 MiB of cached blocks back") && Contains("64.0 MiB are in use"));
  const AllocatorStats after = cpu_stats();
  CHECK(after.system_bytes == after.in_use_bytes);  // nothing cached any more
  CHECK(after.in_use_bytes == before.in_use_bytes);
  CHECK(after.peak_in_use_bytes == before.peak_in_use_bytes);
  CHECK(after.system_allocs == before.system_allocs);
  check_still_serves();
}

TEST_CASE("allocator: when the first ask fails, the ask after emptying the cache is served", "[allocator]") {
  nl::allocator_release_cached(Device::CPU);
  { Tensor cached = Tensor::empty({1 << 20}); }  // 4 MiB cached, none of the size asked for next
  int asks = 0;
  Tensor t;
  {
    HookScope refuse_first([&](Device, size_t) { return ++asks > 1; });
    t = Tensor::empty({3 << 20});  // 12 MiB
  }
  CHECK(asks == 2);
  CHECK(t.numel() == (3 << 20));
  const AllocatorStats s = cpu_stats();
  CHECK(s.system_bytes == s.in_use_bytes);  // the 4 MiB went back before the second ask
}

TEST_CASE("allocator: freeing into the cache asks the system for nothing, even when every ask would fail",
          "[allocator]") {
  std::vector<Tensor> blocks;
  for (int i = 0; i < 100; ++i) blocks.push_back(Tensor::empty({777}));
  const AllocatorStats before = cpu_stats();
  int asks = 0;
  HookScope refuse_all([&](Device, size_t) {
    ++asks;
    return false;
  });
  CHECK_NOTHROW(blocks.clear());
  CHECK(cpu_stats().in_use_bytes == before.in_use_bytes - 100 * 3328);  // 777 floats: the 3328-byte class
  // and the freed blocks are what the next 100 of that size get
  for (int i = 0; i < 100; ++i) CHECK_NOTHROW(blocks.push_back(Tensor::empty({777})));
  CHECK(asks == 0);
  CHECK(cpu_stats().system_allocs == before.system_allocs);
  CHECK(cpu_stats().in_use_bytes == before.in_use_bytes);
}

#if NL_COUNTS_OPERATOR_NEW
TEST_CASE("allocator: returning blocks to the cache allocates nothing (no operator new on the free path)",
          "[allocator]") {
  // 1000 blocks of a size no other test uses: a free list that grew on each return
  // would have to allocate several times on the way to 1000 entries
  std::vector<Tensor> blocks(1000);
  for (auto& b : blocks) b = Tensor::empty({1111});
  const int64_t news = operator_new_calls.load();
  for (auto& b : blocks) b = Tensor();  // each assignment frees one block
  CHECK(operator_new_calls.load() == news);
}
#endif

TEST_CASE("allocator: a size no system can give (256 TiB) is an nl::Error naming it, and the allocator goes on",
          "[allocator]") {
  // 2^46 floats = 2^48 bytes, more than the 2^47 bytes of a process's address space:
  // malloc refuses it whatever the machine, and no hook is involved
  const AllocatorStats before = cpu_stats();
  const std::string message = error_making(int64_t(1) << 46);
  INFO(message);
  CHECK_THAT(message, Contains("out of cpu memory") && Contains("asking for 256.00 TiB"));
  CHECK(cpu_stats().in_use_bytes == before.in_use_bytes);
  CHECK(cpu_stats().system_allocs == before.system_allocs);
  check_still_serves();
}

// Kept to this file: the test folder is also compiled as one translation unit.
#undef NL_COUNTS_OPERATOR_NEW
