// Helpers of the [cuda] parity tests: the CPU op is the oracle, the CUDA op must agree
// within |cuda - cpu| <= atol + rtol * |cpu| on random inputs of non-round shapes.
// Without a GPU these tests are not run at all: scripts/run-tests.sh reports them as
// skipped. Run by hand on a machine without one, they fail (never pass silently).
#pragma once
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace nl::test {

#define REQUIRE_GPU()                                                                                 \
  do {                                                                                                \
    if (!::nl::cuda_available()) FAIL("no CUDA GPU here: the [cuda] tests need one (make test skips them)"); \
  } while (0)

inline Tensor gpu(const Tensor& t) { return t.to(Device::CUDA); }

// A CUDA result against the CPU oracle: on the GPU, and close.
#define CHECK_PARITY(cuda_result, cpu_result, rtol, atol)        \
  do {                                                           \
    const ::nl::Tensor _c = (cuda_result);                       \
    CHECK(_c.device() == ::nl::Device::CUDA);                    \
    CHECK_CLOSE(_c, (cpu_result), (rtol), (atol));               \
  } while (0)

// fp32 on two devices, different summation orders: a few ulps per op
constexpr double kRtol = 1e-5, kAtol = 1e-6;

}  // namespace nl::test
