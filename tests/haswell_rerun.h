// OpenBLAS picks its kernel family once, when it loads, and whether its own threading
// changed a product's bits depended on the family: with the Haswell kernels every linear
// product of a demo-sized step did, with this project's AVX-512 machine's Cooperlake ones
// none did. So a test of "the same bits at any thread count" also runs itself under the
// Haswell kernels, which any CPU with AVX2 and FMA runs (tensor/cpu/gemm.h).
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tensor/threads.h"
#include "tests/sanitizer_build.h"
#include "tests/test_files.h"

namespace nl::test {

// Runs this test binary on the test named `name` (a Catch test spec; no single quotes)
// with OPENBLAS_CORETYPE=Haswell. True when that run passed, or when there is nothing to
// run: already under the Haswell kernels, a CPU without AVX2 and FMA, or a sanitizer
// build (the plain build's run covers it, at a fraction of the time). `output` gets what
// the run printed.
inline bool passes_under_haswell(const std::string& name, std::string& output) {
  if (kSanitizerBuild) return true;
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  if (blas_core_for_this_cpu().empty() || (core != nullptr && std::string(core) == "Haswell")) return true;
  TempDir tmp;
  const RunResult r = run_program(
      "env OPENBLAS_CORETYPE=Haswell " + std::filesystem::read_symlink("/proc/self/exe").string(), "'" + name + "'",
      tmp);
  output = r.out + r.err;
  return r.code == 0;
}

}  // namespace nl::test
