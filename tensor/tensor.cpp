#include "tensor/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iomanip>
#include <sstream>

#include "tensor/allocator.h"
#include "tensor/cuda/kernels.h"
#include "tensor/strided.h"

namespace nl {

Storage::Storage(int64_t n, Device d) : numel(n), device(d) {
  data = device_alloc(d, (size_t)std::max<int64_t>(n, 1) * 4);
}
Storage::~Storage() { device_free(device, data, (size_t)std::max<int64_t>(numel, 1) * 4); }

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype)
    : storage_(std::move(storage)), shape_(std::move(shape)), strides_(std::move(strides)),
      offset_(offset), dtype_(dtype) {}

std::string describe(const Tensor& t) {
  if (!t.defined()) return "undefined tensor";
  return std::string(dtype_name(t.dtype())) + " " + nl::to_string(t.shape()) + " on " + device_name(t.device());
}

// ---------------------------------------------------------------- creation

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape) NL_CHECK(d >= 0, "empty: negative size in shape ", nl::to_string(shape));
  auto st = std::make_shared<Storage>(numel_of(shape), device);
  return Tensor(std::move(st), shape, contiguous_strides(shape), 0, dtype);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  t.fill_(0.0f);
  return t;
}

Tensor Tensor::ones(const Shape& shape, Device device) { return full(shape, 1.0f, device); }

Tensor Tensor::full(const Shape& shape, float value, Device device) {
  Tensor t = empty(shape, DType::F32, device);
  t.fill_(value);
  return t;
}

Tensor Tensor::arange(int64_t n) {
  Tensor t = empty({n});
  float* p = t.data();
  for (int64_t i = 0; i < n; ++i) p[i] = (float)i;
  return t;
}

Tensor Tensor::from_vector(const std::vector<float>& values, const Shape& shape) {
  NL_CHECK((int64_t)values.size() == numel_of(shape), "from_vector: ", values.size(),
           " values do not fill shape ", nl::to_string(shape));
  Tensor t = empty(shape);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

Tensor Tensor::from_ints(const std::vector<int32_t>& values, const Shape& shape) {
  NL_CHECK((int64_t)values.size() == numel_of(shape), "from_ints: ", values.size(),
           " values do not fill shape ", nl::to_string(shape));
  Tensor t = empty(shape, DType::I32);
  std::copy(values.begin(), values.end(), t.idata());
  return t;
}

// ---------------------------------------------------------------- metadata

int64_t Tensor::size(int64_t axis) const { return shape_[normalize_axis(axis, shape_, "size")]; }

bool Tensor::is_contiguous() const {
  int64_t expect = 1;
  for (int i = dim() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[i] != expect) return false;
    expect *= shape_[i];
  }
  return true;
}

float* Tensor::data() const {
  NL_CHECK(defined(), "data: undefined tensor");
  NL_CHECK(dtype_ == DType::F32, "data: tensor is ", describe(*this), ", not float32");
  return static_cast<float*>(storage_->data) + offset_;
}

int32_t* Tensor::idata() const {
  NL_CHECK(defined(), "idata: undefined tensor");
  NL_CHECK(dtype_ == DType::I32, "idata: tensor is ", describe(*this), ", not int32");
  return static_cast<int32_t*>(storage_->data) + offset_;
}

// ---------------------------------------------------------------- element access

static int64_t element_offset(const Tensor& t, const std::vector<int64_t>& index) {
  NL_CHECK((int)index.size() == t.dim(), "at: ", index.size(), " indices for ", describe(t));
  int64_t off = 0;
  for (int i = 0; i < t.dim(); ++i) {
    int64_t k = index[i] < 0 ? index[i] + t.shape()[i] : index[i];
    NL_CHECK(k >= 0 && k < t.shape()[i], "at: index ", index[i], " out of range for axis ", i,
             " of ", describe(t));
    off += k * t.strides()[i];
  }
  return off;
}

float Tensor::at(const std::vector<int64_t>& index) const {
  NL_CHECK(device() == Device::CPU, "at: tensor is ", describe(*this), "; copy it to the cpu first");
  int64_t off = element_offset(*this, index);
  return dtype_ == DType::F32 ? data()[off] : (float)idata()[off];
}

void Tensor::set(const std::vector<int64_t>& index, float value) {
  NL_CHECK(device() == Device::CPU, "set: tensor is ", describe(*this), "; copy it to the cpu first");
  int64_t off = element_offset(*this, index);
  if (dtype_ == DType::F32) data()[off] = value; else idata()[off] = (int32_t)value;
}

float Tensor::item() const {
  NL_CHECK(numel() == 1, "item: tensor ", describe(*this), " has ", numel(), " elements, not 1");
  Tensor c = contiguous().to(Device::CPU);
  return dtype_ == DType::F32 ? c.data()[0] : (float)c.idata()[0];
}

std::vector<float> Tensor::to_vector() const {
  Tensor c = contiguous().to(Device::CPU);
  if (dtype_ == DType::F32) return std::vector<float>(c.data(), c.data() + c.numel());
  return std::vector<float>(c.idata(), c.idata() + c.numel());
}

std::vector<int32_t> Tensor::to_ints() const {
  Tensor c = contiguous().to(Device::CPU);
  return std::vector<int32_t>(c.idata(), c.idata() + c.numel());
}

// ---------------------------------------------------------------- views

// Resolves one -1 in a requested shape and checks the element count.
static Shape infer_shape(const Shape& requested, int64_t numel, const Shape& from) {
  Shape s = requested;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      NL_CHECK(infer < 0, "reshape: more than one -1 in ", nl::to_string(requested));
      infer = (int)i;
    } else {
      NL_CHECK(s[i] >= 0, "reshape: negative size in ", nl::to_string(requested));
      known *= s[i];
    }
  }
  if (infer >= 0) {
    NL_CHECK(known > 0 && numel % known == 0, "reshape: cannot reshape ", nl::to_string(from), " into ",
             nl::to_string(requested));
    s[infer] = numel / known;
  }
  NL_CHECK(numel_of(s) == numel, "reshape: cannot reshape ", nl::to_string(from), " (", numel,
           " elements) into ", nl::to_string(requested));
  return s;
}

// Strides for viewing `t` as `shape` without a copy, or empty when impossible: each
// run of new dims must map onto a run of old dims that is itself contiguous in memory.
static bool view_strides(const Tensor& t, const Shape& shape, Shape& out) {
  const Shape& os = t.shape();
  const Shape& ost = t.strides();
  out.assign(shape.size(), 0);
  if (t.numel() == 0) { out = contiguous_strides(shape); return true; }
  int oi = 0, ni = 0;
  const int on = (int)os.size(), nn = (int)shape.size();
  while (oi < on || ni < nn) {
    // skip size-1 dims on either side
    if (ni < nn && shape[ni] == 1) { out[ni] = 1; ++ni; continue; }
    if (oi < on && os[oi] == 1) { ++oi; continue; }
    if (oi >= on || ni >= nn) return false;
    // gather a chunk of old dims and new dims with equal products
    int64_t op = os[oi], np = shape[ni];
    int o_end = oi + 1, n_end = ni + 1;
    while (op != np) {
      if (op < np) { if (o_end >= on) return false; op *= os[o_end++]; }
      else { if (n_end >= nn) return false; np *= shape[n_end++]; }
    }
    // the old chunk must be contiguous among its non-1 dims
    int64_t inner_stride = 0;
    bool have = false;
    for (int k = o_end - 1; k >= oi; --k) {
      if (os[k] == 1) continue;
      if (have && ost[k] != inner_stride) return false;
      inner_stride = ost[k] * os[k];
      have = true;
    }
    int64_t base = 0;
    for (int k = o_end - 1; k >= oi; --k) if (os[k] != 1) { base = ost[k]; break; }
    // base is the stride of the innermost non-1 old dim of the chunk
    int64_t s = base;
    for (int k = n_end - 1; k >= ni; --k) { out[k] = s; s *= shape[k]; }
    oi = o_end;
    ni = n_end;
  }
  return true;
}

Tensor Tensor::view(const Shape& shape) const {
  Shape s = infer_shape(shape, numel(), shape_);
  Shape st;
  NL_CHECK(view_strides(*this, s, st), "view: cannot view ", describe(*this), " as ", nl::to_string(s),
           " without a copy (use reshape)");
  return Tensor(storage_, s, st, offset_, dtype_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape s = infer_shape(shape, numel(), shape_);
  Shape st;
  if (view_strides(*this, s, st)) return Tensor(storage_, s, st, offset_, dtype_);
  Tensor c = contiguous();
  return Tensor(c.storage_, s, contiguous_strides(s), c.offset_, dtype_);
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  int ia = normalize_axis(a, shape_, "transpose"), ib = normalize_axis(b, shape_, "transpose");
  Shape s = shape_, st = strides_;
  std::swap(s[ia], s[ib]);
  std::swap(st[ia], st[ib]);
  return Tensor(storage_, s, st, offset_, dtype_);
}

Tensor Tensor::permute(const std::vector<int64_t>& order) const {
  NL_CHECK((int)order.size() == dim(), "permute: order of ", order.size(), " axes for ", describe(*this));
  std::vector<bool> seen(dim(), false);
  Shape s(dim()), st(dim());
  for (int i = 0; i < dim(); ++i) {
    int a = normalize_axis(order[i], shape_, "permute");
    NL_CHECK(!seen[a], "permute: axis ", a, " repeated for ", describe(*this));
    seen[a] = true;
    s[i] = shape_[a];
    st[i] = strides_[a];
  }
  return Tensor(storage_, s, st, offset_, dtype_);
}

Tensor Tensor::slice(int64_t axis, int64_t start, int64_t end, int64_t step) const {
  int a = normalize_axis(axis, shape_, "slice");
  NL_CHECK(step > 0, "slice: step must be positive, got ", step, " for ", describe(*this));
  int64_t n = shape_[a];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape s = shape_, st = strides_;
  s[a] = (end - start + step - 1) / step;
  st[a] = strides_[a] * step;
  return Tensor(storage_, s, st, offset_ + start * strides_[a], dtype_);
}

Tensor Tensor::squeeze(int64_t axis) const {
  int a = normalize_axis(axis, shape_, "squeeze");
  NL_CHECK(shape_[a] == 1, "squeeze: axis ", a, " of ", describe(*this), " is not 1");
  Shape s = shape_, st = strides_;
  s.erase(s.begin() + a);
  st.erase(st.begin() + a);
  return Tensor(storage_, s, st, offset_, dtype_);
}

Tensor Tensor::unsqueeze(int64_t axis) const {
  NL_CHECK(axis >= -(dim() + 1) && axis <= dim(), "unsqueeze: axis ", axis, " out of range for shape ",
           nl::to_string(shape_));
  int a = (int)(axis < 0 ? axis + dim() + 1 : axis);
  Shape s = shape_, st = strides_;
  int64_t stride = a < dim() ? strides_[a] * shape_[a] : 1;
  s.insert(s.begin() + a, 1);
  st.insert(st.begin() + a, stride);
  return Tensor(storage_, s, st, offset_, dtype_);
}

Tensor Tensor::expand(const Shape& shape) const {
  NL_CHECK(shape.size() >= shape_.size(), "expand: cannot expand ", describe(*this), " to ", nl::to_string(shape));
  size_t lead = shape.size() - shape_.size();
  Shape st(shape.size(), 0);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i < lead) continue;
    int64_t d = shape_[i - lead];
    NL_CHECK(d == shape[i] || d == 1, "expand: cannot expand ", describe(*this), " to ", nl::to_string(shape));
    st[i] = d == 1 ? 0 : strides_[i - lead];
  }
  return Tensor(storage_, shape, st, offset_, dtype_);
}

// ---------------------------------------------------------------- copies

void Tensor::copy_from(const Tensor& src) {
  NL_CHECK(src.shape() == shape_, "copy_from: shapes ", nl::to_string(src.shape()), " and ", nl::to_string(shape_),
           " differ");
  NL_CHECK(src.dtype() == dtype_, "copy_from: dtypes ", dtype_name(src.dtype()), " and ", dtype_name(dtype_),
           " differ");
  if (src.device() != Device::CPU || device() != Device::CPU) {  // host <-> device or on the GPU
    cuda::copy(*this, src);
    return;
  }
  // int32 and float32 are both 4 bytes: copy as raw 32-bit words
  auto* d = static_cast<uint32_t*>(storage_->data) + offset_;
  auto* s = static_cast<const uint32_t*>(src.storage_->data) + src.offset_;
  if (is_contiguous() && src.is_contiguous()) {
    std::memmove(d, s, (size_t)numel() * 4);  // views of one storage may overlap
    return;
  }
  for_each_run<2>(shape_, {&strides_, &src.strides_}, {0, 0}, [&](const int64_t* off, int64_t n) {
    int64_t ds = dim() ? strides_.back() : 1, ss = dim() ? src.strides_.back() : 1;
    for (int64_t i = 0; i < n; ++i) d[off[0] + i * ds] = s[off[1] + i * ss];
  });
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor out = empty(shape_, dtype_, device());
  out.copy_from(*this);
  return out;
}

void Tensor::fill_(float value) {
  if (device() == Device::CUDA) {
    cuda::fill_(*this, value);
    return;
  }
  if (dtype_ == DType::I32) {
    int32_t v = (int32_t)value;
    for_each_run<1>(shape_, {&strides_}, {0}, [&](const int64_t* off, int64_t n) {
      int64_t s = dim() ? strides_.back() : 1;
      for (int64_t i = 0; i < n; ++i) idata()[off[0] + i * s] = v;
    });
    return;
  }
  float* p = data();
  if (is_contiguous()) { std::fill(p, p + numel(), value); return; }
  for_each_run<1>(shape_, {&strides_}, {0}, [&](const int64_t* off, int64_t n) {
    int64_t s = dim() ? strides_.back() : 1;
    for (int64_t i = 0; i < n; ++i) p[off[0] + i * s] = value;
  });
}

Tensor Tensor::to(Device d) const {
  if (d == device()) return *this;
  NL_CHECK(d == Device::CPU || cuda_available(), "to: cannot copy ", describe(*this),
           " to cuda: this build has no CUDA (make CUDA=1) or no GPU answered");
  Tensor out = empty(shape_, dtype_, d);
  out.copy_from(*this);
  return out;
}

// ---------------------------------------------------------------- printing

std::string Tensor::to_string(int max_per_dim) const {
  if (!defined()) return "tensor(undefined)";
  std::ostringstream os;
  os << "tensor(";
  Tensor c = contiguous().to(Device::CPU);
  std::vector<float> v = c.to_vector();
  std::vector<int64_t> idx(dim(), 0);
  // recursive printing of nested brackets, eliding the middle of long dims
  std::function<void(int, int64_t)> rec = [&](int d, int64_t base) {
    if (d == dim()) { os << std::setprecision(6) << v[base]; return; }
    int64_t n = shape_[d], inner = 1;
    for (int k = d + 1; k < dim(); ++k) inner *= shape_[k];
    os << "[";
    for (int64_t i = 0; i < n; ++i) {
      if (n > max_per_dim && i == max_per_dim / 2) { os << "..., "; i = n - max_per_dim / 2; }
      rec(d + 1, base + i * inner);
      if (i + 1 < n) os << ", ";
    }
    os << "]";
  };
  rec(0, 0);
  os << ", shape=" << nl::to_string(shape_) << ")";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

}  // namespace nl
