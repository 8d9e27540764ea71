// What the tests of the study programs (compare_norms, depth_study, regime_study) share:
// a tiny grid run into a scratch folder, and the check that each bad setting is refused
// before any run starts (the programs' paths are in tests/test_files.h).
#pragma once
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_files.h"
#include "tests/train/run_fixtures.h"

namespace nl::test {

// `program common --out out FLAGS` for each (FLAGS, needle) of `cases`: exit 2, one line
// on stderr holding the needle, and `out` never made.
inline void expect_each_refused(const std::string& program, const std::string& common, const std::string& out,
                                const std::vector<std::pair<std::string, std::string>>& cases, const TempDir& tmp) {
  for (const auto& [flags, needle] : cases) {
    const RunResult r = run_program(program, common + " --out " + out + " " + flags, tmp);
    INFO(flags << "\nstderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains(needle));
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

// A study program's tiny grid in a scratch folder: OUT is tmp/runs, the report tmp/doc/NAME.
struct TinyStudy {
  std::string program, flags, runs, doc;
  TinyStudy(const std::string& program, const std::string& flags, const TempDir& tmp, const std::string& name)
      : program(program), flags(flags), runs(tmp.sub("runs")), doc(tmp.sub("doc") + "/" + name) {
    std::filesystem::create_directories(tmp.sub("doc"));
  }
  // Runs the study (then `extra`, e.g. " --reuse"); requires exit 0 and returns the report.
  std::string run(const TempDir& tmp, const std::string& extra = "") const {
    const RunResult r = run_program(program, flags + " --out " + runs + " --doc " + doc + extra, tmp);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.code == 0);
    return read_bytes(doc);
  }
};

}  // namespace nl::test
