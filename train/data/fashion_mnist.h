// Fashion-MNIST (Xiao et al. 2017) from Debian's `dataset-fashion-mnist` package: 60 000
// training and 10 000 test images of 28 x 28 grey pixels in 10 classes, stored as
// gzipped IDX files and read with zlib. IDX is big-endian: a magic number (2051 for
// images, 2049 for labels), the item count, for images the rows and columns, then one
// unsigned byte per pixel or label. Every file is checked (magic, counts, sizes, label
// range, nothing missing or left over); a bad file is an nl::Error naming it and the
// package to install.
//
// A validation split is cut from the training images by a seeded permutation, the
// pixels are scaled to [0, 1] and standardised with the mean and standard deviation of
// the training split, and ImageBatcher draws shuffled, optionally augmented batches.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace nl {

constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
constexpr int kFashionMnistClasses = 10;
// images in the training file (train-images-idx3-ubyte.gz); the loader checks the file's own count
constexpr int64_t kFashionMnistTrainImages = 60000;
// The class names of labels 0..9, as the dataset's authors list them.
const std::array<std::string, 10>& fashion_mnist_classes();

struct IdxImages {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols, image by image, row-major
};

// One gzipped (or plain) IDX file. Throws nl::Error naming the file when it is
// missing, not a regular file (a FIFO, a device), not IDX of the right kind, truncated,
// corrupt or followed by extra bytes.
IdxImages read_idx_images(const std::string& path);
// Labels must lie in [0, num_classes).
std::vector<uint8_t> read_idx_labels(const std::string& path, int num_classes = kFashionMnistClasses);

// Images with their labels, pixels as stored (bytes, 0 = background).
struct ImageSet {
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // size() * rows * cols
  std::vector<uint8_t> labels;
  int64_t size() const { return (int64_t)labels.size(); }
};

struct FashionMnist {
  ImageSet train, val, test;
  // Of the training split's pixels scaled to [0, 1]: x -> (x / 255 - mean) / std.
  float mean = 0, std = 1;
  // The pixels and labels as read (training files, then test files): how many, and
  // their crc32, which identify the data a run trained on.
  int64_t bytes = 0;
  uint32_t crc32 = 0;
};

// Reads {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz from dir. The validation split
// is the last val_size images of a permutation of the training images drawn from
// split_seed (0 < val_size < training images); the rest, in that permuted order, is
// the training split, of which train_images >= 1 keeps only the first (a random subset
// of that size; -1 keeps all). Images must be 28 x 28 and each file pair must agree in
// count.
FashionMnist load_fashion_mnist(const std::string& dir = kFashionMnistDir, int64_t val_size = 5000,
                                uint64_t split_seed = 1, int64_t train_images = -1);

struct AugmentConfig {
  int crop_pad = 0;    // random crop with padding: shift by up to +-crop_pad pixels, zeros (background) fill in
  bool flip = false;   // horizontal flip with probability 1/2
};

// Writes images [first, first + n) of `set`, in the order given by `index`, as
// standardised floats into x (n, 1, rows, cols) and their labels into y int32 (n).
// With no index, images first .. first + n - 1 in stored order.
void fill_batch(const ImageSet& set, const std::vector<int64_t>& index, int64_t first, int64_t n, float mean,
                float std, Tensor& x, Tensor& y);

// Shuffled batches of a fixed size for training: every epoch visits each image once in
// a fresh seeded order, and a batch that crosses the end of an epoch continues in the
// next one. Each image may be randomly shifted and flipped (AugmentConfig). Everything
// random comes from one generator, so a run is repeatable, and skip() replays batches
// without building them (resuming from a checkpoint).
class ImageBatcher {
 public:
  ImageBatcher(const ImageSet& set, float mean, float std, AugmentConfig augment, uint64_t seed);
  // x float32 (B, 1, rows, cols), y int32 (B); reused when they already have that shape.
  void next(int64_t B, Tensor& x, Tensor& y);
  void skip(int64_t B);                  // draws what next(B) would, builds nothing
  double epoch() const;                  // images seen / images in the set
  Generator& generator() { return gen_; }
  const Generator& generator() const { return gen_; }

 private:
  struct Draw {
    int64_t image;
    int dy, dx;
    bool flip;
  };
  Draw draw();
  const ImageSet& set_;
  float mean_, std_;
  AugmentConfig augment_;
  Generator gen_;
  std::vector<int64_t> order_;
  int64_t pos_ = 0, seen_ = 0;
};

// Writes one image, shifted by (dy, dx) (out[r][c] = in[r - dy][c - dx], 0 outside)
// and then mirrored left-right when flip is set, standardised, into out (rows * cols).
void augment_image(const uint8_t* in, int64_t rows, int64_t cols, int dy, int dx, bool flip, float mean, float std,
                   float* out);

}  // namespace nl
