// Tensor: a cheap handle onto shared storage. A view (reshape, transpose, permute,
// slice, squeeze, unsqueeze, expand) is a new handle with other shape, strides and
// offset over the same storage; contiguous() copies only when it must.
// Numbers are float32; int32 exists for indices (embedding ids, targets).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensor/device.h"
#include "tensor/error.h"
#include "tensor/shape.h"

namespace nl {

enum class DType { F32, I32 };
inline const char* dtype_name(DType t) { return t == DType::F32 ? "float32" : "int32"; }

// A block of memory from the caching allocator; returned to it when the last tensor
// using it goes away. Both dtypes are 4 bytes, so storage is counted in elements.
struct Storage {
  Storage(int64_t numel, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data;
  int64_t numel;
  Device device;
};

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() is false

  // ---- creation (contiguous, on the CPU unless a device is given)
  static Tensor empty(const Shape& shape, DType dtype = DType::F32, Device device = Device::CPU);
  static Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = Device::CPU);
  static Tensor ones(const Shape& shape, Device device = Device::CPU);
  static Tensor full(const Shape& shape, float value, Device device = Device::CPU);
  static Tensor arange(int64_t n);                            // 0, 1, ..., n-1 (float32)
  static Tensor from_vector(const std::vector<float>& values, const Shape& shape);
  static Tensor from_ints(const std::vector<int32_t>& values, const Shape& shape);
  static Tensor scalar(float value) { return from_vector({value}, {}); }

  // ---- metadata
  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int dim() const { return (int)shape_.size(); }
  int64_t size(int64_t axis) const;        // negative axes count from the end
  int64_t numel() const { return numel_of(shape_); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device : Device::CPU; }
  bool is_contiguous() const;
  bool shares_storage(const Tensor& other) const { return storage_ == other.storage_; }

  // ---- raw data (pointer to element 0 of this view); the dtype is checked
  float* data() const;
  int32_t* idata() const;

  // ---- element access for tests and small loops (CPU, any strides)
  float at(const std::vector<int64_t>& index) const;
  void set(const std::vector<int64_t>& index, float value);
  float item() const;                       // the one element of a 1-element tensor
  std::vector<float> to_vector() const;     // all elements in row-major order
  std::vector<int32_t> to_ints() const;

  // ---- views sharing storage
  Tensor reshape(const Shape& shape) const;  // a view when the strides allow, else a copy; one -1 allowed
  Tensor view(const Shape& shape) const;     // like reshape, but throws instead of copying
  Tensor transpose(int64_t a, int64_t b) const;
  Tensor permute(const std::vector<int64_t>& order) const;
  Tensor slice(int64_t axis, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor squeeze(int64_t axis) const;
  Tensor unsqueeze(int64_t axis) const;
  Tensor expand(const Shape& shape) const;   // broadcast dims of size 1 with stride 0

  // ---- copies
  Tensor contiguous() const;                 // itself when already contiguous
  Tensor clone() const;                      // always a fresh contiguous copy
  void copy_from(const Tensor& src);         // same shape; writes into this view
  void fill_(float value);
  Tensor to(Device device) const;

  std::string to_string(int max_per_dim = 6) const;  // for tests and debugging

 private:
  Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype);
  std::shared_ptr<Storage> storage_;
  Shape shape_, strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::F32;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Describes a tensor for error messages: "float32 (2, 3) on cpu".
std::string describe(const Tensor& t);

}  // namespace nl
