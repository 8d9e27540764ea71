// The caching allocator: after a first round, repeating the same allocations never
// reaches the system allocator; the counters track use, peak and cached bytes.
// The allocator is process-wide, so every check here is on differences of counters.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "tensor/allocator.h"
#include "tensor/tensor.h"

using nl::AllocatorStats;
using nl::Device;
using nl::Tensor;

static AllocatorStats cpu_stats() { return nl::allocator_stats(Device::CPU); }

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

// A system allocation that fails must not leave its bytes counted as in use.
// Without CUDA every CUDA allocation fails, which makes this checkable on any machine.
TEST_CASE("allocator failed system allocation leaves the counters unchanged", "[allocator]") {
  if (nl::cuda_available()) {
    WARN("built with CUDA and a GPU answered: no failing allocation to provoke");
    return;
  }
  AllocatorStats before = nl::allocator_stats(Device::CUDA);
  CHECK_THROWS_AS(Tensor::empty({1000}, nl::DType::F32, Device::CUDA), nl::Error);
  AllocatorStats after = nl::allocator_stats(Device::CUDA);
  CHECK(after.in_use_bytes == before.in_use_bytes);
  CHECK(after.peak_in_use_bytes == before.peak_in_use_bytes);
  CHECK(after.system_allocs == before.system_allocs);
}
