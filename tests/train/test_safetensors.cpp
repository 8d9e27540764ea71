// Tests of the safetensors reader and writer: round trips, the exact bytes of a small
// file derived by hand from the format's definition, each kind of corrupt file, and the
// atomic write.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "train/io/safetensors.h"
#include "tests/test_files.h"  // TempDir, read_bytes, write_bytes

using namespace nl;
using namespace nl::test;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// An 8-byte little-endian length, then the header, then the data: a file as a writer
// that does not know our checks might make it.
std::string file_with_header(const std::string& header, const std::string& data) {
  std::string out;
  for (int k = 0; k < 8; ++k) out += (char)(((uint64_t)header.size() >> (8 * k)) & 0xFF);
  return out + header + data;
}

// Little-endian bytes of one float32, via its IEEE-754 bit pattern given in hex.
std::string le32(uint32_t bits) {
  std::string s;
  for (int k = 0; k < 4; ++k) s += (char)((bits >> (8 * k)) & 0xFF);
  return s;
}

}  // namespace

TEST_CASE("safetensors round trip keeps values, shapes, dtypes and metadata", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.sub("ckpt.safetensors");
  Tensor w = Tensor::from_vector({-1.5f, 0.0f, 2.25f, -3e-8f, 1e30f, -0.0f}, {2, 3});
  std::map<std::string, Tensor> tensors{
      {"blocks.0.attn.weight", w},
      {"scalar", Tensor::scalar(-7.125f)},
      {"ids", Tensor::from_ints({-2147483647 - 1, -1, 0, 42, 2147483647}, {5})},
      {"empty", Tensor::zeros({0, 3})},
      {"transposed", w.transpose(0, 1)},  // a strided view: written as its contiguous copy
  };
  std::map<std::string, std::string> metadata{
      {"step", "1200"},
      {"generator_state", "18446744073709551615 1 0 0"},
      {"quoted \"name\"", "back\\slash, new\nline, tab\t, bell\x07, caf\xc3\xa9"},
      {"empty", ""},
  };
  save_safetensors(path, tensors, metadata);
  SafetensorsFile f = load_safetensors(path);

  CHECK(f.metadata == metadata);
  REQUIRE(f.tensors.size() == tensors.size());
  for (const auto& [name, t] : tensors) {
    INFO("tensor " << name);
    REQUIRE(f.tensors.count(name) == 1);
    const Tensor& got = f.tensors.at(name);
    CHECK(got.shape() == t.shape());
    CHECK(got.dtype() == t.dtype());
    CHECK(got.is_contiguous());
    if (t.dtype() == DType::F32) CHECK(got.to_vector() == t.to_vector());  // bit-exact, not close
    else CHECK(got.to_ints() == t.to_ints());
  }
  CHECK(f.tensors.at("scalar").dim() == 0);
  CHECK(std::signbit(f.tensors.at("blocks.0.attn.weight").to_vector()[5]));  // -0.0 stays negative
  CHECK(!fs::exists(path + ".tmp"));

  // No tensors and no metadata is still a valid file.
  save_safetensors(path, {}, {});
  f = load_safetensors(path);
  CHECK(f.tensors.empty());
  CHECK(f.metadata.empty());
}

TEST_CASE("safetensors file bytes match the hand-written layout", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.sub("small.safetensors");
  save_safetensors(path, {{"x", Tensor::from_vector({1.0f, -2.0f}, {2})}}, {{"step", "7"}});

  // The header JSON is 82 characters, counted piece by piece:
  //   { "__metadata__" : {"step":"7"} , "x" : { "dtype" : "F32" , "shape" : [2] ,
  //   1 +    14       +1+     12      +1+ 3 +1+1+   7   +1+  5  +1+   7   +1+ 3 +1
  //   "data_offsets" : [0,8] } }
  //        14       +1+  5  +1+1   = 82
  // padded with 6 spaces to 88, the next multiple of 8; 88 = 0x58.
  std::string expected;
  expected += std::string("\x58\0\0\0\0\0\0\0", 8);
  expected += "{\"__metadata__\":{\"step\":\"7\"},\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  expected += "      ";
  expected += std::string("\x00\x00\x80\x3f", 4);  // 1.0f  = 0x3F800000, little-endian
  expected += std::string("\x00\x00\x00\xc0", 4);  // -2.0f = 0xC0000000
  REQUIRE(expected.size() == 8 + 88 + 8);
  CHECK(read_bytes(path) == expected);
}

TEST_CASE("safetensors reads headers other writers make: whitespace, escapes, I64", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.sub("other.safetensors");
  // Pretty-printed, keys in another order, a \u escape (U+00E9) and a surrogate pair
  // (U+1F600) in names, tensors listed out of data order, and int64 data.
  const std::string header =
      "{\n  \"b\\u00e9\" : {\"shape\": [], \"dtype\": \"F32\", \"data_offsets\": [16, 20]},\n"
      "  \"__metadata__\": {\"k\\\"\\\\\\/\\n\": \"\\ud83d\\ude00\"},\n"
      "  \"n\": {\"dtype\": \"I64\", \"shape\": [2], \"data_offsets\": [0, 16]}\n}";
  std::string data;
  data += std::string("\xfd\xff\xff\xff\xff\xff\xff\xff", 8);  // -3 as int64
  data += std::string("\x05\x00\x00\x00\x00\x00\x00\x00", 8);  // 5
  data += le32(0x40490fdb);                                    // 3.14159274f
  write_bytes(path, file_with_header(header, data));

  SafetensorsFile f = load_safetensors(path);
  CHECK(f.metadata.at("k\"\\/\n") == "\xf0\x9f\x98\x80");
  REQUIRE(f.tensors.count("b\xc3\xa9") == 1);
  CHECK(f.tensors.at("b\xc3\xa9").dim() == 0);
  CHECK(f.tensors.at("b\xc3\xa9").item() == 3.14159274f);
  CHECK(f.tensors.at("n").dtype() == DType::I32);
  CHECK(f.tensors.at("n").to_ints() == std::vector<int32_t>{-3, 5});

  // An int64 that int32 cannot hold is refused, not wrapped.
  std::string big = std::string("\x00\x00\x00\x80\x00\x00\x00\x00", 8);  // 2^31
  write_bytes(path, file_with_header("{\"n\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", big));
  REQUIRE_THROWS_WITH(load_safetensors(path), Contains("does not fit in int32"));
}

// Little-endian bytes of 16-bit patterns (F16, BF16).
std::string le16(const std::vector<uint16_t>& bits) {
  std::string s;
  for (uint16_t b : bits) s += (char)(b & 0xFF), s += (char)(b >> 8);
  return s;
}

TEST_CASE("safetensors reads F16 and BF16 as F32 where asked (--init-from), exactly; refuses them otherwise",
          "[safetensors]") {
  TempDir dir;
  const std::string path = dir.sub("half.safetensors");
  // F16: 1, -2, 1/3 rounded, the smallest subnormal 2^-24, a subnormal 2^-15, the largest 65504, -0
  const std::vector<uint16_t> f16 = {0x3C00, 0xC000, 0x3555, 0x0001, 0x0200, 0x7BFF, 0x8000};
  // BF16: 1, -2.5, 3.140625, the smallest subnormal 2^-133
  const std::vector<uint16_t> bf16 = {0x3F80, 0xC020, 0x4049, 0x0001};
  write_bytes(path, file_with_header("{\"a\":{\"dtype\":\"F16\",\"shape\":[7],\"data_offsets\":[0,14]},"
                                     "\"b\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[14,22]}}",
                                     le16(f16) + le16(bf16)));
  REQUIRE_THROWS_WITH(load_safetensors(path), Contains("unsupported dtype \"F16\""));
  const SafetensorsFile f = load_safetensors(path, HalfFloats::ToF32);
  REQUIRE(f.tensors.at("a").dtype() == DType::F32);
  const std::vector<float> a = f.tensors.at("a").to_vector();
  REQUIRE(a.size() == 7);
  CHECK(a[0] == 1.0f);
  CHECK(a[1] == -2.0f);
  CHECK(a[2] == std::ldexp(1365.0f, -12));  // 0x3555: (1024 + 341) * 2^(13 - 15 - 10)
  CHECK(a[3] == std::ldexp(1.0f, -24));
  CHECK(a[4] == std::ldexp(1.0f, -15));
  CHECK(a[5] == 65504.0f);
  CHECK(a[6] == 0.0f);
  CHECK(std::signbit(a[6]));
  CHECK(f.tensors.at("b").shape() == Shape{2, 2});
  CHECK(f.tensors.at("b").to_vector() == std::vector<float>{1.0f, -2.5f, 3.140625f, std::ldexp(1.0f, -133)});
}

TEST_CASE("safetensors rejects corrupt files with a message naming file and problem", "[safetensors]") {
  TempDir dir;
  const std::string path = dir.sub("bad.safetensors");
  const std::string good_entry = "\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}";
  const std::string eight = le32(0x3f800000) + le32(0xc0000000);
  auto load_header = [&](const std::string& header, const std::string& data) {
    write_bytes(path, file_with_header(header, data));
    return load_safetensors(path);
  };

  SECTION("missing file") {
    REQUIRE_THROWS_AS(load_safetensors(dir.sub("nope.safetensors")), nl::Error);
    REQUIRE_THROWS_WITH(load_safetensors(dir.sub("nope.safetensors")),
                        Contains("nope.safetensors") && Contains("does not exist"));
  }
  SECTION("file shorter than the length field") {
    write_bytes(path, std::string("\x08\x00\x00", 3));
    REQUIRE_THROWS_WITH(load_safetensors(path), Contains(path) && Contains("shorter than the 8-byte header length"));
  }
  SECTION("header length larger than the file") {
    std::string bytes = file_with_header("{" + good_entry + "}", eight);
    write_bytes(path, bytes.substr(0, 40));  // truncated inside the header
    REQUIRE_THROWS_WITH(load_safetensors(path), Contains(path) && Contains("is larger than the file"));
  }
  SECTION("header length 1 to 8 bytes past the end of the file") {
    // A whole file, its length field then raised by k: the header it announces would
    // run k bytes past the last byte there is.
    const std::string whole = file_with_header("{" + good_entry + "}", eight);
    const uint64_t after_length = whole.size() - 8;
    for (uint64_t k = 1; k <= 8; ++k) {
      INFO("header length " << after_length + k << " in a file of " << after_length << " bytes after the length");
      std::string bytes = whole;
      for (int b = 0; b < 8; ++b) bytes[b] = (char)(((after_length + k) >> (8 * b)) & 0xFF);
      write_bytes(path, bytes);
      CHECK_THROWS_AS(load_safetensors(path), nl::Error);
      CHECK_THROWS_WITH(load_safetensors(path), Contains(path) && Contains("is larger than the file"));
    }
  }
  SECTION("invalid JSON") {
    const char* bad_headers[] = {
        "{\"x\":1.5}",                        // fractions are not integers
        "{\"x\":true}",                       // nor literals
        "{\"x\":null}",
        "{\"a\":{},}",                        // trailing comma
        "{\"a\":{}",                          // unterminated object
        "{\"a\":\"unterminated}",
        "{\"a\":\"bad escape \\q\"}",
        "{\"a\":\"lone \\udc00\"}",
        "{\"a\":01}",                         // leading zero
        "{\"a\":99999999999999999999}",       // beyond 64 bits
        "{} {}",                              // text after the object
        "",
        "{\"a\":\"\xff\"}",                   // not UTF-8
    };
    for (const char* h : bad_headers) {
      INFO("header: " << h);
      REQUIRE_THROWS_WITH(load_header(h, ""), Contains(path) && Contains("invalid JSON"));
    }
  }
  SECTION("header that is JSON but not a safetensors header") {
    REQUIRE_THROWS_WITH(load_header("[]", ""), Contains("not a JSON object"));
    REQUIRE_THROWS_WITH(load_header("{\"__metadata__\":{\"k\":1}}", ""), Contains("not a string"));
    REQUIRE_THROWS_WITH(load_header("{\"x\":{\"dtype\":\"F32\",\"shape\":[2]}}", eight), Contains("lacks"));
    REQUIRE_THROWS_WITH(load_header("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"y\":1}}", eight),
                        Contains("unknown field"));
    REQUIRE_THROWS_WITH(load_header("{\"x\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", eight),
                        Contains("non-negative"));
  }
  SECTION("unknown dtype") {
    REQUIRE_THROWS_WITH(load_header("{\"x\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]}}", eight),
                        Contains(path) && Contains("unsupported dtype \"BF16\""));
  }
  SECTION("shape and offsets disagree") {
    REQUIRE_THROWS_WITH(load_header("{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", eight),
                        Contains(path) && Contains("need 12 bytes but data_offsets [0, 8] hold 8"));
    // A shape whose byte count overflows int64 must not wrap around to a match.
    REQUIRE_THROWS_WITH(
        load_header("{\"x\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,8]}}", eight),
        Contains("over 2^63"));
  }
  SECTION("offsets past the end of the data") {
    REQUIRE_THROWS_WITH(load_header("{" + good_entry + "}", eight.substr(0, 6)),
                        Contains(path) && Contains("past the end of the data"));
  }
  SECTION("overlapping offsets") {
    REQUIRE_THROWS_WITH(
        load_header("{" + good_entry + ",\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", eight),
        Contains("'x' and 'y' overlap"));
  }
  SECTION("offsets that leave bytes uncovered") {
    REQUIRE_THROWS_WITH(load_header("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", eight),
                        Contains("belong to no tensor"));
    REQUIRE_THROWS_WITH(load_header("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", eight),
                        Contains("belong to no tensor"));
  }
  SECTION("duplicate names") {
    REQUIRE_THROWS_WITH(load_header("{" + good_entry + "," + good_entry + "}", eight),
                        Contains(path) && Contains("duplicate name \"x\""));
  }
}

TEST_CASE("safetensors write is atomic: a failed write leaves the target and no temp file", "[safetensors]") {
  TempDir dir;
  const std::string target = dir.sub("ckpt.safetensors");
  const std::map<std::string, Tensor> tensors{{"x", Tensor::from_vector({1.0f, 2.0f}, {2})}};
  save_safetensors(target, tensors, {{"step", "1"}});
  const std::string before = read_bytes(target);

  SECTION("into a directory that does not exist") {
    const std::string missing = dir.sub("no/such/dir/ckpt.safetensors");
    REQUIRE_THROWS_WITH(save_safetensors(missing, tensors, {}), Contains("cannot create") && Contains(missing));
    CHECK(!fs::exists(missing + ".tmp"));
    CHECK(read_bytes(target) == before);
  }
  SECTION("invalid arguments fail before the target is touched") {
    REQUIRE_THROWS_WITH(save_safetensors(target, {{"x", Tensor()}}, {}), Contains("undefined"));
    REQUIRE_THROWS_WITH(save_safetensors(target, {{"__metadata__", tensors.at("x")}}, {}), Contains("__metadata__"));
    // Python's reader rejects invalid UTF-8 in the header, so the writer never makes it.
    REQUIRE_THROWS_WITH(save_safetensors(target, {{"bad\xff", tensors.at("x")}}, {}), Contains("UTF-8"));
    REQUIRE_THROWS_WITH(save_safetensors(target, tensors, {{"k", "\xc3"}}), Contains("UTF-8"));
    CHECK(read_bytes(target) == before);
    CHECK(!fs::exists(target + ".tmp"));
  }
  SECTION("rename fails after the temp file was written") {
    // A non-empty directory cannot be replaced by rename(2): the write itself succeeds,
    // the last step fails, and the temp file must be cleaned up.
    const std::string blocked = dir.sub("blocked");
    fs::create_directories(blocked + "/inside");
    REQUIRE_THROWS_WITH(save_safetensors(blocked, tensors, {}), Contains("renaming"));
    CHECK(fs::is_directory(blocked + "/inside"));
    CHECK(!fs::exists(blocked + ".tmp"));
    CHECK(read_bytes(target) == before);
  }
  SECTION("a successful save replaces the file whole") {
    save_safetensors(target, {{"y", Tensor::from_ints({3}, {1})}}, {});
    SafetensorsFile f = load_safetensors(target);
    CHECK(f.tensors.count("x") == 0);
    CHECK(f.tensors.at("y").to_ints() == std::vector<int32_t>{3});
    CHECK(!fs::exists(target + ".tmp"));
  }
}
