// Loading the fortunes text and sampling training windows from it.
#include "train/data/text_data.h"

#include <algorithm>
#include <filesystem>
#include <limits>

#include "train/io/checksum.h"
#include "train/io/files.h"

namespace nl {

namespace fs = std::filesystem;

static bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TextData load_fortunes(const std::string& dir, int64_t train_bytes) {
  NL_CHECK(train_bytes >= -1, "load_fortunes: train_bytes must be >= 0, or -1 for all, got ", train_bytes);
  // the package is the fix only for its own folder; another --data names what is wrong there
  const bool packaged = fs::path(dir).lexically_normal() == fs::path(kFortunesPackageDir);
  const std::string missing = packaged ? "--data " + dir + ": the fortunes text is not installed there: install it "
                                                           "with `apt-get install fortunes`"
                                       : "--data " + dir + ": no text files in this folder (the fortunes' files, or "
                                                           "any text, one or more files)";
  std::error_code ec;
  if (!fs::exists(dir, ec) && !packaged) fail("--data ", dir, ": no such folder");
  NL_CHECK(fs::is_directory(dir, ec) || packaged, "--data ", dir, " is not a folder");
  if (!fs::is_directory(dir, ec)) fail(missing);

  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    std::error_code type_ec;
    if (!ends_with(name, ".dat") && !ends_with(name, ".u8") && !entry.is_directory(type_ec))
      files.push_back(entry.path());
  }
  NL_CHECK(!ec, "load_fortunes: cannot list ", dir, ": ", ec.message());
  if (files.empty()) fail(missing);
  std::sort(files.begin(), files.end());

  std::vector<uint8_t> all;
  for (const fs::path& p : files) {
    // at most 1 GiB a file: the text is a few MB, and a batch indexes it with 32 bits
    const std::string text = read_text_file(p.string(), "--data", int64_t(1) << 30);
    all.insert(all.end(), text.begin(), text.end());
  }

  const size_t n_train = all.size() * 9 / 10;
  TextData out;
  out.bytes = (int64_t)all.size();
  out.crc32 = crc32_bytes(all.data(), all.size());
  out.train.assign(all.begin(), all.begin() + n_train);
  out.val.assign(all.begin() + n_train, all.end());
  if (train_bytes >= 0) {
    NL_CHECK((size_t)train_bytes <= out.train.size(), "load_fortunes: train_bytes ", train_bytes,
             " exceeds the ", out.train.size(), " training bytes in ", dir);
    out.train.resize((size_t)train_bytes);
  }
  return out;
}

TextBatcher::TextBatcher(const std::vector<uint8_t>& data, int64_t T, uint64_t seed)
    : data_(data), T_(T), gen_(seed) {
  NL_CHECK(T >= 1, "TextBatcher: sequence length T must be >= 1, got ", T);
  NL_CHECK((int64_t)data.size() >= T + 1, "TextBatcher: ", data.size(),
           " bytes of text are too few for one window of T + 1 = ", T + 1, " bytes");
  // Generator::below draws from a 32-bit range.
  NL_CHECK((int64_t)data.size() - T <= (int64_t)std::numeric_limits<uint32_t>::max(),
           "TextBatcher: ", data.size(), " bytes of text are more than 32-bit sampling can index");
}

void TextBatcher::next(int64_t B, Tensor& inputs, Tensor& targets) {
  NL_CHECK(B >= 1, "TextBatcher::next: batch size B must be >= 1, got ", B);
  const Shape shape{B, T_};
  for (Tensor* t : {&inputs, &targets})
    if (!t->defined() || t->shape() != shape || t->dtype() != DType::I32 || t->device() != Device::CPU ||
        !t->is_contiguous())
      *t = Tensor::empty(shape, DType::I32);
  int32_t* x = inputs.idata();
  int32_t* y = targets.idata();
  // The window data[s .. s+T] must fit, so s ranges over [0, size - T - 1].
  const uint32_t n_starts = (uint32_t)((int64_t)data_.size() - T_);
  for (int64_t b = 0; b < B; ++b) {
    const uint8_t* w = data_.data() + gen_.below(n_starts);
    for (int64_t t = 0; t < T_; ++t) {
      x[b * T_ + t] = w[t];
      y[b * T_ + t] = w[t + 1];
    }
  }
}

std::vector<std::pair<Tensor, Tensor>> fixed_batches(const std::vector<uint8_t>& data, int64_t T, int64_t B,
                                                     int64_t count, uint64_t seed) {
  NL_CHECK(count >= 0, "fixed_batches: count must be >= 0, got ", count);
  TextBatcher batcher(data, T, seed);
  std::vector<std::pair<Tensor, Tensor>> out((size_t)count);
  for (auto& [inputs, targets] : out) batcher.next(B, inputs, targets);
  return out;
}

std::vector<std::pair<Tensor, Tensor>> consecutive_batches(const std::vector<uint8_t>& data, int64_t T, int64_t B) {
  NL_CHECK(data.size() >= 2 && T >= 1 && B >= 1, "consecutive_batches: needs 2 bytes, T >= 1 and B >= 1");
  const int64_t n = (int64_t)data.size() - 1;  // bytes that have a next one
  std::vector<std::pair<Tensor, Tensor>> out;
  std::vector<int32_t> inputs, targets;
  int64_t rows = 0;
  auto flush = [&](int64_t length) {
    out.emplace_back(Tensor::from_ints(inputs, {rows, length}), Tensor::from_ints(targets, {rows, length}));
    inputs.clear(), targets.clear();
    rows = 0;
  };
  for (int64_t start = 0; start < n; start += T) {
    const int64_t length = std::min(T, n - start);
    // a batch holds windows of one length: the short last one gets its own
    if (rows > 0 && (length < T || rows == B)) flush(T);
    for (int64_t k = 0; k < length; ++k) {
      inputs.push_back(data[(size_t)(start + k)]);
      targets.push_back(data[(size_t)(start + k + 1)]);
    }
    ++rows;
    if (length < T) flush(length);
  }
  if (rows > 0) flush(T);
  return out;
}

}  // namespace nl
