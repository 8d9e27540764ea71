// configure_runtime's choice of OpenBLAS kernels (tensor/threads.h): the test binary's
// main calls it, as every program does, so the products these tests run went through
// it. On a CPU with AVX2 or AVX-512 the kernels must not be OpenBLAS's pre-AVX fallback,
// which ran sgemm 7x slower on a CPU model OpenBLAS 0.3.21 did not know.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "tensor/threads.h"

using namespace nl;

TEST_CASE("OpenBLAS's pre-AVX kernel families are told from the AVX ones", "[blas]") {
  for (const char* old : {"Prescott", "Core2", "Penryn", "Nehalem", "Atom"}) CHECK(pre_avx_blas_core(old));
  for (const char* modern : {"SkylakeX", "Haswell", "Zen", "Cooperlake", "SapphireRapids", "Sandybridge"})
    CHECK_FALSE(pre_avx_blas_core(modern));
}

TEST_CASE("the products run on OpenBLAS kernels for this CPU's vector instructions", "[blas]") {
  const BlasCore core = blas_core();
  INFO("OpenBLAS core: " << core.name << ", this CPU's: " << blas_core_for_this_cpu());
  REQUIRE_FALSE(core.name.empty());
  const char* user_choice = std::getenv("OPENBLAS_CORETYPE");
  if (user_choice != nullptr && *user_choice != '\0' && !core.chosen_by_normlab) {
    SUCCEED("OPENBLAS_CORETYPE=" << user_choice << " was set by the user: kept as it is");
    return;
  }
  if (!blas_core_for_this_cpu().empty()) CHECK_FALSE(pre_avx_blas_core(core.name));
  // what configure_runtime chose is what OpenBLAS runs
  if (core.chosen_by_normlab) CHECK(core.name == blas_core_for_this_cpu());
}
