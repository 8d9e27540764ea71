#include "tensor/shape.h"

#include "tensor/error.h"

namespace nl {

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (int i = (int)shape.size() - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

std::string to_string(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    NL_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", to_string(a), " and ", to_string(b),
             " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int normalize_axis(int64_t axis, int ndim, const char* op) {
  NL_CHECK(axis >= -ndim && axis < ndim, op, ": axis ", axis, " out of range for a tensor of ",
           ndim, " dims");
  return (int)(axis < 0 ? axis + ndim : axis);
}

int normalize_axis(int64_t axis, const Shape& shape, const char* op) {
  const int ndim = (int)shape.size();
  NL_CHECK(axis >= -ndim && axis < ndim, op, ": axis ", axis, " out of range for shape ", to_string(shape));
  return (int)(axis < 0 ? axis + ndim : axis);
}

}  // namespace nl
