#include "train/data/fashion_mnist.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "tensor/error.h"
#include "train/io/checksum.h"
#include "train/io/files.h"

namespace nl {

namespace {

const char* kInstall = "install the data with: apt-get install dataset-fashion-mnist";

// A gzip stream (zlib reads a plain file transparently), closed on every path. The
// file is opened without blocking and checked to be a regular file before zlib reads a
// byte: a FIFO in its place would otherwise hang the program.
class GzFile {
 public:
  explicit GzFile(const std::string& path) : path_(path) {
    int fd = -1;
    try {
      fd = open_regular_file(path, "fashion-mnist");
    } catch (const Error& e) {
      fail(e.what(), "; ", kInstall);
    }
    errno = 0;
    f_ = gzdopen(fd, "rb");
    if (!f_) {
      ::close(fd);
      fail("fashion-mnist: cannot open ", path, " (", errno ? std::strerror(errno) : "gzdopen failed", "); ", kInstall);
    }
  }
  ~GzFile() { gzclose(f_); }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  // Reads exactly n bytes; `what` names them in the error of a short or corrupt read.
  void read(void* dst, int64_t n, const char* what) { read_some(dst, n, 0, n, what); }

  // Reads exactly n bytes that are bytes [before, before + n) of `total` in the error
  // message of a short read.
  void read_some(void* dst, int64_t n, int64_t before, int64_t total, const char* what) {
    auto* p = static_cast<uint8_t*>(dst);
    int64_t got = 0;
    while (got < n) {
      const unsigned chunk = (unsigned)std::min<int64_t>(n - got, 1 << 30);
      const int r = gzread(f_, p + got, chunk);
      if (r < 0) corrupt();
      if (r == 0) break;
      got += r;
    }
    if (got < n) {
      // a gzip stream cut short reads as end-of-data; zlib then reports the damage
      int code = Z_OK;
      gzerror(f_, &code);
      if (code != Z_OK && code != Z_STREAM_END) corrupt();
      fail("fashion-mnist: ", path_, " is truncated: expected ", total, " bytes of ", what, ", found ", before + got,
           "; ", kInstall, " (or reinstall it)");
    }
  }

  // Reads exactly n bytes into `out`, growing it a chunk at a time: the count comes
  // from the file's header, so a hostile header (4 billion items) must not make us
  // allocate before the data is really there (found by fuzz/fuzz_idx.cpp).
  void read_vector(std::vector<uint8_t>& out, int64_t n, const char* what) {
    constexpr int64_t kChunk = 16 << 20;
    out.clear();
    int64_t got = 0;
    while (got < n) {
      const int64_t chunk = std::min(n - got, kChunk);
      out.resize((size_t)(got + chunk));
      read_some(out.data() + got, chunk, got, n, what);
      got += chunk;
    }
  }

  // The file must end here: extra bytes mean a header that undercounts.
  void expect_end() {
    uint8_t extra[256];
    int64_t n = 0;
    int r;
    while ((r = gzread(f_, extra, sizeof extra)) > 0) n += r;
    if (r < 0) corrupt();
    NL_CHECK(n == 0, "fashion-mnist: ", path_, " has ", n, " bytes after the data its header announces; ", kInstall,
             " (or reinstall it)");
  }

  uint32_t big_endian_u32(const char* what) {
    uint8_t b[4];
    read(b, 4, what);
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
  }

 private:
  [[noreturn]] void corrupt() {
    int code = Z_OK;
    const char* msg = gzerror(f_, &code);
    // zlib reports a gzip stream that stops early as Z_BUF_ERROR, "unexpected end of file"
    fail("fashion-mnist: ", path_, code == Z_BUF_ERROR ? " is truncated" : " is corrupt", " (zlib: ",
         msg && *msg ? msg : "read error", "); ", kInstall, " (or reinstall it)");
  }
  std::string path_;
  gzFile f_ = nullptr;
};

void check_magic(uint32_t magic, uint32_t expected, const std::string& path, const char* kind) {
  NL_CHECK(magic == expected, "fashion-mnist: ", path, " is not an IDX ", kind, " file (magic number ", magic,
           ", expected ", expected, "); ", kInstall);
}

}  // namespace

const std::array<std::string, 10>& fashion_mnist_classes() {
  static const std::array<std::string, 10> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

IdxImages read_idx_images(const std::string& path) {
  GzFile f(path);
  check_magic(f.big_endian_u32("header"), 2051, path, "image");
  IdxImages im;
  im.count = f.big_endian_u32("header");
  im.rows = f.big_endian_u32("header");
  im.cols = f.big_endian_u32("header");
  NL_CHECK(im.rows > 0 && im.cols > 0 && im.rows <= 4096 && im.cols <= 4096, "fashion-mnist: ", path,
           " has images of an implausible size ", im.rows, " x ", im.cols, "; ", kInstall);
  f.read_vector(im.pixels, im.count * im.rows * im.cols, "pixels");
  f.expect_end();
  return im;
}

std::vector<uint8_t> read_idx_labels(const std::string& path, int num_classes) {
  GzFile f(path);
  check_magic(f.big_endian_u32("header"), 2049, path, "label");
  std::vector<uint8_t> labels;
  f.read_vector(labels, f.big_endian_u32("header"), "labels");
  f.expect_end();
  for (size_t i = 0; i < labels.size(); ++i)
    NL_CHECK(labels[i] < num_classes, "fashion-mnist: ", path, ": label ", (int)labels[i], " of item ", i,
             " is outside 0..", num_classes - 1, "; ", kInstall);
  return labels;
}

namespace {

ImageSet load_pair(const std::string& dir, const std::string& prefix) {
  const std::string images_path = dir + "/" + prefix + "-images-idx3-ubyte.gz";
  const std::string labels_path = dir + "/" + prefix + "-labels-idx1-ubyte.gz";
  IdxImages im = read_idx_images(images_path);
  ImageSet set;
  set.labels = read_idx_labels(labels_path);
  NL_CHECK(im.rows == 28 && im.cols == 28, "fashion-mnist: ", images_path, " holds ", im.rows, " x ", im.cols,
           " images, expected 28 x 28; ", kInstall);
  NL_CHECK(im.count == set.size(), "fashion-mnist: ", images_path, " holds ", im.count, " images but ", labels_path,
           " holds ", set.size(), " labels; ", kInstall, " (or reinstall it)");
  NL_CHECK(im.count > 0, "fashion-mnist: ", images_path, " holds no images; ", kInstall);
  set.rows = im.rows;
  set.cols = im.cols;
  set.pixels = std::move(im.pixels);
  return set;
}

// The images of `from` at positions idx[begin, end), in that order.
ImageSet subset(const ImageSet& from, const std::vector<int64_t>& idx, int64_t begin, int64_t end) {
  ImageSet s;
  s.rows = from.rows;
  s.cols = from.cols;
  const int64_t px = from.rows * from.cols;
  s.pixels.resize((size_t)((end - begin) * px));
  s.labels.resize((size_t)(end - begin));
  for (int64_t i = begin; i < end; ++i) {
    std::memcpy(&s.pixels[(i - begin) * px], &from.pixels[idx[i] * px], (size_t)px);
    s.labels[i - begin] = from.labels[idx[i]];
  }
  return s;
}

}  // namespace

FashionMnist load_fashion_mnist(const std::string& dir, int64_t val_size, uint64_t split_seed, int64_t train_images) {
  ImageSet all = load_pair(dir, "train");
  FashionMnist d;
  d.test = load_pair(dir, "t10k");
  for (const ImageSet* set : {&all, &d.test}) {
    d.crc32 = crc32_bytes(set->pixels.data(), set->pixels.size(), d.crc32);
    d.crc32 = crc32_bytes(set->labels.data(), set->labels.size(), d.crc32);
    d.bytes += (int64_t)(set->pixels.size() + set->labels.size());
  }
  const int64_t n = all.size();
  NL_CHECK(val_size > 0 && val_size < n, "--val-size must lie in [1, ", n - 1, "] (", n,
           " training images), got ", val_size);
  NL_CHECK(train_images == -1 || (train_images >= 1 && train_images <= n - val_size), "--train-images must be -1 "
           "(all) or lie in [1, ", n - val_size, "] (the training images left after --val-size), got ", train_images);
  std::vector<int64_t> perm = Generator(split_seed).permutation(n);
  d.train = subset(all, perm, 0, train_images == -1 ? n - val_size : train_images);
  d.val = subset(all, perm, n - val_size, n);

  // mean and standard deviation of the training split's pixels in [0, 1], in double
  double s = 0, ss = 0;
  for (uint8_t p : d.train.pixels) {
    s += p;
    ss += (double)p * p;
  }
  const double count = (double)d.train.pixels.size();
  const double mean = s / count / 255.0;
  const double var = ss / count / (255.0 * 255.0) - mean * mean;
  d.mean = (float)mean;
  d.std = (float)std::sqrt(std::max(var, 1e-12));
  return d;
}

void augment_image(const uint8_t* in, int64_t rows, int64_t cols, int dy, int dx, bool flip, float mean, float std,
                   float* out) {
  const float scale = 1.0f / (255.0f * std), shift = -mean / std;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      // the flip mirrors the shifted image: out[r][c] = shifted[r][cols - 1 - c]
      const int64_t sc = flip ? cols - 1 - c : c;
      const int64_t ir = r - dy, ic = sc - dx;
      const bool inside = ir >= 0 && ir < rows && ic >= 0 && ic < cols;
      out[r * cols + c] = (inside ? (float)in[ir * cols + ic] : 0.0f) * scale + shift;
    }
}

namespace {

void shape_batch(int64_t n, int64_t rows, int64_t cols, Tensor& x, Tensor& y) {
  const Shape xs{n, 1, rows, cols}, ys{n};
  if (!x.defined() || x.shape() != xs || x.dtype() != DType::F32 || x.device() != Device::CPU || !x.is_contiguous())
    x = Tensor::empty(xs);
  if (!y.defined() || y.shape() != ys || y.dtype() != DType::I32 || y.device() != Device::CPU || !y.is_contiguous())
    y = Tensor::empty(ys, DType::I32);
}

}  // namespace

void fill_batch(const ImageSet& set, const std::vector<int64_t>& index, int64_t first, int64_t n, float mean,
                float std, Tensor& x, Tensor& y) {
  NL_CHECK(first >= 0 && n > 0 && first + n <= (index.empty() ? set.size() : (int64_t)index.size()),
           "fill_batch: images [", first, ", ", first + n, ") lie outside the set of ", set.size());
  shape_batch(n, set.rows, set.cols, x, y);
  const int64_t px = set.rows * set.cols;
  float* xp = x.data();
  int32_t* yp = y.idata();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = index.empty() ? first + i : index[first + i];
    augment_image(&set.pixels[k * px], set.rows, set.cols, 0, 0, false, mean, std, xp + i * px);
    yp[i] = set.labels[k];
  }
}

ImageBatcher::ImageBatcher(const ImageSet& set, float mean, float std, AugmentConfig augment, uint64_t seed)
    : set_(set), mean_(mean), std_(std), augment_(augment), gen_(seed) {
  NL_CHECK(set.size() > 0, "ImageBatcher: the image set is empty");
  NL_CHECK(augment.crop_pad >= 0 && augment.crop_pad < set.rows && augment.crop_pad < set.cols,
           "--crop-pad must lie in [0, ", std::min(set.rows, set.cols) - 1, "], got ", augment.crop_pad);
}

// The next image of the epoch's order (a new order when one runs out) and its
// augmentation: the draws happen in one fixed sequence, whatever the batch size.
ImageBatcher::Draw ImageBatcher::draw() {
  if (pos_ >= (int64_t)order_.size()) {
    order_ = gen_.permutation(set_.size());
    pos_ = 0;
  }
  Draw d{order_[pos_++], 0, 0, false};
  const int p = augment_.crop_pad;
  if (p > 0) {
    d.dy = (int)gen_.below((uint32_t)(2 * p + 1)) - p;
    d.dx = (int)gen_.below((uint32_t)(2 * p + 1)) - p;
  }
  if (augment_.flip) d.flip = gen_.below(2) == 1;
  ++seen_;
  return d;
}

void ImageBatcher::next(int64_t B, Tensor& x, Tensor& y) {
  NL_CHECK(B > 0, "ImageBatcher: batch size must be positive, got ", B);
  shape_batch(B, set_.rows, set_.cols, x, y);
  const int64_t px = set_.rows * set_.cols;
  float* xp = x.data();
  int32_t* yp = y.idata();
  for (int64_t i = 0; i < B; ++i) {
    Draw d = draw();
    augment_image(&set_.pixels[d.image * px], set_.rows, set_.cols, d.dy, d.dx, d.flip, mean_, std_, xp + i * px);
    yp[i] = set_.labels[d.image];
  }
}

void ImageBatcher::skip(int64_t B) {
  for (int64_t i = 0; i < B; ++i) draw();
}

double ImageBatcher::epoch() const { return (double)seen_ / (double)set_.size(); }

}  // namespace nl
