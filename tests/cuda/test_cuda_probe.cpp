// A hidden test (never run unless asked for by its tag): scripts/run-tests.sh runs
// `run_tests "[cuda-probe]"` to learn whether this binary can use a GPU, and skips the
// [cuda] tests when it cannot.
#include <catch2/catch.hpp>

#include "tensor/device.h"

TEST_CASE("cuda probe: this build has CUDA and a GPU answered", "[.cuda-probe]") { REQUIRE(nl::cuda_available()); }
