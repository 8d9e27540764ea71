// libFuzzer target: the safetensors reader (train/io/safetensors.h) on arbitrary bytes.
// Any input must either load or throw nl::Error; a crash, a sanitizer report, a leak
// or a hang is a bug. A file that loads must survive a write and a re-read unchanged.
#include <cstdint>

#include "fuzz/fuzz_input_file.h"
#include "tensor/error.h"
#include "train/io/safetensors.h"

namespace nl::fuzz {

// One input; returns 0 (libFuzzer's convention). Aborts on a broken invariant.
inline int safetensors_one(const uint8_t* data, size_t size) {
  const std::string& path = write_input("safetensors", data, size);
  nl::SafetensorsFile f;
  try {
    f = nl::load_safetensors(path);
  } catch (const nl::Error&) {
    return 0;
  }
  const std::string copy = path + ".copy";
  nl::save_safetensors(copy, f.tensors, f.metadata);
  nl::SafetensorsFile again = nl::load_safetensors(copy);
  if (again.metadata != f.metadata || again.tensors.size() != f.tensors.size()) std::abort();
  for (const auto& [name, t] : f.tensors) {
    const nl::Tensor& u = again.tensors.at(name);
    if (u.shape() != t.shape() || u.dtype() != t.dtype()) std::abort();
  }
  std::remove(copy.c_str());
  return 0;
}

}  // namespace nl::fuzz

// tests/train/test_fuzz_regressions.cpp includes this file to replay kept inputs
#ifndef NL_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return nl::fuzz::safetensors_one(data, size);
}
#endif
