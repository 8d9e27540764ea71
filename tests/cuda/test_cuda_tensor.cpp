// [cuda] Tensors on the GPU: host <-> device copies, strided views, fill, the caching
// allocator, and the error for inputs on two devices.
#include "tensor/allocator.h"
#include "tensor/cuda/kernels.h"
#include "tests/cuda/cuda_test.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;

TEST_CASE("cuda: to, copy_from, contiguous and item round-trip", "[cuda]") {
  REQUIRE_GPU();
  Generator gen(11);
  Tensor x = gen.normal({5, 7, 3});
  Tensor d = gpu(x);
  CHECK(d.device() == Device::CUDA);
  CHECK(d.to_vector() == x.to_vector());  // exact: a copy
  // a permuted (strided) view made contiguous on the GPU equals the CPU's
  CHECK(d.permute({2, 0, 1}).contiguous().to_vector() == x.permute({2, 0, 1}).contiguous().to_vector());
  // strided destination on the GPU, source on the host
  Tensor big = Tensor::zeros({7, 5, 3}, DType::F32, Device::CUDA);
  Tensor window = big.transpose(0, 1);
  window.copy_from(x);
  CHECK(big.to_vector() == x.transpose(0, 1).contiguous().to_vector());
  // strided source on the GPU into a strided host view
  Tensor host = Tensor::zeros({3, 7, 5});
  Tensor host_view = host.permute({2, 1, 0});
  host_view.copy_from(d);
  CHECK(host_view.contiguous().to_vector() == x.to_vector());
  CHECK(gpu(Tensor::scalar(2.5f)).item() == 2.5f);
  // int32 ids survive the trip
  Tensor ids = Tensor::from_ints({3, -1, 7, 2147483647}, {4});
  CHECK(gpu(ids).to_ints() == ids.to_ints());
}

TEST_CASE("cuda: overlapping views of one storage copy like memmove", "[cuda]") {
  REQUIRE_GPU();
  Tensor x = Tensor::arange(10);
  Tensor d = gpu(x);
  Tensor dst = d.slice(0, 1, 10), src = d.slice(0, 0, 9);
  dst.copy_from(src);
  Tensor h = x.clone();
  Tensor hd = h.slice(0, 1, 10);
  hd.copy_from(h.slice(0, 0, 9));
  CHECK(d.to_vector() == h.to_vector());
}

TEST_CASE("cuda: fill_ of contiguous and strided views, float and int", "[cuda]") {
  REQUIRE_GPU();
  Tensor d = Tensor::zeros({4, 6}, DType::F32, Device::CUDA);
  Tensor col = d.slice(1, 1, 6, 2);
  col.fill_(3.5f);
  Tensor h = Tensor::zeros({4, 6});
  Tensor hcol = h.slice(1, 1, 6, 2);
  hcol.fill_(3.5f);
  CHECK(d.to_vector() == h.to_vector());
  Tensor i = Tensor::zeros({5}, DType::I32, Device::CUDA);
  i.fill_(-4.0f);
  CHECK(i.to_ints() == std::vector<int32_t>(5, -4));
}

TEST_CASE("cuda: inputs on two devices are refused, naming both", "[cuda]") {
  REQUIRE_GPU();
  Tensor a = Tensor::ones({2, 3});
  Tensor b = Tensor::ones({3}, Device::CUDA);
  REQUIRE_THROWS_WITH(add(a, b), Contains("add: inputs on different devices") &&
                                     Contains("float32 (2, 3) on cpu") && Contains("float32 (3) on cuda"));
  REQUIRE_THROWS_WITH(matmul(gpu(a), a.transpose(0, 1)), Contains("matmul") && Contains("different devices"));
}

TEST_CASE("cuda: the caching allocator hands blocks back without cudaMalloc", "[cuda]") {
  REQUIRE_GPU();
  { Tensor warm = Tensor::empty({12345}, DType::F32, Device::CUDA); }
  const int64_t before = allocator_stats(Device::CUDA).system_allocs;
  for (int i = 0; i < 10; ++i) {
    Tensor t = Tensor::empty({12345}, DType::F32, Device::CUDA);
  }
  CHECK(allocator_stats(Device::CUDA).system_allocs == before);
}
