// Tests of split_list (train/io/text_fields.h), which every list flag (--norms, --configs,
// --threads, ...) goes through.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

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

TEST_CASE("FlagParser: a value that is not UTF-8 is refused before anything is stored; UTF-8 text is kept", "[cli]") {
  auto parse_out = [](const std::string& value) {
    std::string out = "runs/x";
    FlagParser p("prog", "a test");
    p.text("--out", out, "a folder", FlagRole::Setting);
    p.parse(std::vector<std::string>{"--out", value});
    (void)p.values().dump();  // config.json: must not throw for any accepted value
    return out;
  };
  CHECK(parse_out("runs/caf\xc3\xa9") == "runs/caf\xc3\xa9");                // é, two bytes
  CHECK(parse_out("runs/\xf0\x9f\x98\x80") == "runs/\xf0\x9f\x98\x80");      // an emoji, four bytes
  for (const std::string bad : {"\x91", "runs/\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    INFO("value of " << bad.size()
                     << " bytes");  // a stray continuation byte, a cut sequence, overlong, surrogate, > U+10FFFF
    CHECK_THROWS_WITH(parse_out(bad), Catch::Contains("argument 2 (after --out) is not valid UTF-8"));
  }
}

TEST_CASE("FlagParser: a positive float flag refuses a value that rounds to 0 in single precision", "[cli]") {
  auto parse_lr = [](const std::string& value) {
    float lr = 1e-3f;
    FlagParser p("prog", "a test");
    p.positive("--lr", lr, 1e35, "a rate");
    p.parse(std::vector<std::string>{"--lr", value});
    return lr;
  };
  CHECK(parse_lr("3e-4") == 3e-4f);
  CHECK(parse_lr("1e-44") > 0.0f);  // a denormal float is still positive and kept
  // 7e-62 is above 0 as a double (the range check passes) but is 0 as a float: found by make fuzz
  CHECK_THROWS_WITH(parse_lr("7e-62"), Catch::Contains("--lr must be positive") && Catch::Contains("rounds to 0"));
  CHECK_THROWS_WITH(parse_lr("0"), Catch::Contains("--lr must lie in (0"));
}
