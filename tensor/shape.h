// Shapes and strides: small vectors of int64 with the helpers every op needs.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace nl {

using Shape = std::vector<int64_t>;

int64_t numel_of(const Shape& shape);
Shape contiguous_strides(const Shape& shape);
std::string to_string(const Shape& shape);          // "(2, 3)"
// NumPy broadcasting: align trailing dims; each pair equal or one of them 1.
// Throws naming `op` and both shapes when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Normalises a possibly negative axis into [0, ndim); throws naming `op` when out of range.
int normalize_axis(int64_t axis, int ndim, const char* op);
// The same for an axis of a tensor of `shape`, whose shape the error message names.
int normalize_axis(int64_t axis, const Shape& shape, const char* op);

}  // namespace nl

namespace std {
inline ostream& operator<<(ostream& os, const nl::Shape& s) { return os << nl::to_string(s); }
}  // namespace std
