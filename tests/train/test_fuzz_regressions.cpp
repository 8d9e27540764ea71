// Replays every input kept for the fuzz targets, the seeds (fuzz/corpus/<target>/) and
// the inputs of crashes found and fixed (fuzz/regressions/<target>/), through the same
// harness code that libFuzzer runs (fuzz/fuzz_*.cpp), so `make test` guards the fixes
// without clang. Each input must load or be refused with nl::Error; the harness aborts
// (and this test binary with it) on anything else.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/sanitizer_build.h"
#include "tests/test_files.h"

#define NL_FUZZ_NO_MAIN
#include "fuzz/fuzz_args.cpp"
#include "fuzz/fuzz_idx.cpp"
#include "fuzz/fuzz_safetensors.cpp"
#undef NL_FUZZ_NO_MAIN  // not for the test files compiled after this one in the same object

namespace fs = std::filesystem;

namespace {

// Runs `one` on every file of fuzz/corpus/<target> and fuzz/regressions/<target>;
// returns how many there were.
int replay(const std::string& target, int (*one)(const uint8_t*, size_t)) {
  int n = 0;
  for (const std::string& dir : {"fuzz/corpus/" + target, "fuzz/regressions/" + target}) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_regular_file()) continue;
      const std::string bytes = nl::test::read_bytes(e.path().string());
      INFO(e.path().string());
      CHECK(one(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()) == 0);
      ++n;
    }
  }
  return n;
}

}  // namespace

TEST_CASE("fuzz regressions: every kept input of the three fuzz targets loads or is refused", "[fuzz]") {
  REQUIRE(fs::is_directory("fuzz/corpus"));  // run from the repository root, as make test does
  CHECK(replay("safetensors", nl::fuzz::safetensors_one) >= 3);
  CHECK(replay("idx", nl::fuzz::idx_one) >= 4);
  CHECK(replay("args", nl::fuzz::args_one) >= 4);
}

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

TEST_CASE("fuzz regressions: an IDX header claiming 4 billion items is refused without allocating them", "[fuzz]") {
  if (nl::test::kSanitizerBuild) {
    WARN("skipped under a sanitizer: its shadow memory does not fit an address-space limit");
    return;
  }
  // in a child limited to 1 GiB of address space: the old reader allocated the 4 GiB the
  // header announced before reading, and died of it
  for (const char* input : {"fuzz/regressions/idx/labels_count_4g", "fuzz/regressions/idx/images_count_4g"}) {
    INFO(input);
    REQUIRE(fs::exists(input));
    const pid_t pid = fork();
    if (pid == 0) {
      rlimit limit{1L << 30, 1L << 30};
      setrlimit(RLIMIT_AS, &limit);
      try {
        if (std::string(input).find("labels") != std::string::npos) nl::read_idx_labels(input);
        else nl::read_idx_images(input);
      } catch (const nl::Error& e) {
        _exit(std::string(e.what()).find("truncated") != std::string::npos ? 0 : 2);
      } catch (...) {
        _exit(3);  // std::bad_alloc
      }
      _exit(4);
    }
    const int status = nl::test::wait_child(pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}
