// Tests that need something from outside the repository carry a tag naming it:
//   [needs-fortunes]       the text of Debian's fortunes, /usr/share/games/fortunes
//   [needs-fashion-mnist]  the four files of Debian's dataset-fashion-mnist
//   [needs-mpi]            mpirun and this build's MPI twin (<build>-mpi/train_gpt)
//   [needs-unshare]        `unshare -rm`: a private user and mount namespace
//   [needs-gnuplot]        gnuplot on the PATH (Debian's gnuplot-nox draws the plots)
//   [needs-address-limit]  this build's programs start under `ulimit -v` (not under
//                          AddressSanitizer, whose shadow memory reserves terabytes)
// scripts/run-tests.sh first runs each one's hidden probe ([needs-fortunes-probe], ...,
// tests/train/test_needs_probes.cpp), and where a resource is missing it leaves that
// resource's tests out and counts them as skipped, naming the reason. So a test that
// runs has been promised what it needs: it starts with REQUIRE_RESOURCE(missing_X()),
// which fails it, never passes it, when the resource is missing after all (the binary
// run by hand).
#pragma once
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/test_files.h"
#include "train/data/fashion_mnist.h"

namespace nl::test {

constexpr const char* kFortunesDir = "/usr/share/games/fortunes";
// The data-parallel train_gpt of this build's flags plus MPI=1 (build/release-mpi/...)
inline const std::string kMpiTrainGpt = ::nl::test::build_dir() + "-mpi/train_gpt";
inline const std::string kMpiDepthStudy = ::nl::test::build_dir() + "-mpi/depth_study";

// mpirun's full path (spawn_program takes no shell), "" when it is not installed.
inline std::string mpirun_path() {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    const std::string p = std::string(dir) + "/mpirun";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// Each says why its resource is missing and how to get it; "" when it is there.
inline std::string missing_fortunes() {
  if (std::filesystem::is_directory(kFortunesDir)) return "";
  return std::string(kFortunesDir) + " is missing (apt-get install fortunes)";
}

inline std::string missing_fashion_mnist() {
  for (const char* file : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                           "t10k-labels-idx1-ubyte.gz"}) {
    const std::string path = std::string(kFashionMnistDir) + "/" + file;
    if (!std::filesystem::exists(path)) return path + " is missing (apt-get install dataset-fashion-mnist)";
  }
  return "";
}

inline std::string missing_mpi() {
  if (mpirun_path().empty()) return "mpirun is missing (apt-get install openmpi-bin libopenmpi-dev, then make MPI=1)";
  for (const std::string& program : {kMpiTrainGpt, kMpiDepthStudy})
    if (!std::filesystem::exists(program))
      return program + " is not built (make MPI=1 with this build's other flags builds it)";
  return "";
}

inline std::string missing_gnuplot() {
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) return "";
  return "gnuplot is missing (apt-get install gnuplot-nox)";
}

inline std::string missing_unshare() {
  if (std::system("unshare -rm true >/dev/null 2>&1") == 0) return "";
  return "unshare -rm (a private user and mount namespace) fails here: util-linux is missing, or the kernel "
         "allows no unprivileged user namespaces";
}

// The address-space limit the memory fault tests run the programs under (`ulimit -v`,
// KiB): 1.4 GiB, where the tiny runs map about 0.3 GiB (OpenBLAS's buffers among it).
constexpr long kAddressLimitKib = 1500000;

inline std::string missing_address_limit() {
  const std::string program = build_dir() + "/train_gpt";
  const std::string cmd = "timeout -k 5 60 bash -c 'ulimit -v " + std::to_string(kAddressLimitKib) + "; exec " +
                          program + " --help' >/dev/null 2>&1";
  if (std::system(cmd.c_str()) == 0) return "";
  return program + " does not start under ulimit -v " + std::to_string(kAddressLimitKib) +
         " (a sanitizer build reserves more address space than that)";
}

// A program the test runs is built (make builds every program before the tests): fails
// the test, naming the program, when it is not.
inline bool program_built(const std::string& program) {
  if (std::filesystem::exists(program)) return true;
  FAIL_CHECK(program << " is not built (make " << program << ")");
  return false;
}

// `program --help`: exit 0, nothing on stderr; its text.
inline std::string help_text(const std::string& program, const TempDir& scratch) {
  const RunResult r = run_program(program, "--help", scratch);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  return r.out;
}
}  // namespace nl::test

// Fails the test, naming what is missing, unless `missing` (a missing_X() above) is "".
#define REQUIRE_RESOURCE(missing)                                                              \
  do {                                                                                         \
    const std::string _missing = (missing);                                                    \
    if (!_missing.empty()) FAIL(_missing << " (this test needs it; make test skips it then)"); \
  } while (0)
