// Byte-level text for the GPT demo: the fortune cookies of Debian's `fortunes` package
// (about 2.5 MB of English), one token per byte, so there is no tokenizer to build or
// ship. The split and every batch come from seeds, so runs are repeatable.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace nl {

struct TextData {
  std::vector<uint8_t> train, val;
  int64_t bytes = 0;   // the whole text as read, before the split and train_bytes
  uint32_t crc32 = 0;  // of those bytes: with `bytes`, what identifies the data
};

// Concatenates, in sorted name order, every file at the top level of dir except the
// `.dat` indexes and `.u8` links that strfile makes beside each text; folders in it
// (Debian's off/) are not read. Each is opened without blocking and must be a regular
// file (a link to one is): a FIFO, socket or device in its place is refused naming it.
// The first 90 % (rounded down) is train, the rest validation: split in one place
// rather than interleaved, so validation windows never overlap training ones.
// train_bytes >= 0 keeps only the first train_bytes of the training text (an error when
// there are fewer); -1 keeps all of it.
inline constexpr const char* kFortunesPackageDir = "/usr/share/games/fortunes";  // Debian's fortunes package
TextData load_fortunes(const std::string& dir = kFortunesPackageDir, int64_t train_bytes = -1);

// Random windows of T + 1 consecutive bytes: inputs are the first T, targets the last T
// (each input byte's next byte). Starts are uniform over every window that fits.
class TextBatcher {
 public:
  // data must hold at least T + 1 bytes; it is copied, so it may be a temporary.
  TextBatcher(const std::vector<uint8_t>& data, int64_t T, uint64_t seed);

  // inputs, targets: int32 (B, T) on the CPU. Reused when they already have that
  // shape, dtype and device (no allocation per step), else replaced by new tensors.
  void next(int64_t B, Tensor& inputs, Tensor& targets);

  // For checkpoints: save generator().state(), restore with set_state().
  Generator& generator() { return gen_; }
  const Generator& generator() const { return gen_; }

 private:
  std::vector<uint8_t> data_;
  int64_t T_;
  Generator gen_;
};

// count (inputs, targets) batches of int32 (B, T) drawn with a fresh generator from
// seed: the same batches every call, so validation losses compare across runs.
std::vector<std::pair<Tensor, Tensor>> fixed_batches(const std::vector<uint8_t>& data, int64_t T, int64_t B,
                                                     int64_t count, uint64_t seed);

// Every byte of data that has a next one, once: windows of T + 1 bytes starting at 0, T,
// 2T, ... (inputs the first T, targets the last T), as long as a whole window fits, in
// batches of up to B windows; a shorter last window covers the bytes left. data must
// hold at least 2 bytes. The whole-file evaluation (train_gpt --eval-file).
std::vector<std::pair<Tensor, Tensor>> consecutive_batches(const std::vector<uint8_t>& data, int64_t T, int64_t B);

}  // namespace nl
