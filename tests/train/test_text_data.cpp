// Tests of the fortunes loader (on a directory the test builds, and on the real package
// when it is installed) and of the batch sampler's windows, range and determinism.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/needs.h"
#include "train/data/text_data.h"
#include "tests/test_files.h"  // TempDir, write_bytes

using namespace nl;
using namespace nl::test;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// Byte i is i: a window's first input then tells where it started.
std::vector<uint8_t> counting(int n) {
  std::vector<uint8_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = (uint8_t)i;
  return v;
}

}  // namespace

TEST_CASE("text_data loads top-level text files in name order and splits 90/10", "[text_data]") {
  TempDir dir;
  const std::string a(60, 'a');
  const std::string d = std::string(30, 'd') + std::string(10, 'v');
  // Written out of order; .dat indexes, .u8 names and subdirectories are skipped.
  write_bytes(dir.sub("d"), d);
  write_bytes(dir.sub("c.u8"), "links to a text in the package: skipped");
  write_bytes(dir.sub("b.dat"), "strfile index: skipped");
  write_bytes(dir.sub("a"), a);
  fs::create_directories(dir.path / "e");
  write_bytes(dir.sub("e/inner"), "below the top level: skipped");

  TextData t = load_fortunes(dir.path.string());
  REQUIRE(t.train.size() == 90);
  REQUIRE(t.val.size() == 10);
  CHECK(t.train == bytes(a + d.substr(0, 30)));
  CHECK(t.val == bytes(std::string(10, 'v')));

  // 90 % of 101 bytes rounds down to 90 training bytes.
  write_bytes(dir.sub("f"), "!");
  t = load_fortunes(dir.path.string());
  CHECK(t.train.size() == 90);
  CHECK(t.val == bytes(std::string(10, 'v') + "!"));
}

TEST_CASE("text_data train_bytes keeps a prefix of the training text", "[text_data]") {
  TempDir dir;
  write_bytes(dir.sub("a"), "0123456789abcdefghij");  // 20 bytes: 18 train, 2 val
  TextData t = load_fortunes(dir.path.string(), 5);
  CHECK(t.train == bytes("01234"));
  CHECK(t.val == bytes("ij"));
  CHECK(load_fortunes(dir.path.string(), 18).train.size() == 18);
  CHECK(load_fortunes(dir.path.string(), 0).train.empty());
  REQUIRE_THROWS_WITH(load_fortunes(dir.path.string(), 19), Contains("train_bytes 19 exceeds the 18 training bytes"));
}

TEST_CASE("text_data missing text names --data and the folder; only the package's folder says to install it",
          "[text_data]") {
  TempDir dir;
  const std::string missing = (dir.path / "absent").string();
  REQUIRE_THROWS_AS(load_fortunes(missing), nl::Error);
  REQUIRE_THROWS_WITH(load_fortunes(missing), "--data " + missing + ": no such folder");
  write_bytes(dir.sub("only.dat"), "an index without its text");
  REQUIRE_THROWS_WITH(load_fortunes(dir.path.string()), Contains("--data " + dir.path.string() + ": no text files"));
  write_bytes(dir.sub("file"), "x");
  REQUIRE_THROWS_WITH(load_fortunes(dir.sub("file")), "--data " + dir.sub("file") + " is not a folder");
  if (!std::filesystem::is_directory(nl::kFortunesPackageDir))
    REQUIRE_THROWS_WITH(load_fortunes(nl::kFortunesPackageDir), Contains("apt-get install fortunes"));
}

TEST_CASE("text_data batcher targets are the inputs shifted by one", "[text_data]") {
  const std::vector<uint8_t> data = counting(200);
  const int64_t B = 4, T = 8;
  TextBatcher batcher(data, T, 1);
  Tensor x, y;
  batcher.next(B, x, y);
  REQUIRE(x.shape() == Shape{B, T});
  REQUIRE(y.shape() == Shape{B, T});
  REQUIRE(x.dtype() == DType::I32);
  REQUIRE(y.dtype() == DType::I32);
  for (int64_t b = 0; b < B; ++b) {
    const int32_t start = x.idata()[b * T];
    for (int64_t t = 0; t < T; ++t) {
      CHECK(x.idata()[b * T + t] == data[start + t]);
      CHECK(y.idata()[b * T + t] == data[start + t + 1]);
    }
  }

  // Tensors of the right shape are filled in place; others are replaced.
  Tensor x_before = x;
  batcher.next(B, x, y);
  CHECK(x.shares_storage(x_before));
  batcher.next(B + 1, x, y);
  CHECK(x.shape() == Shape{B + 1, T});
}

TEST_CASE("text_data batcher starts cover exactly [0, size - T - 1]", "[text_data]") {
  const int64_t T = 8, B = 16;
  const std::vector<uint8_t> data = counting(200);  // starts 0 .. 191
  TextBatcher batcher(data, T, 123);
  Tensor x, y;
  int32_t lo = 1000, hi = -1;
  std::vector<int> hits(192, 0);
  // 3200 draws over 192 starts: any one start is missed with probability ~6e-8.
  for (int step = 0; step < 200; ++step) {
    batcher.next(B, x, y);
    for (int64_t b = 0; b < B; ++b) {
      const int32_t s = x.idata()[b * T];
      lo = std::min(lo, s);
      hi = std::max(hi, s);
      if (s >= 0 && s < 192) ++hits[s];
    }
  }
  CHECK(lo == 0);
  CHECK(hi == 191);
  CHECK(std::count(hits.begin(), hits.end(), 0) == 0);

  // Data of exactly T + 1 bytes has one window.
  TextBatcher one(counting(9), T, 7);
  one.next(3, x, y);
  for (int64_t b = 0; b < 3; ++b) CHECK(x.idata()[b * T] == 0);
}

TEST_CASE("text_data batcher is deterministic per seed and restorable from its state", "[text_data]") {
  const std::vector<uint8_t> data = counting(250);
  auto draw = [](TextBatcher& b) {
    Tensor x, y;
    b.next(8, x, y);
    return x.to_ints();
  };
  TextBatcher a(data, 16, 42), same(data, 16, 42), other(data, 16, 43);
  const auto first = draw(a);
  CHECK(first == draw(same));
  CHECK(first != draw(other));

  const std::vector<uint64_t> state = a.generator().state();
  const auto second = draw(a);
  CHECK(second != first);
  a.generator().set_state(state);
  CHECK(draw(a) == second);
}

TEST_CASE("text_data batcher rejects text too short for one window", "[text_data]") {
  REQUIRE_THROWS_WITH(TextBatcher(counting(8), 8, 0), Contains("too few for one window"));
  REQUIRE_THROWS_AS(TextBatcher({}, 1, 0), nl::Error);
  REQUIRE_NOTHROW(TextBatcher(counting(9), 8, 0));
}

TEST_CASE("text_data fixed_batches gives the same batches on every call", "[text_data]") {
  const std::vector<uint8_t> data = counting(100);
  auto a = fixed_batches(data, 10, 3, 5, 9);
  auto b = fixed_batches(data, 10, 3, 5, 9);
  REQUIRE(a.size() == 5);
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].first.shape() == Shape{3, 10});
    CHECK(a[i].first.to_ints() == b[i].first.to_ints());
    CHECK(a[i].second.to_ints() == b[i].second.to_ints());
    if (i > 0) CHECK(!a[i].first.shares_storage(a[0].first));  // each batch has its own tensors
  }
  CHECK(a[0].first.to_ints() != a[1].first.to_ints());
}

TEST_CASE("text_data loads the installed fortunes package", "[text_data][needs-fortunes]") {
  REQUIRE_RESOURCE(nl::test::missing_fortunes());
  TextData t = load_fortunes(nl::test::kFortunesDir);
  const size_t total = t.train.size() + t.val.size();
  CHECK(total > 1000000);
  CHECK(t.train.size() == total * 9 / 10);
  // English text: mostly printable ASCII, with newlines between lines.
  const auto printable = std::count_if(t.val.begin(), t.val.end(),
                                       [](uint8_t c) { return (c >= 32 && c < 127) || c == '\n'; });
  CHECK(printable > (long)(0.95 * t.val.size()));
}
