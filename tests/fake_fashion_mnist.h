// A small Fashion-MNIST look-alike for tests that run the ViT: gzipped IDX files in the
// package's layout, written by the test, so they need neither the package nor more
// than a fraction of a second per run.
#pragma once
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "tests/test_files.h"

namespace nl::test {

inline void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back((char)(uint8_t)(v >> shift));
}

inline void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), (unsigned)bytes.size()) == (int)bytes.size());
  REQUIRE(gzclose(f) == Z_OK);
}

// n images whose class k is drawn as a bright square at a class-specific place, so a
// tiny model has something to learn; labels i % 10.
inline void write_fake_set(const std::string& dir, const std::string& prefix, uint32_t n) {
  std::string im, lb;
  put_u32(im, 2051);
  put_u32(im, n);
  put_u32(im, 28);
  put_u32(im, 28);
  put_u32(lb, 2049);
  put_u32(lb, n);
  for (uint32_t i = 0; i < n; ++i) {
    const int k = (int)(i % 10);
    for (int r = 0; r < 28; ++r)
      for (int c = 0; c < 28; ++c) {
        const bool on = r / 7 == k / 4 && c / 7 == k % 4;
        im.push_back((char)(on ? 200 + (int)((i * 13 + r + c) % 50) : (int)((i + r * c) % 20)));
      }
    lb.push_back((char)k);
  }
  write_gz(dir + "/" + prefix + "-images-idx3-ubyte.gz", im);
  write_gz(dir + "/" + prefix + "-labels-idx1-ubyte.gz", lb);
}

// A fake data set (200 training images, 40 of them for validation, 30 test images),
// an --out folder holding a log.csv of known content, and the flags of a tiny ViT on it.
struct FakeVitRun {
  TempDir tmp;
  std::string data, out, tiny;
  FakeVitRun() : data(tmp.sub("data")), out(tmp.sub("out")) {
    std::filesystem::create_directories(data);
    std::filesystem::create_directories(out);
    write_fake_set(data, "train", 200);
    write_fake_set(data, "t10k", 30);
    write_bytes(out + "/log.csv", "step,train_loss\n1,9.99\n");
    tiny = "--data " + data + " --val-size 40 --layers 1 --dim 16 --heads 2 --patch 7 --batch 8 --eval-every 2 "
           "--eval-batch 16 --warmup 2 --threads 1 --quiet";
  }
};

}  // namespace nl::test
