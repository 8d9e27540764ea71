// Hidden tests (never run unless asked for by their tag): scripts/run-tests.sh runs
// `run_tests "[needs-X-probe]"` for each resource of tests/needs.h to learn whether it
// is there, and skips the [needs-X] tests when it is not. A failing probe prints
// "missing: <why>" first, the line the script quotes as the reason.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "tests/needs.h"

namespace {

void probe(const std::string& missing) {
  if (missing.empty()) return;
  std::printf("missing: %s\n", missing.c_str());
  std::fflush(stdout);
  FAIL(missing);
}

}  // namespace

TEST_CASE("needs probe: fortunes", "[.needs-fortunes-probe]") { probe(nl::test::missing_fortunes()); }
TEST_CASE("needs probe: fashion-mnist", "[.needs-fashion-mnist-probe]") { probe(nl::test::missing_fashion_mnist()); }
TEST_CASE("needs probe: mpi", "[.needs-mpi-probe]") { probe(nl::test::missing_mpi()); }
TEST_CASE("needs probe: gnuplot", "[.needs-gnuplot-probe]") { probe(nl::test::missing_gnuplot()); }
TEST_CASE("needs probe: unshare", "[.needs-unshare-probe]") { probe(nl::test::missing_unshare()); }
TEST_CASE("needs probe: address-limit", "[.needs-address-limit-probe]") { probe(nl::test::missing_address_limit()); }
