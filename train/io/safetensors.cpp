// safetensors reader and writer. The header's JSON goes through nlohmann-json, held to
// what a safetensors header uses (objects, arrays, strings, integers), so that anything
// else in a checkpoint is reported, never guessed at; the format's own checks (bounds,
// overlaps and holes, dtypes, sizes) are here.
#include "train/io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

namespace nl {

// The format is little-endian and the data is copied byte for byte.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors I/O assumes a little-endian host");

namespace {

template <typename... Parts>
[[noreturn]] void bad_file(const std::string& path, const Parts&... parts) {
  fail("load_safetensors: '", path, "': ", parts...);
}

// serde_json, which Python's safetensors uses, rejects invalid UTF-8, so both sides check it.
bool valid_utf8(const std::string& s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    int extra;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) { extra = 1; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { extra = 2; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { extra = 3; cp = c & 0x07; }
    else return false;  // a stray continuation byte or an invalid lead byte
    if (i + extra >= n) return false;
    for (int k = 1; k <= extra; ++k) {
      unsigned char cc = (unsigned char)s[i + k];
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static const uint32_t min_for_length[4] = {0, 0x80, 0x800, 0x10000};  // shorter forms are overlong
    if (cp < min_for_length[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

// ---------------------------------------------------------------- JSON

using Json = nlohmann::json;

// Parses the header with nlohmann-json, then holds it to what a safetensors header is
// made of (objects, arrays, strings, integers), so that anything else in a checkpoint
// is reported, never guessed at: no fractions, literals or nulls, no key twice in one
// object (the callback sees each key before nlohmann would overwrite it), at most
// kMaxDepth levels (a hostile file stops at the callback before it nests deeper).
constexpr int kMaxDepth = 8;

void check_kinds(const std::string& path, const Json& v) {
  if (v.is_object() || v.is_array()) {
    for (const Json& item : v) check_kinds(path, item);
  } else if (!v.is_string() && !v.is_number_integer()) {
    bad_file(path, "invalid JSON header: ", v.dump(),
             " is not allowed (only objects, arrays, strings and integers below 2^63)");
  } else if (v.is_number_unsigned() && v.get<uint64_t>() > (uint64_t)std::numeric_limits<int64_t>::max()) {
    bad_file(path, "invalid JSON header: integer ", v.dump(), " does not fit in 64 bits");
  }
}

Json parse_header(const std::string& text, const std::string& path) {
  std::vector<std::set<std::string>> keys;  // per open object
  const Json::parser_callback_t strict = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (depth > kMaxDepth) bad_file(path, "invalid JSON header: nested deeper than ", kMaxDepth, " levels");
    if (event == Json::parse_event_t::object_start) keys.emplace_back();
    if (event == Json::parse_event_t::object_end) keys.pop_back();
    if (event == Json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second)
      bad_file(path, "invalid JSON header: duplicate name \"", parsed.get<std::string>(), "\"");
    return true;
  };
  Json doc;
  try {
    doc = Json::parse(text, strict);
  } catch (const Json::exception& e) {
    bad_file(path, "invalid JSON header: ", e.what());
  }
  check_kinds(path, doc);
  return doc;
}

const char* kind_name(const Json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_string()) return "a string";
  return "an integer";
}

// ---------------------------------------------------------------- header entries

enum class FileDType { F32, I32, I64, F16, BF16 };

struct Entry {
  std::string name;
  FileDType dtype;
  Shape shape;
  int64_t begin, end;
};

int64_t itemsize(FileDType d) {
  return d == FileDType::I64 ? 8 : d == FileDType::F16 || d == FileDType::BF16 ? 2 : 4;
}
const char* file_dtype_name(FileDType d) {
  switch (d) {
    case FileDType::F32: return "F32";
    case FileDType::I32: return "I32";
    case FileDType::I64: return "I64";
    case FileDType::F16: return "F16";
    case FileDType::BF16: return "BF16";
  }
  return "?";
}

// IEEE 754 binary16 -> binary32: sign, 5-bit exponent (bias 15), 10-bit fraction.
// Subnormals (exponent 0) are fraction * 2^-24; exponent 31 is infinity or NaN.
float half_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 0x1F, fraction = h & 0x3FF;
  if (exponent == 0) {
    const float magnitude = std::ldexp((float)fraction, -24);
    return sign ? -magnitude : magnitude;
  }
  const uint32_t bits = exponent == 31 ? sign | 0x7F800000u | (fraction << 13)
                                       : sign | ((exponent - 15 + 127) << 23) | (fraction << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// bfloat16 is the top half of a binary32.
float bfloat16_to_float(uint16_t b) {
  const uint32_t bits = (uint32_t)b << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Checks every field of one tensor's header entry against the data size.
Entry parse_entry(const std::string& path, const std::string& name, const Json& v, int64_t data_size,
                  HalfFloats half) {
  if (!v.is_object()) bad_file(path, "entry of tensor '", name, "' is ", kind_name(v), ", not an object");
  for (const auto& [key, value] : v.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      bad_file(path, "unknown field \"", key, "\" in the entry of tensor '", name, "'");
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!v.contains(field)) bad_file(path, "tensor '", name, "' lacks \"", field, "\"");
  const Json &dtype = v["dtype"], &shape = v["shape"], &offsets = v["data_offsets"];

  Entry e;
  e.name = name;
  if (!dtype.is_string()) bad_file(path, "dtype of tensor '", name, "' is not a string");
  const std::string d = dtype.get<std::string>();
  if (d == "F32") e.dtype = FileDType::F32;
  else if (d == "I32") e.dtype = FileDType::I32;
  else if (d == "I64") e.dtype = FileDType::I64;
  else if (d == "F16" && half == HalfFloats::ToF32) e.dtype = FileDType::F16;
  else if (d == "BF16" && half == HalfFloats::ToF32) e.dtype = FileDType::BF16;
  else
    bad_file(path, "unsupported dtype \"", d, "\" of tensor '", name, "' (normlab reads F32, I32 and I64",
             half == HalfFloats::ToF32 ? ", and F16 and BF16 as F32)" : ")");

  if (!shape.is_array()) bad_file(path, "shape of tensor '", name, "' is not an array");
  for (const Json& dim : shape) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0)
      bad_file(path, "shape of tensor '", name, "' holds something other than a non-negative integer");
    e.shape.push_back(dim.get<int64_t>());
  }

  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_integer() || !offsets[1].is_number_integer())
    bad_file(path, "data_offsets of tensor '", name, "' is not a pair of integers");
  e.begin = offsets[0].get<int64_t>();
  e.end = offsets[1].get<int64_t>();
  if (e.begin < 0 || e.end < e.begin)
    bad_file(path, "data_offsets [", e.begin, ", ", e.end, "] of tensor '", name, "' are not an ascending pair >= 0");
  if (e.end > data_size)
    bad_file(path, "data_offsets [", e.begin, ", ", e.end, "] of tensor '", name, "' run past the end of the data (",
             data_size, " bytes)");

  // A hostile shape must not overflow into a product that happens to match the
  // offsets; -1 marks a byte count beyond int64.
  int64_t bytes = itemsize(e.dtype);
  if (std::count(e.shape.begin(), e.shape.end(), 0) > 0) bytes = 0;
  for (int64_t d : e.shape) {
    if (bytes == 0) break;
    if (bytes > std::numeric_limits<int64_t>::max() / d) { bytes = -1; break; }
    bytes *= d;
  }
  if (bytes != e.end - e.begin)
    bad_file(path, "shape ", to_string(e.shape), " and dtype ", file_dtype_name(e.dtype), " of tensor '", name,
             "' need ", bytes < 0 ? std::string("over 2^63") : std::to_string(bytes),
             " bytes but data_offsets [", e.begin, ", ", e.end, "] hold ", e.end - e.begin);
  return e;
}

// The data must be exactly tiled by the tensors: no overlaps (one byte read as two
// tensors) and no holes (bytes a writer meant for something that is missing).
void check_tiling(const std::string& path, std::vector<Entry>& entries, int64_t data_size) {
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  int64_t covered = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.begin < covered)
      bad_file(path, "data_offsets of tensors '", entries[i - 1].name, "' and '", e.name, "' overlap");
    if (e.begin > covered)
      bad_file(path, "data bytes [", covered, ", ", e.begin, ") belong to no tensor (offsets do not cover the data)");
    covered = e.end;
  }
  if (covered != data_size)
    bad_file(path, "data bytes [", covered, ", ", data_size, ") belong to no tensor (offsets do not cover the data)");
}

// Closes the file on every path out of load_safetensors.
struct FileCloser {
  FILE* f;
  ~FileCloser() { if (f) std::fclose(f); }
};

void read_exact(FILE* f, void* dst, size_t n, const std::string& path, const char* what) {
  if (n > 0 && std::fread(dst, 1, n, f) != n) bad_file(path, "could not read ", what, " (", n, " bytes)");
}

// ---------------------------------------------------------------- writing helpers

void write_exact(FILE* f, const void* src, size_t n, const std::string& tmp) {
  if (n > 0 && std::fwrite(src, 1, n, f) != n)
    fail("save_safetensors: writing '", tmp, "' failed: ", std::strerror(errno));
}

}  // namespace

// ---------------------------------------------------------------- load

SafetensorsFile load_safetensors(const std::string& path, HalfFloats half) {
  // opened without blocking and checked before any read: a FIFO in the checkpoint's
  // place must not hang the program
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) bad_file(path, "file does not exist");
    bad_file(path, "cannot open: ", std::strerror(err));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    bad_file(path, "not a regular file");
  }
  FileCloser file{fdopen(fd, "rb")};
  if (!file.f) {
    ::close(fd);
    bad_file(path, "cannot open: ", std::strerror(errno));
  }
  const int64_t file_size = (int64_t)st.st_size;
  if (file_size < 8) bad_file(path, "file is ", file_size, " bytes, shorter than the 8-byte header length");

  unsigned char len_bytes[8];
  read_exact(file.f, len_bytes, 8, path, "the header length");
  uint64_t header_len = 0;
  for (int k = 7; k >= 0; --k) header_len = (header_len << 8) | len_bytes[k];
  if (header_len > (uint64_t)(file_size - 8))
    bad_file(path, "header length ", header_len, " is larger than the file (", file_size - 8,
             " bytes after the length field)");

  std::string header(header_len, '\0');
  read_exact(file.f, header.data(), header.size(), path, "the header");
  const int64_t data_size = file_size - 8 - (int64_t)header_len;

  const Json doc = parse_header(header, path);
  if (!doc.is_object()) bad_file(path, "header is ", kind_name(doc), ", not a JSON object");

  SafetensorsFile out;
  std::vector<Entry> entries;
  for (const auto& [key, v] : doc.items()) {
    if (key != "__metadata__") {
      entries.push_back(parse_entry(path, key, v, data_size, half));
      continue;
    }
    if (!v.is_object()) bad_file(path, "__metadata__ is ", kind_name(v), ", not an object");
    for (const auto& [k, value] : v.items()) {
      if (!value.is_string())
        bad_file(path, "__metadata__ value of \"", k, "\" is ", kind_name(value), ", not a string");
      out.metadata[k] = value.get<std::string>();
    }
  }
  check_tiling(path, entries, data_size);

  // Tiled and sorted, so the data reads front to back straight into each tensor.
  for (const Entry& e : entries) {
    const int64_t n = numel_of(e.shape);
    const std::string what = "the data of tensor '" + e.name + "'";
    if (e.dtype == FileDType::F32) {
      Tensor t = Tensor::empty(e.shape, DType::F32);
      read_exact(file.f, t.data(), (size_t)n * 4, path, what.c_str());
      out.tensors[e.name] = t;
    } else if (e.dtype == FileDType::F16 || e.dtype == FileDType::BF16) {
      std::vector<uint16_t> narrow((size_t)n);
      read_exact(file.f, narrow.data(), (size_t)n * 2, path, what.c_str());
      Tensor t = Tensor::empty(e.shape, DType::F32);
      float* p = t.data();
      for (int64_t k = 0; k < n; ++k)
        p[k] = e.dtype == FileDType::F16 ? half_to_float(narrow[k]) : bfloat16_to_float(narrow[k]);
      out.tensors[e.name] = t;
    } else if (e.dtype == FileDType::I32) {
      Tensor t = Tensor::empty(e.shape, DType::I32);
      read_exact(file.f, t.idata(), (size_t)n * 4, path, what.c_str());
      out.tensors[e.name] = t;
    } else {
      std::vector<int64_t> wide((size_t)n);
      read_exact(file.f, wide.data(), (size_t)n * 8, path, what.c_str());
      Tensor t = Tensor::empty(e.shape, DType::I32);
      int32_t* p = t.idata();
      for (int64_t k = 0; k < n; ++k) {
        if (wide[k] < std::numeric_limits<int32_t>::min() || wide[k] > std::numeric_limits<int32_t>::max())
          bad_file(path, "I64 value ", wide[k], " of tensor '", e.name, "' does not fit in int32");
        p[k] = (int32_t)wide[k];
      }
      out.tensors[e.name] = t;
    }
  }
  return out;
}

// ---------------------------------------------------------------- save

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  // Everything that can be wrong with the arguments is checked before the temp file exists.
  std::vector<Tensor> cpu;
  // in insertion order: the metadata, then the tensors in name order, as the data follows
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) {
      NL_CHECK(valid_utf8(k) && valid_utf8(v), "save_safetensors: '", path, "': metadata \"", k,
               "\" is not valid UTF-8");
      meta[k] = v;
    }
    doc["__metadata__"] = meta;
  }
  int64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    NL_CHECK(name != "__metadata__", "save_safetensors: '", path, "': \"__metadata__\" cannot name a tensor");
    NL_CHECK(valid_utf8(name), "save_safetensors: '", path, "': tensor name \"", name, "\" is not valid UTF-8");
    NL_CHECK(t.defined(), "save_safetensors: '", path, "': tensor '", name, "' is undefined");
    cpu.push_back(t.contiguous().to(Device::CPU));
    const int64_t bytes = t.numel() * 4;
    std::vector<int64_t> shape;
    for (int i = 0; i < t.dim(); ++i) shape.push_back(t.size(i));
    doc[name] = {{"dtype", t.dtype() == DType::F32 ? "F32" : "I32"},
                 {"shape", shape},
                 {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string header = doc.dump();
  // Padding keeps the data 8-byte aligned for readers that map the file into memory.
  header.append((8 - header.size() % 8) % 8, ' ');

  unsigned char len_bytes[8];
  for (int k = 0; k < 8; ++k) len_bytes[k] = (unsigned char)((uint64_t)header.size() >> (8 * k));

  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail("save_safetensors: cannot create '", tmp, "': ", std::strerror(errno));
  try {
    write_exact(f, len_bytes, 8, tmp);
    write_exact(f, header.data(), header.size(), tmp);
    for (const Tensor& t : cpu) {
      const void* p = t.dtype() == DType::F32 ? (const void*)t.data() : (const void*)t.idata();
      write_exact(f, p, (size_t)t.numel() * 4, tmp);
    }
    // fsync before rename: otherwise a crash can leave the new name on a file whose
    // blocks never reached the disk.
    if (std::fflush(f) != 0 || fsync(fileno(f)) != 0)
      fail("save_safetensors: flushing '", tmp, "' to disk failed: ", std::strerror(errno));
    FILE* closing = f;
    f = nullptr;
    if (std::fclose(closing) != 0) fail("save_safetensors: closing '", tmp, "' failed: ", std::strerror(errno));
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      fail("save_safetensors: renaming '", tmp, "' to '", path, "' failed: ", std::strerror(errno));
  } catch (...) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }

  // The rename itself is durable only once the directory is synced. The new file is
  // already complete and in place, so a filesystem that cannot sync directories is
  // not an error.
  std::string dir = std::filesystem::path(path).parent_path().string();
  int dfd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
}

}  // namespace nl
