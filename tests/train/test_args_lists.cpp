// Tests of split_list (train/flags/flag_parser.h), which every list flag (--norms, --configs,
// --threads, ...) goes through.
#include <catch2/catch.hpp>

#include "train/flags/flag_parser.h"

using namespace nl;
using V = std::vector<std::string>;

TEST_CASE("split_list: items in order, empty items dropped, another separator", "[cli]") {
  CHECK(split_list("ln,rms,cbwc") == V{"ln", "rms", "cbwc"});
  CHECK(split_list(",ln,,rms,") == V{"ln", "rms"});
  CHECK(split_list("").empty());
  CHECK(split_list("a b", ',') == V{"a b"});
  CHECK(split_list("1;2;3", ';') == V{"1", "2", "3"});
}
