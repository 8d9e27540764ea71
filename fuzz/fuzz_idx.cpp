// libFuzzer target: the IDX readers of train/data/fashion_mnist.h (gzipped or plain) on
// arbitrary bytes, as images and as labels. Any input must read or throw nl::Error.
#include <cstdint>

#include "fuzz/fuzz_input_file.h"
#include "tensor/error.h"
#include "train/data/fashion_mnist.h"

namespace nl::fuzz {

// One input; returns 0 (libFuzzer's convention). Aborts on a broken invariant.
inline int idx_one(const uint8_t* data, size_t size) {
  const std::string& path = write_input("idx", data, size);
  try {
    nl::IdxImages im = nl::read_idx_images(path);
    if ((int64_t)im.pixels.size() != im.count * im.rows * im.cols) std::abort();
  } catch (const nl::Error&) {
  }
  try {
    std::vector<uint8_t> labels = nl::read_idx_labels(path);
    for (uint8_t l : labels)
      if (l >= nl::kFashionMnistClasses) std::abort();
  } catch (const nl::Error&) {
  }
  return 0;
}

}  // namespace nl::fuzz

// tests/train/test_fuzz_regressions.cpp includes this file to replay kept inputs
#ifndef NL_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return nl::fuzz::idx_one(data, size); }
#endif
